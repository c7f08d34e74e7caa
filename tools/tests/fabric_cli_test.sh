#!/usr/bin/env bash
# `fabsim fabric start|status|stop`: a persistent coordinator is started,
# reported, found running a second time, stopped; errors are clear.
set -euo pipefail
fabsim="$TEST_SRCDIR/fabsim/tools/fabsim"
export FABSIM_RUNTIME_DIR="$TEST_TMPDIR/fabric-run"
unset FI_SIM_FABRIC
# Shared-memory names are per user and fabric, not per runtime directory:
# names of our own, so that a parallel run is not disturbed.
name="clitest-$RANDOM$RANDOM"
other="envtest-$RANDOM$RANDOM"
trap '"$fabsim" fabric stop "$name" >/dev/null 2>&1 || true
      "$fabsim" fabric stop "$other" >/dev/null 2>&1 || true' EXIT

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

expect 1 "no fabric $name is running" fabric status $name
expect 0 "fabric $name started: coordinator pid" fabric start $name
pid=$("$fabsim" fabric status $name | sed -n 's/.*coordinator pid \([0-9]*\).*/\1/p')
[ -n "$pid" ] || fail "no coordinator pid in the status"
kill -0 "$pid" || fail "coordinator $pid is not running"
expect 0 "fabric $name: coordinator pid $pid, persistent" fabric status $name
expect 0 "0 members" fabric status $name
expect 0 "fabric $name is already running (coordinator pid $pid)" \
	fabric start $name
[ -S "$FABSIM_RUNTIME_DIR/$name.sock" ] || fail "no socket file"
expect 0 "fabric $name stopped: coordinator pid $pid ended" fabric stop $name
[ ! -e "$FABSIM_RUNTIME_DIR/$name.sock" ] || fail "socket left behind"
grep -qF "start: fabric $name, persistent" "$FABSIM_RUNTIME_DIR/$name.log" ||
	fail "no start line in the log"
expect 1 "no fabric $name is running" fabric stop $name
expect 1 "no fabric $name is running" fabric status $name

# The name defaults to $FI_SIM_FABRIC, else "default" (only asked about:
# stopping a real "default" would remove its shared memory).
expect 1 "no fabric default is running" fabric status
export FI_SIM_FABRIC="$other"
expect 0 "fabric $other started" fabric start
expect 0 "fabric $other: coordinator pid" fabric status
expect 0 "fabric $other stopped" fabric stop
unset FI_SIM_FABRIC

# Started by a program under --virtual-clock (it forks the coordinator,
# clock library and all), the coordinator still keeps real time.
# (Under AddressSanitizer the clock library comes before its runtime.)
vc="vctest-$RANDOM$RANDOM"
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" \
	"$fabsim" run --virtual-clock -- "$fabsim" fabric start "$vc" >/dev/null
sleep 1.2
status=$("$fabsim" fabric status "$vc")
"$fabsim" fabric stop "$vc" >/dev/null
echo "$status"
up=$(sed -n 's/.*, up \([0-9.]*\) s,.*/\1/p' <<<"$status")
awk -v up="$up" 'BEGIN { exit !(up >= 1.0) }' ||
	fail "a coordinator started under --virtual-clock says up $up s"

# Bad input.
expect 2 "fabric name \"no/slash\"" fabric status no/slash
expect 2 "unknown action \"restart\"" fabric restart $name
expect 2 "usage: fabsim fabric" fabric
chmod 755 "$FABSIM_RUNTIME_DIR"
expect 1 "must be 0700" fabric start $name
chmod 700 "$FABSIM_RUNTIME_DIR"
echo PASS
