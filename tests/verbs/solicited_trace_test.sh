#!/usr/bin/env bash
# A verbs program of one process records its wire with FI_SIM_PCAP (no
# shared fabric), and the BTH's SE bit is set on the send posted with
# IBV_SEND_SOLICITED only (tests/verbs/solicited_pair.c): tshark reads it.
set -euo pipefail
root="$TEST_SRCDIR/fabsim"
cd "$TEST_TMPDIR"
. "$root/tests/multiproc/shell_util.sh"
sanitizer_env "$root/providers/sim_verbs/libibverbs.so.1"
export FABSIM_VERBS_DEVICES=2 FI_SIM_PCAP="$TEST_TMPDIR/se.pcap"
out=$(timeout 30 "$root/tests/verbs/solicited_pair") || { echo "FAIL: status $? ($out)"; exit 1; }
[ "$out" = ok ] || { echo "FAIL: $out"; exit 1; }
[ -s se.pcap ] || { echo "FAIL: no trace written"; exit 1; }
check=$("$root/tools/fabsim" trace check se.pcap) || { echo "FAIL: $check"; exit 1; }
echo "$check"
if ! command -v tshark >/dev/null; then
	echo "SKIP: tshark is not installed: the SE bit is not checked"
	exit 0
fi
# Opcode 4 is RC SEND Only; its SE bit, in the order the sends were posted.
se=$(tshark -r se.pcap -Y "infiniband.bth.opcode == 4" -T fields -e infiniband.bth.se 2>/dev/null | tr '\n' ' ')
echo "SE bits of the two sends: $se"
[ "$se" = "0 1 " ] || { echo "FAIL: SE bits $se, want 0 then 1"; exit 1; }
echo PASS
