#!/usr/bin/env bash
# Two processes on one shared simulated fabric through the verbs face
# (LD_LIBRARY_PATH, FI_SIM_FABRIC, FI_SIM_NODE):
#  - Debian's own ibv_rc_pingpong, ibv_ud_pingpong, ibv_uc_pingpong and
#    ibv_srq_pingpong (ibverbs-utils), unmodified, as server and client; each run's trace (FI_SIM_PCAP)
#    decodes in tshark (no malformed packet; the datagrams carry the
#    program's Q_Key) and passes `fabsim trace check`;
#  - Debian's rping, ucmatose, udaddy, rdma_server and rdma_client
#    (rdmacm-utils) over the librdmacm face;
#  - Debian's fi_pingpong -e msg on FI_PROVIDER=verbs (fabsim's
#    libfabric.so.1, its verbs provider over the face).
set -euo pipefail
root="$TEST_SRCDIR/fabsim"
face="$root/providers/sim_verbs"
fabsim="$root/tools/fabsim"
cd "$TEST_TMPDIR"
. "$TEST_SRCDIR/fabsim/tests/multiproc/shell_util.sh"
sanitizer_env "$face/libibverbs.so.1"
export FABSIM_RUNTIME_DIR="$TEST_TMPDIR/run"
port=$(free_port)
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

if command -v ibv_rc_pingpong >/dev/null; then
	export LD_LIBRARY_PATH="$face" FI_SIM_FABRIC="rc$$" FI_SIM_PCAP="$TEST_TMPDIR/rc.pcap"
	pair rc ibv_rc_pingpong -g 0 -n 200 -p $port -- \
		ibv_rc_pingpong -g 0 -n 200 -p $port 127.0.0.1
	unset FI_SIM_PCAP
	for side in server client; do
		grep -q "200 iters in" rc.$side || { echo "FAIL: rc: $side did not finish"; cat rc.$side; fail=1; }
	done
	# The same with the work-request API (ibv_wr_*).
	export FI_SIM_FABRIC="rcN$$"
	nport=$(free_port)
	pair rcN ibv_rc_pingpong -g 0 -n 200 -N -p $nport -- \
		ibv_rc_pingpong -g 0 -n 200 -N -p $nport 127.0.0.1
	for side in server client; do
		grep -q "200 iters in" rcN.$side || { echo "FAIL: rc -N: $side did not finish"; cat rcN.$side; fail=1; }
	done
	# Each side's address names the other's GID: two hosts of the fabric.
	grep -q "remote address: .*GID fe80::aff:fe00:2" rc.server || { echo "FAIL: rc: the server's peer is not host 1"; fail=1; }
	check=$("$fabsim" trace check rc.pcap)
	echo "$check"
	grep -q " 0 problems" <<<"$check" || { echo "FAIL: rc: the trace has problems"; fail=1; }
	if command -v tshark >/dev/null; then
		# 4096-byte messages on its default path MTU of 1024: four packets.
		frames=$(tshark -r rc.pcap 2>/dev/null | grep -c "RC Send First" || true)
		middle=$(tshark -r rc.pcap 2>/dev/null | grep -c "RC Send Middle" || true)
		bad=$(tshark -r rc.pcap 2>/dev/null | grep -c "Malformed" || true)
		echo "tshark: $frames RC Send First frames, $middle Send Middle, $bad malformed"
		[ "$frames" -eq 400 ] || { echo "FAIL: rc: tshark sees $frames sends, want 400 (200 each way)"; fail=1; }
		[ "$middle" -eq 800 ] || { echo "FAIL: rc: tshark sees $middle middle packets, want two a message"; fail=1; }
		[ "$bad" -eq 0 ] || { echo "FAIL: rc: tshark finds malformed packets"; fail=1; }
	else
		echo "SKIP: tshark is not installed: the trace is only checked by fabsim"
	fi
else
	echo "SKIP: ibv_rc_pingpong is not installed (Debian package ibverbs-utils)"
fi

# Debian's ibv_ud_pingpong: datagrams with the program's own Q_Key, a GRH in
# front of each (2048 bytes in a buffer of 2048 + 40), and its trace.
if command -v ibv_ud_pingpong >/dev/null; then
	export LD_LIBRARY_PATH="$face" FI_SIM_FABRIC="ud$$" FI_SIM_PCAP="$TEST_TMPDIR/ud.pcap"
	udport=$(free_port)
	pair ud ibv_ud_pingpong -g 0 -n 200 -p $udport -- \
		ibv_ud_pingpong -g 0 -n 200 -p $udport 127.0.0.1
	unset FI_SIM_PCAP
	for side in server client; do
		grep -q "200 iters in" ud.$side || { echo "FAIL: ud: $side did not finish"; cat ud.$side; fail=1; }
	done
	check=$("$fabsim" trace check ud.pcap)
	echo "$check"
	grep -q " 0 problems" <<<"$check" || { echo "FAIL: ud: the trace has problems"; fail=1; }
	if command -v tshark >/dev/null; then
		frames=$(tshark -r ud.pcap 2>/dev/null | grep -c "UD Send Only" || true)
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
	export LD_LIBRARY_PATH="$face" FI_SIM_FABRIC="uc$$" FI_SIM_PCAP="$TEST_TMPDIR/uc.pcap"
	ucport=$(free_port)
	pair uc ibv_uc_pingpong -g 0 -n 200 -p $ucport -- \
		ibv_uc_pingpong -g 0 -n 200 -p $ucport 127.0.0.1
	unset FI_SIM_PCAP
	for side in server client; do
		grep -q "200 iters in" uc.$side || { echo "FAIL: uc: $side did not finish"; cat uc.$side; fail=1; }
	done
	check=$("$fabsim" trace check uc.pcap)
	echo "$check"
	grep -q " 0 problems" <<<"$check" || { echo "FAIL: uc: the trace has problems"; fail=1; }
	if command -v tshark >/dev/null; then
		frames=$(tshark -r uc.pcap 2>/dev/null | grep -c "UC Send First" || true)
		acks=$(tshark -r uc.pcap 2>/dev/null | grep -c "Acknowledge" || true)
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
	export LD_LIBRARY_PATH="$face" FI_SIM_FABRIC="srq$$" FI_SIM_PCAP="$TEST_TMPDIR/srq.pcap"
	srqport=$(free_port)
	pair srq ibv_srq_pingpong -g 0 -n 500 -p $srqport -- \
		ibv_srq_pingpong -g 0 -n 500 -p $srqport 127.0.0.1
	unset FI_SIM_PCAP
	for side in server client; do
		grep -q "500 iters in" srq.$side || { echo "FAIL: srq: $side did not finish"; cat srq.$side; fail=1; }
	done
	check=$("$fabsim" trace check srq.pcap)
	echo "$check"
	grep -q " 0 problems" <<<"$check" || { echo "FAIL: srq: the trace has problems"; fail=1; }
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

if command -v fi_pingpong >/dev/null; then
	export LD_LIBRARY_PATH="$face:$root/api" FI_PROVIDER=verbs FI_SIM_FABRIC="fp$$"
	fpport=$(free_port)
	pair fp fi_pingpong -e msg -S 1024 -I 100 -B $fpport -- \
		fi_pingpong -e msg -S 1024 -I 100 -P $fpport 127.0.0.1
	for side in server client; do
		grep -qE "^1k +100 +=100" fp.$side || { echo "FAIL: fp: $side printed no result"; cat fp.$side; fail=1; }
	done
else
	echo "SKIP: fi_pingpong is not installed (Debian package libfabric-bin)"
fi
[ $fail -eq 0 ] && echo PASS
exit $fail
