#!/bin/sh
# The HTML report in a real browser (issue 20): a short lab run writes its JSON results and its
# --report page; headless Chromium runs the page (its console must stay silent: any message,
# an uncaught error included, fails) and dumps the DOM it built; report_check compares the
# plots' data in that DOM with the JSON results of the same run.
# Usage: chromium_report.sh QPO REPORT_CHECK OUT_DIR
set -u
qpo=$1 check=$2 out=$3
here=$(dirname "$0")
browser=$(command -v chromium || true)
if [ -z "$browser" ]; then
  echo "chromium_report: chromium is not installed (scripts/setup installs it)" >&2
  exit 1
fi
rm -rf "$out" && mkdir -p "$out" || exit 1
"$qpo" run --format json --report "$out/report.html" "$here/report-lab.yaml" > "$out/results.json"
rc=$?
if [ $rc -ne 0 ]; then
  echo "chromium_report: qpo run exited $rc" >&2
  exit 1
fi
[ -s "$out/report.html" ] || { echo "chromium_report: qpo run wrote no $out/report.html" >&2; exit 1; }
# No network: every host name resolves to nothing (the page's policy forbids loads anyway).
timeout 120 "$browser" --headless --disable-gpu --no-sandbox --no-first-run --user-data-dir="$out/profile" \
  --host-resolver-rules="MAP * ~NOTFOUND" --enable-logging=stderr --v=0 \
  --dump-dom "file://$out/report.html" > "$out/dom.html" 2> "$out/chromium.log"
rc=$?
if [ $rc -ne 0 ] || [ ! -s "$out/dom.html" ]; then
  echo "chromium_report: chromium exited $rc without a DOM; its log:" >&2
  cat "$out/chromium.log" >&2
  exit 1
fi
if grep -q ':CONSOLE' "$out/chromium.log"; then
  echo "chromium_report: the page wrote to the console:" >&2
  grep ':CONSOLE' "$out/chromium.log" >&2
  exit 1
fi
exec "$check" "$out/dom.html" "$out/results.json"
