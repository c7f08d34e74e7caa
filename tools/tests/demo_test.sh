#!/usr/bin/env bash
# `fabsim demo` (the README's first command) runs end to end: providers,
# the network model, the walkthrough on the simulated NIC, and four nodes'
# traffic, measured and recorded.
set -euo pipefail
out=$(TMPDIR="$TEST_TMPDIR" "$TEST_SRCDIR/fabsim/tools/fabsim" demo 2>&1) || {
	echo "$out"
	echo "FAIL: fabsim demo exited non-zero"
	exit 1
}
echo "$out"
for line in "  sim 0.1" "-- 2. the network model" "walkthrough: OK" \
	'server: received "Hello from the client"' "every receive completed" \
	" 0 problems" "open it: fabsim trace summary"; do
	grep -qF -- "$line" <<<"$out" || { echo "FAIL: missing: $line"; exit 1; }
done
# What the simulated NIC measured through libfabric equals the model's
# prediction: the 1 MiB latency of step 2 appears again in step 5.
model=$(awk '/^-- 2\./{m=1} m && $1 == "1048576" {print $2; exit}' <<<"$out")
measured=$(awk '/^-- 5\./{m=1} m && $1 == "1048576" {print $2; exit}' <<<"$out")
[ -n "$model" ] && [ "$model" = "$measured" ] ||
	{ echo "FAIL: 1 MiB latency: model $model us, measured $measured us"; exit 1; }
# The trace it names is a real, clean capture.
"$TEST_SRCDIR/fabsim/tools/fabsim" trace check "$TEST_TMPDIR/fabsim-demo-$(id -u).pcap"
echo PASS
