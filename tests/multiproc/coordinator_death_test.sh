#!/usr/bin/env bash
# The fabric's coordinator (fabsimd) killed while processes run on the
# fabric: they go on, and the next process to join starts a new
# coordinator that lists them too (the newcomer tells it of the processes
# it finds in the fabric's memory), stays while they run, and removes the
# fabric's shared memory when the last of them has ended. With no
# newcomer, the last process to leave removes it itself. A run killed
# outright whose runtime directory is then deleted: the next coordinator to
# start anywhere removes its memory.
set -euo pipefail
peer="$TEST_SRCDIR/fabsim/tests/multiproc/msg_peer"
fabsim="$TEST_SRCDIR/fabsim/tools/fabsim"
cd "$TEST_TMPDIR"
. "$TEST_SRCDIR/fabsim/tests/multiproc/shell_util.sh"
sanitizer_env "$peer"
# Only programs of ours use the fabric here, and an instrumented build
# carries its own sanitizer runtime: no preload, which would reach awk too.
unset LD_PRELOAD
export FABSIM_RUNTIME_DIR="$TEST_TMPDIR/run" FI_PROVIDER=sim
# Unique: pids repeat across sandboxes, and /dev/shm is shared.
fabric="cd$$x$RANDOM$RANDOM"
export FI_SIM_FABRIC="$fabric"
pids=()
cleanup() { kill -9 "${pids[@]}" 2>/dev/null || true; }
trap cleanup EXIT

# connected_pair TAG: a server (node 0) and a holder (node 1) connected on
# $FI_SIM_FABRIC; sets spid and hpid.
connected_pair() {
	local port
	port=$(free_port)
	FI_SIM_NODE=0 "$peer" server $port >server$1.out 2>&1 &
	spid=$!; pids+=($spid)
	sleep 0.5
	FI_SIM_NODE=1 "$peer" holder $port >holder$1.out 2>&1 &
	hpid=$!; pids+=($hpid)
	for _ in $(seq 100); do grep -q connected holder$1.out && break; sleep 0.1; done
	grep -q connected holder$1.out || { echo "FAIL: no connection"; cat server$1.out holder$1.out; exit 1; }
}

# kill_coordinator: kills the fabric's coordinator; sets old (its pid).
kill_coordinator() {
	old=$("$fabsim" fabric status "$FI_SIM_FABRIC" | awk '/coordinator pid/ { print $5 }' | tr -d ,)
	[ -n "$old" ] || { echo "FAIL: no coordinator pid in the status"; "$fabsim" fabric status "$FI_SIM_FABRIC"; exit 1; }
	kill -9 "$old"
	for _ in $(seq 50); do kill -0 "$old" 2>/dev/null || break; sleep 0.1; done
}

connected_pair ""

ls /dev/shm | grep -q -- "-$fabric\$" || { echo "FAIL: no shared memory for the fabric"; ls /dev/shm; exit 1; }
kill_coordinator
if "$fabsim" fabric status "$fabric" >status0.out 2>&1; then
	echo "FAIL: a killed coordinator still answers"; cat status0.out; exit 1
fi

# A newcomer on node 2 (a server nobody connects to) starts a new one.
port2=$(free_port)
FI_SIM_NODE=2 "$peer" server $port2 >late.out 2>&1 &
lpid=$!; pids+=($lpid)
listed=""
for _ in $(seq 100); do
	if "$fabsim" fabric status "$fabric" >status.out 2>&1 &&
	   grep -q "members" status.out && [ "$(grep -cE '^  [0-9]+ ' status.out)" = 3 ]; then
		listed=1; break
	fi
	sleep 0.1
done
[ -n "$listed" ] || { echo "FAIL: the new coordinator does not list three members"; cat status.out; exit 1; }
for want in "0 $spid" "1 $hpid" "2 $lpid"; do
	set -- $want
	awk -v n="$1" -v p="$2" '$1 == n && $2 == p { found = 1 } END { exit !found }' status.out ||
		{ echo "FAIL: node $1 (pid $2) is not listed"; cat status.out; exit 1; }
done
order=$(awk '/^  [0-9]+ / { printf "%s ", $1 }' status.out)
[ "$order" = "0 1 2 " ] || { echo "FAIL: members not listed by node: $order"; cat status.out; exit 1; }
new=$(awk '/coordinator pid/ { print $5 }' status.out | tr -d ,)
[ "$new" != "$old" ] || { echo "FAIL: the same coordinator"; exit 1; }
grep -q "node 0 (pid $spid, msg_peer) attached before this coordinator started" "$FABSIM_RUNTIME_DIR/$fabric.log" ||
	{ echo "FAIL: the log does not say so"; cat "$FABSIM_RUNTIME_DIR/$fabric.log"; exit 1; }

# The earlier ones end first: the coordinator stays for the newcomer.
kill -9 $hpid $spid; wait $hpid $spid 2>/dev/null || true
sleep 0.3
"$fabsim" fabric status "$fabric" >status2.out 2>&1 ||
	{ echo "FAIL: the coordinator left with a member running"; cat status2.out; exit 1; }
kill -9 $lpid; wait $lpid 2>/dev/null || true
for _ in $(seq 50); do kill -0 "$new" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$new" 2>/dev/null; then
	echo "FAIL: the coordinator stays with nobody left"; exit 1
fi
if ls /dev/shm | grep -q -- "-$fabric\$"; then
	echo "FAIL: the fabric's shared memory is left"; ls /dev/shm; exit 1
fi
grep -q "exit: the last member left; socket and shared memory removed" "$FABSIM_RUNTIME_DIR/$fabric.log" ||
	{ echo "FAIL: no clean exit in the log"; cat "$FABSIM_RUNTIME_DIR/$fabric.log"; exit 1; }

# Nothing killed but a member: the last to leave says goodbye and its
# coordinator cleans up; the log does not take that for a killed one.
fabric="cd$$z$RANDOM$RANDOM"
export FI_SIM_FABRIC="$fabric"
connected_pair 1
kill -9 $hpid
wait $spid || { echo "FAIL: the server did not end well"; cat server1.out; exit 1; }
wait $hpid 2>/dev/null || true
for _ in $(seq 50); do
	grep -q "exit: the last member left" "$FABSIM_RUNTIME_DIR/$fabric.log" && break
	sleep 0.1
done
grep -q "exit: the last member left; socket and shared memory removed" "$FABSIM_RUNTIME_DIR/$fabric.log" ||
	{ echo "FAIL: the coordinator did not clean up"; cat "$FABSIM_RUNTIME_DIR/$fabric.log"; exit 1; }
if grep -q "left it with no coordinator" "$FABSIM_RUNTIME_DIR/$fabric.log"; then
	echo "FAIL: a coordinator that ended well was taken for a killed one"
	cat "$FABSIM_RUNTIME_DIR/$fabric.log"; exit 1
fi

# Killed with nobody joining after: the last process to leave cleans up.
fabric="cd$$y$RANDOM$RANDOM"
export FI_SIM_FABRIC="$fabric"
connected_pair 2
kill_coordinator
# The holder dies; the server hears FI_SHUTDOWN, ends, and is the last.
kill -9 $hpid
wait $spid || { echo "FAIL: the server did not end well"; cat server2.out; exit 1; }
wait $hpid 2>/dev/null || true
if ls /dev/shm | grep -q -- "-$fabric\$"; then
	echo "FAIL: the last process left the fabric's shared memory behind"
	cat "$FABSIM_RUNTIME_DIR/$fabric.log"; exit 1
fi
grep -q "pid $spid, the last process on the fabric, left it with no coordinator" "$FABSIM_RUNTIME_DIR/$fabric.log" ||
	{ echo "FAIL: the log does not say who cleaned up"; cat "$FABSIM_RUNTIME_DIR/$fabric.log"; exit 1; }

# Everything killed at once (a test's run timed out), then its runtime
# directory deleted: nothing of that run can start or join that fabric
# again, and the next coordinator to start, in any directory, removes the
# memory it left (its creator wrote that directory into it).
# Another test's coordinator, starting meanwhile for the same user, may
# sweep that memory first (its log, not ours, then says so): a few tries.
doomed_run() {
	local fabric="cd$$w$1$RANDOM$RANDOM"
	export FI_SIM_FABRIC="$fabric" FABSIM_RUNTIME_DIR="$TEST_TMPDIR/doomed$1"
	connected_pair "3$1"
	kill_coordinator
	kill -9 $spid $hpid
	wait $spid $hpid 2>/dev/null || true
	seg=$(ls /dev/shm | grep -- "-$fabric\$" || true)
	[ -n "$seg" ] || { echo "FAIL: the killed run left no memory to test with"; exit 1; }
	head -c 8192 "/dev/shm/$seg" | grep -a -q -F "$FABSIM_RUNTIME_DIR" ||
		{ echo "FAIL: the fabric's memory does not say where it came from"; exit 1; }
	rm -rf "$FABSIM_RUNTIME_DIR"
	export FI_SIM_FABRIC="cd$$v$1$RANDOM$RANDOM" FABSIM_RUNTIME_DIR="$TEST_TMPDIR/next$1"
	connected_pair "4$1"
	if [ -e "/dev/shm/$seg" ]; then
		echo "FAIL: the memory of a run whose directory is gone is left"
		cat "$FABSIM_RUNTIME_DIR/$FI_SIM_FABRIC.log"; exit 1
	fi
	grep -q "removed the shared memory /$seg of a crashed run in $TEST_TMPDIR/doomed$1" \
		"$FABSIM_RUNTIME_DIR/$FI_SIM_FABRIC.log"
}
said=no
for try in 1 2 3; do
	if doomed_run $try; then said=yes; break; fi
done
[ $said = yes ] ||
	{ echo "FAIL: the log does not say what was removed"; cat "$FABSIM_RUNTIME_DIR/$FI_SIM_FABRIC.log"; exit 1; }
echo PASS
