#!/usr/bin/env bash
# The getting-started walkthrough (examples/walkthrough.c: server and client
# threads in one process) on the verbs provider, over the verbs face of the
# simulated NIC, ten times over: the threads share the simulated clock, so
# every run connects, sends, receives and disconnects.
set -euo pipefail
root="$TEST_SRCDIR/fabsim"
export LD_LIBRARY_PATH="$root/providers/sim_verbs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export FI_PROVIDER=verbs FABSIM_VERBS_DEVICES=1
for run in $(seq 1 10); do
	out=$("$root/examples/walkthrough" 2>&1) || {
		echo "$out"
		echo "FAIL: run $run exited non-zero"
		exit 1
	}
	for line in "server: connected" "client: connected" \
		'server: received "Hello from the client"' \
		"server: client disconnected" "walkthrough: OK"; do
		grep -qF "$line" <<<"$out" || {
			echo "$out"
			echo "FAIL: run $run: missing: $line"
			exit 1
		}
	done
done
echo "$out"
echo PASS
