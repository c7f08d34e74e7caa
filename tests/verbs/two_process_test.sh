#!/usr/bin/env bash
# Two processes on one shared simulated fabric through the verbs face
# (LD_LIBRARY_PATH, FI_SIM_FABRIC, FI_SIM_NODE):
#  - Debian's own ibv_rc_pingpong, ibv_ud_pingpong, ibv_uc_pingpong and
#    ibv_srq_pingpong (ibverbs-utils), unmodified, as server and client; each run's trace (FI_SIM_PCAP)
#    decodes in tshark (no malformed packet; the datagrams carry the
#    program's Q_Key) and passes `fabsim trace check`;
#  - Debian's rping (also with -q, its own QPs), ucmatose, udaddy,
#    rdma_server and rdma_client (rdmacm-utils) over the librdmacm face;
#  - programs waiting in poll() on O_NONBLOCK channels (quiet_channel);
#  - a QP that fails while the other process runs the model, and a send
#    retried without limit to a peer that gets killed (rnr_peer);
#  - Debian's fi_pingpong -e msg, every size, on FI_PROVIDER=verbs (fabsim's
#    libfabric.so.1, its verbs provider over the face).
set -euo pipefail
root="$TEST_SRCDIR/fabsim"
face="$root/providers/sim_verbs"
fabsim="$root/tools/fabsim"
cd "$TEST_TMPDIR"
. "$TEST_SRCDIR/fabsim/tests/multiproc/shell_util.sh"
sanitizer_env "$face/libibverbs.so.1"
export FABSIM_RUNTIME_DIR="$TEST_TMPDIR/run"
fail=0

# pair NAME SERVER_COMMAND... -- CLIENT_COMMAND...: both must succeed.
pair() {
	local name=$1; shift
	local server=() client=()
	while [ "$1" != -- ]; do server+=("$1"); shift; done
	shift
	client=("$@")
	FI_SIM_NODE=0 timeout 60 "${server[@]}" >"$name.server" 2>&1 &
	local pid=$!
	sleep 0.5
	if ! FI_SIM_NODE=1 timeout 60 "${client[@]}" >"$name.client" 2>&1; then
		echo "FAIL: $name: the client failed"; cat "$name.client" "$name.server"
		fail=1
	fi
	if ! wait $pid; then
		echo "FAIL: $name: the server failed"; cat "$name.server"
		fail=1
	fi
}

# pingpong NAME ITERS PROGRAM [ARGS]: Debian's ibv_*_pingpong PROGRAM as
# server and client on fabric NAME (its trace in NAME.pcap): both sides
# must finish ITERS iterations and the trace pass `fabsim trace check`.
pingpong() {
	local name=$1 iters=$2 port check
	shift 2
	port=$(free_port)
	export LD_LIBRARY_PATH="$face" FI_SIM_FABRIC="$name$$" FI_SIM_PCAP="$TEST_TMPDIR/$name.pcap"
	pair "$name" "$@" -g 0 -n "$iters" -p "$port" -- \
		"$@" -g 0 -n "$iters" -p "$port" 127.0.0.1
	unset FI_SIM_PCAP
	for side in server client; do
		grep -q "$iters iters in" "$name.$side" || { echo "FAIL: $name: $side did not finish"; cat "$name.$side"; fail=1; }
	done
	check=$("$fabsim" trace check "$name.pcap")
	echo "$check"
	grep -q " 0 problems" <<<"$check" || { echo "FAIL: $name: the trace has problems"; fail=1; }
}

# tshark_count PCAP PATTERN: frames of PCAP whose summary has PATTERN.
tshark_count() {
	tshark -r "$1" 2>/dev/null | grep -c "$2" || true
}

if ! command -v tshark >/dev/null; then
	echo "SKIP: tshark is not installed: the traces are only checked by fabsim"
fi

if command -v ibv_rc_pingpong >/dev/null; then
	pingpong rc 200 ibv_rc_pingpong
	# The same with the work-request API (ibv_wr_*).
	pingpong rcN 200 ibv_rc_pingpong -N
	# Each side's address names the other's GID: two hosts of the fabric.
	grep -q "remote address: .*GID fe80::aff:fe00:2" rc.server || { echo "FAIL: rc: the server's peer is not host 1"; fail=1; }
	if command -v tshark >/dev/null; then
		# 4096-byte messages on its default path MTU of 1024: four packets.
		frames=$(tshark_count rc.pcap "RC Send First")
		middle=$(tshark_count rc.pcap "RC Send Middle")
		bad=$(tshark_count rc.pcap "Malformed")
		echo "tshark: $frames RC Send First frames, $middle Send Middle, $bad malformed"
		[ "$frames" -eq 400 ] || { echo "FAIL: rc: tshark sees $frames sends, want 400 (200 each way)"; fail=1; }
		[ "$middle" -eq 800 ] || { echo "FAIL: rc: tshark sees $middle middle packets, want two a message"; fail=1; }
		[ "$bad" -eq 0 ] || { echo "FAIL: rc: tshark finds malformed packets"; fail=1; }
	fi
	# A message longer than the server's receive: the server's length
	# error, the client's remote invalid request (its receive's flush
	# after it), and the server exits with its QP still there while the
	# client runs the model — which must not reach the closed NIC.
	port=$(free_port)
	export LD_LIBRARY_PATH="$face" FI_SIM_FABRIC="rclen$$"
	FI_SIM_NODE=0 timeout 60 ibv_rc_pingpong -g 0 -p "$port" -s 4096 -n 5 >rclen.server 2>&1 &
	pid=$!
	sleep 0.5
	rc=0
	FI_SIM_NODE=1 timeout 60 ibv_rc_pingpong -g 0 -p "$port" -s 8192 -n 5 127.0.0.1 >rclen.client 2>&1 || rc=$?
	wait $pid || true
	echo "rclen: client exit status $rc"
	[ "$rc" -eq 1 ] || { echo "FAIL: rclen: client exit status $rc, want 1"; cat rclen.client rclen.server; fail=1; }
	grep -q "local length error (1) for wr_id 1" rclen.server || { echo "FAIL: rclen: the server saw no length error"; cat rclen.server; fail=1; }
	grep -q "remote invalid request error (9) for wr_id 2" rclen.client || { echo "FAIL: rclen: the client's first error is not its send's"; cat rclen.client; fail=1; }
else
	echo "SKIP: ibv_rc_pingpong is not installed (Debian package ibverbs-utils)"
fi

# Debian's ibv_ud_pingpong: datagrams with the program's own Q_Key, a GRH in
# front of each (2048 bytes in a buffer of 2048 + 40).
if command -v ibv_ud_pingpong >/dev/null; then
	pingpong ud 200 ibv_ud_pingpong
	if command -v tshark >/dev/null; then
		frames=$(tshark_count ud.pcap "UD Send Only")
		qkeys=$(tshark -r ud.pcap -Y infiniband.deth -T fields -e infiniband.deth.q_key 2>/dev/null | sort -u)
		echo "tshark: $frames UD Send Only frames, Q_Keys: $qkeys"
		[ "$frames" -eq 400 ] || { echo "FAIL: ud: tshark sees $frames datagrams, want 400"; fail=1; }
		[ "$qkeys" = "0x0000000011111111" ] || { echo "FAIL: ud: Q_Keys on the wire: $qkeys"; fail=1; }
	fi
else
	echo "SKIP: ibv_ud_pingpong is not installed (Debian package ibverbs-utils)"
fi

# Debian's ibv_uc_pingpong: unreliable-connected sends, no acknowledgement
# on the wire.
if command -v ibv_uc_pingpong >/dev/null; then
	pingpong uc 200 ibv_uc_pingpong
	if command -v tshark >/dev/null; then
		frames=$(tshark_count uc.pcap "UC Send First")
		acks=$(tshark_count uc.pcap "Acknowledge")
		echo "tshark: $frames UC Send First frames, $acks acknowledgements"
		[ "$frames" -eq 400 ] || { echo "FAIL: uc: tshark sees $frames sends, want 400"; fail=1; }
		[ "$acks" -eq 0 ] || { echo "FAIL: uc: acknowledgements on an unreliable connection"; fail=1; }
	fi
else
	echo "SKIP: ibv_uc_pingpong is not installed (Debian package ibverbs-utils)"
fi

# Debian's ibv_srq_pingpong: 16 RC QPs a side taking their receives from one
# shared receive queue; its last sends are still in flight when the other
# side tears down, as on a device.
if command -v ibv_srq_pingpong >/dev/null; then
	pingpong srq 500 ibv_srq_pingpong
	if command -v tshark >/dev/null; then
		qps=$(tshark -r srq.pcap -Y "infiniband.bth.opcode == 0" -T fields -e ip.dst -e infiniband.bth.destqp 2>/dev/null | sort -u | wc -l)
		echo "tshark: sends reach $qps QPs"
		[ "$qps" -eq 32 ] || { echo "FAIL: srq: sends reach $qps QPs, want 16 a side"; fail=1; }
	fi
else
	echo "SKIP: ibv_srq_pingpong is not installed (Debian package ibverbs-utils)"
fi

# Debian's rping and ucmatose (rdmacm-utils): connections made by rdma_cm;
# rping's threads wait inside the fabric for CQ and CM events, and are
# still waiting there when its main thread exits.
if command -v rping >/dev/null; then
	export LD_LIBRARY_PATH="$face" FI_SIM_FABRIC="rping$$"
	pair rping rping -s -a 10.0.0.1 -C 20 -v -- rping -c -a 10.0.0.1 -C 20 -v
	n=$(grep -c "ping data: rdma-ping-" rping.client || true)
	[ "$n" -eq 20 ] || { echo "FAIL: rping: the client saw $n pings, want 20"; cat rping.client; fail=1; }
	# Its main thread waits on a semaphore for its CQ thread at every step,
	# taken out of time by its own process: a trip nobody told of ends
	# quietly too (it said "called in again" at every step, alone).
	for side in server client; do
		away=$(grep -c "blocked outside the fabric" rping.$side || true)
		back=$(grep -c "called in again" rping.$side || true)
		[ "$back" -le "$away" ] || { echo "FAIL: rping: $side told $back returns after $away trips out of time"; cat rping.$side; fail=1; }
	done
	# -q: QPs the program makes and moves itself (conn_param.qp_num,
	# rdma_init_qp_attr, CONNECT_RESPONSE, rdma_establish). rping's client
	# then destroys its event channel while its CM thread may still call
	# rdma_get_cm_event on it (rping's own use after free, harmless with
	# any librdmacm but reported by AddressSanitizer in ours).
	if [[ "${LD_PRELOAD:-}" == *libasan* ]]; then
		echo "SKIP: rping -q under AddressSanitizer (rping reads its destroyed event channel)"
	else
		export FI_SIM_FABRIC="rpingq$$"
		pair rpingq rping -s -a 10.0.0.1 -C 10 -q -- rping -c -a 10.0.0.1 -C 10 -v -q
		n=$(grep -c "ping data: rdma-ping-" rpingq.client || true)
		[ "$n" -eq 10 ] || { echo "FAIL: rping -q: the client saw $n pings, want 10"; cat rpingq.client; fail=1; }
	fi
	# A persistent server (-P) and two clients one after the other, each
	# a new process on the same host: the second's request is a new
	# connection, not a resend of the first's (comm ids are the host's).
	# The server accepts each in a new thread, which here computes 100 ms
	# before it starts (slow_thread_start.so), as on a busy machine: the
	# client, told by the server's MRA to wait 68 s of virtual time, must
	# not jump there while that thread runs on its way in.
	export FI_SIM_FABRIC="rpingP$$"
	FI_SIM_NODE=0 LD_PRELOAD="${LD_PRELOAD:+$LD_PRELOAD:}$root/tests/verbs/slow_thread_start.so" \
		timeout 60 rping -s -P -a 10.0.0.1 >rpingP.server 2>&1 &
	pid=$!
	sleep 0.5
	for i in 1 2; do
		if ! FI_SIM_NODE=2 timeout 30 rping -c -a 10.0.0.1 -C 2 -V >rpingP.client$i 2>&1; then
			echo "FAIL: rping -P: client $i (a new process on host 2) failed"
			cat rpingP.client$i rpingP.server; fail=1
		fi
	done
	kill $pid 2>/dev/null; wait $pid 2>/dev/null || true
	export FI_SIM_FABRIC="ucma$$"
	pair ucmatose ucmatose -b 10.0.0.1 -c 4 -C 50 -- ucmatose -s 10.0.0.1 -c 4 -C 50
	for side in server client; do
		grep -q "return status 0" ucmatose.$side || { echo "FAIL: ucmatose: $side"; cat ucmatose.$side; fail=1; }
	done
	# udaddy: rdma_cm's UD port space (service ID resolution), datagrams
	# addressed from its answer and replies from ibv_create_ah_from_wc.
	export FI_SIM_FABRIC="udaddy$$" FI_SIM_PCAP="$TEST_TMPDIR/udaddy.pcap"
	pair udaddy udaddy -b 10.0.0.1 -- udaddy -s 10.0.0.1
	unset FI_SIM_PCAP
	for side in server client; do
		grep -q "return status 0" udaddy.$side || { echo "FAIL: udaddy: $side"; cat udaddy.$side; fail=1; }
	done
	if command -v tshark >/dev/null; then
		sidr=$(tshark -r udaddy.pcap 2>/dev/null | grep -c "ServiceIDResReqResp" || true)
		echo "tshark: $sidr SIDR replies in udaddy's trace"
		[ "$sidr" -ge 1 ] || { echo "FAIL: udaddy: no SIDR_REP on the wire"; fail=1; }
	fi

	# cmtime: its main thread waits for its event thread by calling
	# sched_yield in a loop, never calling in; 100 connections (its
	# default) took 2 s each before it was taken for a spinner.
	# Its server serves until it is stopped.
	if command -v cmtime >/dev/null; then
		export FI_SIM_FABRIC="cmtime$$"
		cmport=$(free_port)
		FI_SIM_NODE=0 timeout 90 cmtime -b 10.0.0.1 -p $cmport >cmtime.server 2>&1 &
		cmpid=$!
		sleep 0.5
		if ! FI_SIM_NODE=1 timeout 60 cmtime -s 10.0.0.1 -p $cmport >cmtime.client 2>&1 ||
		   ! grep -q "^connect *:" cmtime.client; then
			echo "FAIL: cmtime: the client failed"; cat cmtime.client cmtime.server; fail=1
		fi
		kill $cmpid 2>/dev/null; wait $cmpid 2>/dev/null || true
	fi

	# rdma_server and rdma_client: the synchronous endpoint API
	# (rdma_create_ep, rdma_get_request, rdma_verbs.h's helpers).
	export FI_SIM_FABRIC="rdmaep$$"
	pair rdma_ep rdma_server -s 10.0.0.1 -- rdma_client -s 10.0.0.1
	for side in server client; do
		grep -q "end 0" rdma_ep.$side || { echo "FAIL: rdma_ep: $side"; cat rdma_ep.$side; fail=1; }
	done
else
	echo "SKIP: rping is not installed (Debian package rdmacm-utils)"
fi

# A send that fails for want of a receive (the client's REQ asked for no
# RNR retries), whichever process runs the model when the server's QP
# fails: its failure reaches the server's own process (it used to make the
# other one dereference the server's pointers and crash). Four times: each
# process takes turns at running the model.
export LD_LIBRARY_PATH="$face"
for i in 1 2 3 4; do
	export FI_SIM_FABRIC="rnr$i$$"
	rnrport=$(free_port)
	pair rnr$i "$root/tests/verbs/rnr_peer" server $rnrport -- \
		"$root/tests/verbs/rnr_peer" client $rnrport
done

# Programs that wait in poll() on O_NONBLOCK rdma_cm and completion
# channels are woken when an event is there, not whenever the fabric has
# work (each wake-up found EAGAIN: thousands per connection).
export FI_SIM_FABRIC="quiet$$"
quietport=$(free_port)
pair quiet "$root/tests/verbs/quiet_channel" server $quietport -- \
	"$root/tests/verbs/quiet_channel" client $quietport
cat quiet.server quiet.client

# The same send with unlimited RNR retries, to a client killed meanwhile:
# found dead, its connection ends and the send is flushed, or fails for
# want of an answer (it used to be retried for ever, the process that ran
# the model holding the world the whole time).
# kill_holder NAME MODE: rnr_peer MODE as the server of a holder that is
# killed once connected; the server must see what MODE expects.
kill_holder() {
	local name=$1 mode=$2 port spid cpid
	export FI_SIM_FABRIC="$name$$"
	port=$(free_port)
	FI_SIM_NODE=0 timeout 60 "$root/tests/verbs/rnr_peer" $mode $port \
		>$name.server 2>&1 &
	spid=$!
	sleep 0.5
	FI_SIM_NODE=1 "$root/tests/verbs/rnr_peer" holder $port >$name.client 2>&1 &
	cpid=$!
	for _ in $(seq 100); do grep -q connected $name.client && break; sleep 0.1; done
	sleep 0.3
	kill -9 $cpid
	wait $cpid 2>/dev/null || true
	if ! wait $spid; then
		echo "FAIL: $name: the $mode did not see the holder's death"
		cat $name.server $name.client
		fail=1
	fi
}
kill_holder rnrkill survivor
# A connection with nothing on it hears DISCONNECTED when its peer is
# killed, as from the dead process's kernel.
kill_holder killdisc watcher

if command -v fi_pingpong >/dev/null; then
	export LD_LIBRARY_PATH="$face:$root/api" FI_PROVIDER=verbs FI_SIM_FABRIC="fp$$"
	fpport=$(free_port)
	# Every size, 64 B to 1 MiB: the server registers its buffers after
	# the connection request arrives, which takes longer than the
	# client's resends (the request's MRA makes the client wait).
	pair fp fi_pingpong -e msg -I 10 -B $fpport -- \
		fi_pingpong -e msg -I 10 -P $fpport 127.0.0.1
	for side in server client; do
		for size in 64 1k 1m; do
			grep -qE "^$size +10 +=10" fp.$side || { echo "FAIL: fp: $side printed no result for $size"; cat fp.$side; fail=1; }
		done
	done
else
	echo "SKIP: fi_pingpong is not installed (Debian package libfabric-bin)"
fi
[ $fail -eq 0 ] && echo PASS
exit $fail
