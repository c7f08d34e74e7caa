#!/usr/bin/env bash
# `fabsim demo` (the README's first command) runs end to end: providers,
# the network model, and the walkthrough on the simulated NIC.
set -euo pipefail
out=$("$TEST_SRCDIR/fabsim/tools/fabsim" demo 2>&1) || {
	echo "$out"
	echo "FAIL: fabsim demo exited non-zero"
	exit 1
}
echo "$out"
for line in "  sim 0.1" "-- 2. the network model" "walkthrough: OK" \
	'server: received "Hello from the client"'; do
	grep -qF -- "$line" <<<"$out" || { echo "FAIL: missing: $line"; exit 1; }
done
echo PASS
