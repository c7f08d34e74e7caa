#!/usr/bin/env bash
# The command line itself: help and version on every spelling users try,
# and `fabsim info` failing when the simulated NIC refuses the settings.
set -euo pipefail
fabsim="$TEST_SRCDIR/fabsim/tools/fabsim"
fail() { echo "FAIL: $*"; exit 1; }

for help in help --help -h; do
	out=$("$fabsim" $help) || fail "fabsim $help: exit $?"
	grep -q "^usage: fabsim COMMAND" <<<"$out" || fail "fabsim $help: $out"
done
rc=0; "$fabsim" >/dev/null 2>&1 || rc=$?
[ "$rc" = 2 ] || fail "fabsim with no command: exit $rc, expected 2"
out=$("$fabsim" --version) || fail "fabsim --version: exit $?"
grep -q "libfabric API 1\.17" <<<"$out" || fail "fabsim --version: $out"
for cmd in demo info run fabric model trace; do
	out=$("$fabsim" $cmd --help 2>&1) || fail "fabsim $cmd --help: exit $?"
	grep -q "usage: fabsim $cmd\|usage: fabsim run\|fabsim $cmd" <<<"$out" ||
		fail "fabsim $cmd --help: $out"
done
rc=0; "$fabsim" demo extra >/dev/null 2>&1 || rc=$?
[ "$rc" = 2 ] || fail "fabsim demo extra: exit $rc, expected 2"

out=$("$fabsim" info 2>&1) || fail "fabsim info: exit $?: $out"
grep -q "^  sim " <<<"$out" || fail "fabsim info lists no sim: $out"
rc=0; out=$(FI_SIM_MR_STRICT=maybe "$fabsim" info 2>&1) || rc=$?
[ "$rc" = 1 ] || fail "fabsim info with a refused setting: exit $rc, expected 1"
grep -qF 'FI_SIM_MR_STRICT="maybe"' <<<"$out" || fail "no reason given: $out"
grep -q "the sim provider refuses these settings" <<<"$out" || fail "$out"
echo PASS
