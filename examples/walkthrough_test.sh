#!/usr/bin/env bash
# The walkthrough (server and client threads in one process) runs on the
# sim provider and says what it did.
set -euo pipefail
out=$(FI_PROVIDER=sim "$TEST_SRCDIR/fabsim/examples/walkthrough" 2>&1) || {
	echo "$out"
	echo "FAIL: walkthrough exited non-zero"
	exit 1
}
echo "$out"
for line in "server: listening on port 7471" "server: connected" \
	"client: connected" 'client: sent "Hello from the client"' \
	'server: received "Hello from the client"' "server: client disconnected" \
	"walkthrough: OK"; do
	grep -qF "$line" <<<"$out" || { echo "FAIL: missing: $line"; exit 1; }
done
echo PASS
