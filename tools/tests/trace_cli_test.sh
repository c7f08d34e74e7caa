#!/usr/bin/env bash
# `fabsim trace` is wired to the trace tools: `check` accepts a real
# capture, `summary` counts its packets, and a file that is not a capture
# gets a nonzero status and a message (traces/tests cover the rules).
set -euo pipefail
fabsim="$TEST_SRCDIR/fabsim/tools/fabsim"
capture="$TEST_SRCDIR/fabsim/traces/testdata/oferby_proxy_roce.pcap"
"$fabsim" trace check "$capture"
out=$("$fabsim" trace summary "$capture")
grep -q "105 IB packets" <<<"$out" || { echo "$out"; echo "FAIL: summary count"; exit 1; }
"$fabsim" trace summary "$capture" --json | python3 -c 'import json,sys; json.load(sys.stdin)'
# A file name is bytes: one that is not UTF-8 is still named in the JSON
# (each stray byte as U+FFFD), found or not; it was left out, or nothing
# was printed at all.
odd="$TEST_TMPDIR/$(printf 'odd\xff\xfename')"
cp "$capture" "$odd.pcap"
for f in "$odd.pcap" "$odd-missing.pcap"; do
	set +e
	"$fabsim" trace summary "$f" --json >"$TEST_TMPDIR/odd.json" 2>/dev/null
	set -e
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert "odd\ufffd\ufffdname" in d.get("file", d.get("error", "")), d' \
		"$TEST_TMPDIR/odd.json" || { echo "FAIL: --json of a non-UTF-8 name"; exit 1; }
done
bad="$TEST_TMPDIR/not_a_capture.pcap"
echo "hello" >"$bad"
if "$fabsim" trace check "$bad" 2>"$TEST_TMPDIR/err.txt" >&2; then
	echo "FAIL: a text file passed the check"
	exit 1
fi
grep -q . "$TEST_TMPDIR/err.txt" || { echo "FAIL: no message"; exit 1; }
# --json: a reader gets an object with the reason, and the status says so.
set +e
json=$("$fabsim" trace summary "$bad" --json 2>/dev/null)
rc=$?
set -e
[ $rc -eq 1 ] || { echo "FAIL: summary --json of a bad file: status $rc"; exit 1; }
python3 -c 'import json,sys; d=json.loads(sys.argv[1]); assert "too short" in d["error"] or "magic" in d["error"], d' "$json" ||
	{ echo "FAIL: summary --json of a bad file: $json"; exit 1; }
for sub in summary check; do
	help=$("$fabsim" trace $sub --help) || { echo "FAIL: trace $sub --help failed"; exit 1; }
	grep -q "usage:" <<<"$help" || { echo "FAIL: trace $sub --help: $help"; exit 1; }
done
help=$("$fabsim" model --help) || { echo "FAIL: model --help failed"; exit 1; }
grep -q "usage: fabsim model" <<<"$help" || { echo "FAIL: model --help: $help"; exit 1; }
grep -q "presets: .*roce-25g" <<<"$help" || { echo "FAIL: model --help lists no presets: $help"; exit 1; }
set +e
"$fabsim" trace frobnicate "$capture" 2>/dev/null
[ $? -eq 2 ] || { echo "FAIL: a usage error is status 2"; exit 1; }
# An argument a command does not take is a usage error, not ignored.
for cmd in "model roce-25g" "info x" "demo x"; do
	"$fabsim" $cmd >/dev/null 2>&1
	[ $? -eq 2 ] || { echo "FAIL: fabsim $cmd: not a usage error"; exit 1; }
done
# Each usage error says what was wrong, naming the command as typed.
for args in "check" "check a b" "check --json"; do
	msg=$("$fabsim" trace $args 2>&1 >/dev/null)
	[ $? -eq 2 ] || { echo "FAIL: trace $args: not a usage error"; exit 1; }
	grep -q "^fabsim trace check: \(no FILE\|one FILE only\|unknown option\)" <<<"$msg" ||
		{ echo "FAIL: trace $args says: $msg"; exit 1; }
done
# "--" ends the options, as everywhere.
"$fabsim" trace summary -- "$capture" >/dev/null ||
	{ echo "FAIL: trace summary -- FILE"; exit 1; }
# A pipe nobody writes to is refused at once, not waited on.
mkfifo "$TEST_TMPDIR/fifo"
for sub in summary check; do
	msg=$(timeout 10 "$fabsim" trace $sub "$TEST_TMPDIR/fifo" 2>&1)
	rc=$?
	[ $rc -eq 1 ] || { echo "FAIL: trace $sub of a pipe: status $rc ($msg)"; exit 1; }
	grep -q "not a regular file" <<<"$msg" || { echo "FAIL: trace $sub of a pipe: $msg"; exit 1; }
done
echo PASS
