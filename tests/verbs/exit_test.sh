#!/usr/bin/env bash
# A verbs program on a shared fabric whose exit handler destroys its QP
# exits (tests/verbs/exit_cleanup.c).
set -euo pipefail
root="$TEST_SRCDIR/fabsim"
cd "$TEST_TMPDIR"
. "$root/tests/multiproc/shell_util.sh"
sanitizer_env "$root/providers/sim_verbs/libibverbs.so.1"
export FABSIM_RUNTIME_DIR="$TEST_TMPDIR/run"
export FI_SIM_FABRIC="exit$$" FI_SIM_NODE=0
out=$(timeout 30 "$root/tests/verbs/exit_cleanup") || { echo "FAIL: status $? ($out)"; exit 1; }
[ "$out" = "cleaned up" ] || { echo "FAIL: $out"; exit 1; }
echo PASS
