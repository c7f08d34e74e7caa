#!/usr/bin/env bash
# A process killed while its FI_EP_MSG connection is idle: the peer's
# endpoint hears FI_SHUTDOWN (fi_cm(3)) without any traffic having to time
# out first, as the dead process's kernel would disconnect it.
set -euo pipefail
peer="$TEST_SRCDIR/fabsim/tests/multiproc/msg_peer"
cd "$TEST_TMPDIR"
. "$TEST_SRCDIR/fabsim/tests/multiproc/shell_util.sh"
sanitizer_env "$peer"
export FABSIM_RUNTIME_DIR="$TEST_TMPDIR/run" FI_PROVIDER=sim
export FI_SIM_FABRIC="death$$"
port=$(free_port)

FI_SIM_NODE=0 timeout 60 "$peer" server $port >server.out 2>&1 &
spid=$!
sleep 0.5
FI_SIM_NODE=1 "$peer" holder $port >holder.out 2>&1 &
hpid=$!
for _ in $(seq 100); do grep -q connected holder.out && break; sleep 0.1; done
grep -q connected holder.out || { echo "FAIL: no connection"; cat server.out holder.out; exit 1; }
sleep 0.3
kill -9 $hpid
wait $hpid 2>/dev/null || true
if ! wait $spid; then
	echo "FAIL: the server did not hear FI_SHUTDOWN"
	cat server.out holder.out
	exit 1
fi
cat server.out
echo PASS
