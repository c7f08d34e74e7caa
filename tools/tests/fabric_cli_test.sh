#!/usr/bin/env bash
# `fabsim fabric start|status|stop`: a persistent coordinator is started,
# reported, found running a second time, stopped; errors are clear.
set -euo pipefail
fabsim="$TEST_SRCDIR/fabsim/tools/fabsim"
export FABSIM_RUNTIME_DIR="$TEST_TMPDIR/fabric-run"
unset FI_SIM_FABRIC
trap '"$fabsim" fabric stop clitest >/dev/null 2>&1 || true
      "$fabsim" fabric stop >/dev/null 2>&1 || true' EXIT

fail() { echo "FAIL: $*"; exit 1; }
# expect STATUS TEXT COMMAND...: the exit status and a line of the output.
expect() {
	local want=$1 text=$2 out rc=0
	shift 2
	out=$("$fabsim" "$@" 2>&1) || rc=$?
	echo "\$ fabsim $* -> $rc"
	echo "$out"
	[ "$rc" = "$want" ] || fail "fabsim $*: exit $rc, expected $want"
	grep -qF -- "$text" <<<"$out" || fail "fabsim $*: missing: $text"
}

expect 1 "no fabric clitest is running" fabric status clitest
expect 0 "fabric clitest started: coordinator pid" fabric start clitest
pid=$("$fabsim" fabric status clitest | sed -n 's/.*coordinator pid \([0-9]*\).*/\1/p')
[ -n "$pid" ] || fail "no coordinator pid in the status"
kill -0 "$pid" || fail "coordinator $pid is not running"
expect 0 "fabric clitest: coordinator pid $pid, persistent" fabric status clitest
expect 0 "0 members" fabric status clitest
expect 0 "fabric clitest is already running (coordinator pid $pid)" \
	fabric start clitest
[ -S "$FABSIM_RUNTIME_DIR/clitest.sock" ] || fail "no socket file"
expect 0 "fabric clitest stopped: coordinator pid $pid ended" fabric stop clitest
[ ! -e "$FABSIM_RUNTIME_DIR/clitest.sock" ] || fail "socket left behind"
grep -qF "start: fabric clitest, persistent" "$FABSIM_RUNTIME_DIR/clitest.log" ||
	fail "no start line in the log"
expect 1 "no fabric clitest is running" fabric stop clitest
expect 1 "no fabric clitest is running" fabric status clitest

# The name defaults to $FI_SIM_FABRIC, else "default".
expect 0 "fabric default started" fabric start
FI_SIM_FABRIC=default expect 0 "fabric default: coordinator pid" fabric status
expect 0 "fabric default stopped" fabric stop

# Bad input.
expect 2 "fabric name \"no/slash\"" fabric status no/slash
expect 2 "unknown action \"restart\"" fabric restart clitest
expect 2 "usage: fabsim fabric" fabric
chmod 755 "$FABSIM_RUNTIME_DIR"
expect 1 "must be 0700" fabric start clitest
chmod 700 "$FABSIM_RUNTIME_DIR"
echo PASS
