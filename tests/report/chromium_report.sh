#!/bin/sh
# The HTML report in a real browser (issue 20): a short lab run writes its JSON results and its
# --report page; headless Chromium runs the page (its console must stay silent: any message,
# an uncaught error included, fails) and dumps the DOM it built; report_check compares the
# plots' data in that DOM with the JSON results of the same run.
# The same check then runs on the page `qpo report` renders again from the saved JSON.
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
# Runs PAGE in headless Chromium into DOM; fails on a console message or no DOM.
# No network: every host name resolves to nothing (the page's policy forbids loads anyway).
browse() {
  timeout 120 "$browser" --headless --disable-gpu --no-sandbox --no-first-run --user-data-dir="$out/profile" \
    --host-resolver-rules="MAP * ~NOTFOUND" --enable-logging=stderr --v=0 \
    --dump-dom "file://$1" > "$2" 2> "$2.log"
  rc=$?
  if [ $rc -ne 0 ] || [ ! -s "$2" ]; then
    echo "chromium_report: chromium exited $rc without a DOM of $1; its log:" >&2
    cat "$2.log" >&2
    exit 1
  fi
  if grep -q ':CONSOLE' "$2.log"; then
    echo "chromium_report: $1 wrote to the console:" >&2
    grep ':CONSOLE' "$2.log" >&2
    exit 1
  fi
}
browse "$out/report.html" "$out/dom.html"
"$check" "$out/dom.html" "$out/results.json" || exit 1
"$qpo" report "$out/results.json" -o "$out/rerendered.html" || { echo "chromium_report: qpo report failed" >&2; exit 1; }
browse "$out/rerendered.html" "$out/rerendered-dom.html"
exec "$check" "$out/rerendered-dom.html" "$out/results.json"
