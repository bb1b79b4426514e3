#!/usr/bin/env bash
# The .deb, as a user gets it: built by cpack from BUILD, lintian-clean of errors, unpacked into
# an empty root (dpkg -x) and run from there with the checkout's lab hidden (a mount namespace
# puts an empty tmpfs over SRC/scripts/lab), so qpo must find everything it needs under the
# root: validate and plan an installed example, run it in the lab it boots from
# ROOT/usr/share/qpo/lab. Then every man page renders and the completion completes.
#
#   package.sh BUILD SRC
set -euo pipefail
build=$1 src=$2
work=$(mktemp -d /tmp/qpo-package.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "package: FAIL: $*" >&2; exit 1; }

echo "== cpack"
cpack --config "$build/CPackConfig.cmake" -B "$work/pkg" >"$work/cpack.log" 2>&1 || { cat "$work/cpack.log"; fail "cpack"; }
deb=$(ls "$work"/pkg/qpo_*.deb)
control=$(dpkg-deb -I "$deb")
sed -n '/Depends:/p;/Recommends:/p' <<<"$control"
grep -q 'Depends:.*libibverbs1' <<<"$control" || fail "Depends lacks libibverbs1 (dpkg-shlibdeps)"
grep -q 'Depends:.*ibverbs-providers' <<<"$control" || fail "Depends lacks ibverbs-providers"

echo "== lintian"
lintian --fail-on error "$deb" 2>&1 | grep -v 'running with root privileges' || true
lintian --fail-on error "$deb" >/dev/null 2>&1 || fail "lintian reports errors"

echo "== dpkg -x into an empty root"
root=$work/root
dpkg -x "$deb" "$root"
qpo=$root/usr/bin/qpo
example=$root/usr/share/qpo/scenarios/rc-write-pair.yaml
[ -x "$qpo" ] || fail "no usr/bin/qpo in the package"
[ -f "$example" ] || fail "no example scenarios in the package"

# Everything below runs with the checkout's lab hidden.
unshare -m bash -s "$src" "$qpo" "$example" "$work" <<'INNER'
set -euo pipefail
src=$1 qpo=$2 example=$3 work=$4
fail() { echo "package: FAIL: $*" >&2; exit 1; }
unset QPO_LAB_SCRIPT  # it would name the lab to use, and prove nothing
mount -t tmpfs none "$src/scripts/lab"
[ -z "$(ls "$src/scripts/lab")" ] || fail "the checkout's lab is still visible"
cd "$work"
echo "== qpo validate (installed)"
"$qpo" validate "$example" | tee "$work/validate.out"
grep -q ': valid$' "$work/validate.out" || fail "validate did not say valid"
echo "== qpo plan (installed)"
"$qpo" plan "$example" > "$work/plan.out"
head -1 "$work/plan.out"
grep -q '^plan for rc-write-pair' "$work/plan.out" || fail "plan did not print the plan"
echo "== qpo run (installed, its own lab)"
"$qpo" run --lab "$example" > "$work/run.out" 2>&1 || { cat "$work/run.out"; fail "run failed"; }
tail -1 "$work/run.out"
grep -q '^PASS rc-write-pair' "$work/run.out" || fail "run did not pass"
INNER

echo "== man pages"
pages=("$root"/usr/share/man/man1/*.1.gz)
[ "${#pages[@]}" -ge 10 ] || fail "only ${#pages[@]} man pages"
for page in "${pages[@]}"; do
  name=$(basename "$page" .1.gz)
  out=$(MANWIDTH=80 man -l -P cat "$page" 2>"$work/man.err") || fail "man -l $name failed"
  [ ! -s "$work/man.err" ] || { cat "$work/man.err"; fail "man -l $name warned"; }
  grep -q "^NAME" <<<"$out" || fail "$name has no NAME section"
  grep -q "^SYNOPSIS" <<<"$out" || fail "$name has no SYNOPSIS section"
done
echo "${#pages[@]} pages render: $(for p in "${pages[@]}"; do basename "$p" .1.gz; done | tr '\n' ' ')"
MANWIDTH=80 man -l -P cat "$root/usr/share/man/man1/qpo-run.1.gz" 2>/dev/null | grep -q -- '--phase-timeout' ||
  fail "qpo-run(1) lacks an option qpo run --help lists"

echo "== bash completion"
completion=$root/usr/share/bash-completion/completions/qpo
complete_words() {  # complete_words WORD... : what TAB offers for the last word
  bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _qpo; echo "${COMPREPLY[*]}"' _ "$completion" "$@"
}
got=$(complete_words qpo r)
echo "qpo r<TAB>: $got"
[ "$got" = "rules run report" ] || fail "qpo r<TAB> offered '$got'"
got=$(complete_words qpo rules s)
[ "$got" = "show" ] || fail "qpo rules s<TAB> offered '$got'"
got=$(complete_words qpo run --no-s)
[ "$got" = "--no-smoke" ] || fail "qpo run --no-s<TAB> offered '$got'"
got=$(cd "$root/usr/share/qpo" && complete_words qpo run scenarios/rc-write-p)
[ "$got" = "scenarios/rc-write-pair.yaml" ] || fail "a scenario path completed to '$got'"
echo "PASS package"
