#!/usr/bin/env bash
# Debian's perftest (ib_send_bw, ib_write_bw, ib_read_bw, ib_atomic_bw and
# their _lat siblings; ib_write_lat waits for each write by reading its
# buffer in a loop, never calling in), unmodified, as server and client processes on one
# shared fabric through the verbs face. The programs link libmlx5 and libefa
# for their vendor extensions, which need rdma-core's provider interface to
# load (sv_provider_abi.c). Both sides must finish and the client print its
# results row; the figures are real time (perftest times with the TSC).
set -euo pipefail
root="$TEST_SRCDIR/fabsim"
face="$root/providers/sim_verbs"
cd "$TEST_TMPDIR"
. "$TEST_SRCDIR/fabsim/tests/multiproc/shell_util.sh"
sanitizer_env "$face/libibverbs.so.1"
export FABSIM_RUNTIME_DIR="$TEST_TMPDIR/run" LD_LIBRARY_PATH="$face"

if ! command -v ib_send_bw >/dev/null; then
	echo "SKIP: perftest is not installed (Debian package perftest)"
	exit 0
fi

fail=0
# perf NAME SERVER_ADDRESS PROGRAM [ARGS]: PROGRAM's server on host 0 and its
# client on host 1, 100 iterations, the client given SERVER_ADDRESS (the
# out-of-band TCP exchange's, or with -R rdma_cm's: host 0's 10.0.0.1).
perf() {
	local name=$1 addr=$2 port spid rc=0 row
	shift 2
	port=$(free_port)
	export FI_SIM_FABRIC="$name$$"
	FI_SIM_NODE=0 timeout 60 "$@" -d fabsim0 -n 100 -p "$port" >"$name.server" 2>&1 &
	spid=$!
	sleep 0.5
	FI_SIM_NODE=1 timeout 60 "$@" -d fabsim0 -n 100 -p "$port" "$addr" >"$name.client" 2>&1 || rc=$?
	wait $spid || { echo "FAIL: $name: the server failed"; cat "$name.server"; fail=1; }
	row=$(grep -A1 "#bytes" "$name.client" | tail -1 || true)
	echo "$name: $row"
	if [ "$rc" -ne 0 ] || ! grep -Eq "^ *[0-9]+ +100 " <<<"$row"; then
		echo "FAIL: $name: the client failed (exit $rc)"; cat "$name.client"; fail=1
	fi
}

perf send_bw 127.0.0.1 ib_send_bw
perf write_bw 127.0.0.1 ib_write_bw
perf read_bw 127.0.0.1 ib_read_bw
perf atomic_bw 127.0.0.1 ib_atomic_bw
perf send_lat 127.0.0.1 ib_send_lat
perf read_lat 127.0.0.1 ib_read_lat
perf write_lat 127.0.0.1 ib_write_lat
perf atomic_lat 127.0.0.1 ib_atomic_lat
# Other transports, and connections made by rdma_cm (-R). With -R the
# client's first contact is its REQ, which a host whose process has not
# joined yet (a busy machine may start the server late) leaves unanswered:
# the clock, free to run, would time it out (UNREACHABLE) at once. So it
# waits for both processes, as a launcher would say (FI_SIM_NODES).
perf send_bw_ud 127.0.0.1 ib_send_bw -c UD
perf write_bw_uc 127.0.0.1 ib_write_bw -c UC
export FI_SIM_NODES=2
perf send_bw_cm 10.0.0.1 ib_send_bw -R
perf read_lat_cm 10.0.0.1 ib_read_lat -R
unset FI_SIM_NODES
exit $fail
