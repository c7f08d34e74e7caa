#!/usr/bin/env bash
# `fabsim run`: a bad setting is refused before the program starts (exit 2,
# a message naming it), and good ones reach the program's environment.
set -euo pipefail
fabsim="$TEST_SRCDIR/fabsim/tools/fabsim"
export FABSIM_RUNTIME_DIR="$TEST_TMPDIR/run"
unset FI_SIM_FABRIC FI_SIM_NODE FI_SIM_NODES FI_SIM_PCAP FI_SIM_CONFIG
fail() { echo "FAIL: $*"; exit 1; }
ran="$TEST_TMPDIR/ran"

# refused TEXT OPTIONS...: exit 2, TEXT said, the program not started.
refused() {
	local text=$1 out rc=0
	shift
	rm -f "$ran"
	out=$("$fabsim" run "$@" -- touch "$ran" 2>&1) || rc=$?
	echo "\$ fabsim run $* -> $rc: $out"
	[ "$rc" = 2 ] || fail "fabsim run $*: exit $rc, expected 2"
	grep -qF -- "$text" <<<"$out" || fail "fabsim run $*: missing: $text"
	[ ! -e "$ran" ] || fail "fabsim run $*: the program ran"
}

refused 'preset: "nosuch" is unknown' --preset nosuch
refused '--seed (FI_SIM_SEED): seed: "abc"' --seed abc
refused '--loss (FI_SIM_LOSS_RATE): loss.rate: "2" is out of range' --loss 2
# Set in the environment, not by an option: named as such.
FI_SIM_SEED=xyz refused 'FI_SIM_SEED (environment): seed: "xyz"'
refused 'config file /nonexistent/x.json' --config /nonexistent/x.json
# A pipe as the config file is refused, not waited on (the test's timeout).
mkfifo "$TEST_TMPDIR/config.fifo"
refused "config file $TEST_TMPDIR/config.fifo: is a pipe" --config "$TEST_TMPDIR/config.fifo"
refused '--nodes 0: a process count is 1 to' --nodes 0
refused 'fabric name "a/b"' --fabric a/b
refused '--node: FI_SIM_NODE="abc"' --fabric ok --node abc
refused 'node 4000 (from --node) is outside the topology' --fabric ok --node 4000
FI_SIM_FABRIC=a/b refused 'FI_SIM_FABRIC (environment): fabric name "a/b"'
FI_SIM_NODE=3 refused 'FI_SIM_NODE=3 (environment) needs --fabric'
# An empty value is no value.
refused '--fabric: needs a value (it was empty)' --fabric ''
refused '--config: needs a value (it was empty)' --config ''
# What only the provider checks (it loads them in fi_getinfo) is checked
# before the program starts, with the provider's own reason.
FI_SIM_MR_STRICT=maybe refused 'FI_SIM_MR_STRICT="maybe"'
FI_SIM_ACK_TIMEOUT_NS=-5 refused 'the sim provider refuses these settings'
FI_SIM_SHARED_MEMORY_MB=abc refused 'FI_SIM_SHARED_MEMORY_MB="abc": must be a number of MiB'
# Recording settings without a file: refused for a fabric of its own, but
# on a shared fabric the process that starts it decides what is recorded,
# and a script may export the same settings for every process.
FI_SIM_PCAP_SNAPLEN=128 refused 'FI_SIM_PCAP_SNAPLEN is set but FI_SIM_PCAP'
FI_SIM_PCAP_SNAPLEN=128 "$fabsim" run --fabric joiner --node 1 -- true ||
	fail "a process joining a shared fabric was refused FI_SIM_PCAP_SNAPLEN"
echo '{"pcap": 5}' >"$TEST_TMPDIR/pcap5.json"
refused '"pcap": 5 is not a string' --config "$TEST_TMPDIR/pcap5.json"
# An unknown key is told the provider's keys too, which the file may hold.
echo '{"pcapp": "x.pcap"}' >"$TEST_TMPDIR/pcapp.json"
refused 'unknown key "pcapp" (allowed at top level: preset, seed, topology, link, switch, loss, faults, nic, mr, pcap' --config "$TEST_TMPDIR/pcapp.json"
# A bad value of the file names the file, whether or not it also holds keys
# of the provider's own.
echo '{"seed": "five", "pcap": "x.pcap"}' >"$TEST_TMPDIR/seed5.json"
refused "config file $TEST_TMPDIR/seed5.json: seed:" --config "$TEST_TMPDIR/seed5.json"
refused '--node (FI_SIM_NODE=abc) needs --fabric' --node abc
refused '--nodes (FI_SIM_NODES=2) needs --fabric' --nodes 2
refused '--pcap /nonexistent/dir/x.pcap: cannot write' --pcap /nonexistent/dir/x.pcap
refused "--pcap $TEST_TMPDIR: is a directory" --pcap "$TEST_TMPDIR"
echo '{"preset": "roce-25g", "link": {"mtu_bytes": 9000}}' >"$TEST_TMPDIR/bad.json"
refused 'mtu' --config "$TEST_TMPDIR/bad.json"
# A misspelt variable is refused as the provider refuses it.
FI_SIM_LOSS_RATEE=0.5 refused 'FI_SIM_LOSS_RATEE is not a sim parameter'
# The provider's own keys in the file are the provider's: the program runs
# (and `fabsim model` shows the model of that file).
echo '{"preset": "roce-25g", "pcap": "'"$TEST_TMPDIR"'/json.pcap"}' \
	>"$TEST_TMPDIR/pcap.json"
"$fabsim" run --config "$TEST_TMPDIR/pcap.json" -- true ||
	fail "fabsim run refused a config file with \"pcap\""
model=$(FI_SIM_CONFIG="$TEST_TMPDIR/pcap.json" "$fabsim" model) ||
	fail "fabsim model refused a config file with \"pcap\""
grep -q "preset roce-25g" <<<"$model" || fail "fabsim model showed: $model"
# `fabsim model` shows the model in force: fractional rates, every kind of
# loss, the topology, and no rate where a message takes no time.
model=$(FI_SIM_LINK_BANDWIDTH_GBPS=0.5 FI_SIM_LOSS_BURST_RATE=0.3 \
	FI_SIM_TOPOLOGY_KIND=pair FI_SIM_TOPOLOGY_HOSTS=2 "$fabsim" model)
for want in "0.5 Gb/s" "bursts 0.3" "topology pair"; do
	grep -qF "$want" <<<"$model" || fail "fabsim model: no \"$want\" in: $model"
done
FI_SIM_PRESET=ideal "$fabsim" model | grep -q "unlimited$" ||
	fail "fabsim model --preset ideal: a rate for messages that take no time"

out=$("$fabsim" run --preset roce-25g --loss 0.01 --seed 7 -- \
	sh -c 'echo "$FI_PROVIDER $FI_SIM_PRESET $FI_SIM_LOSS_RATE $FI_SIM_SEED"')
[ "$out" = "sim roce-25g 0.01 7" ] || fail "the program saw: $out"
out=$("$fabsim" run --preset=roce-25g --seed=7 -- sh -c 'echo "$FI_SIM_PRESET $FI_SIM_SEED"')
[ "$out" = "roce-25g 7" ] || fail "--option=value: the program saw: $out"
refused '--seed: needs a value (it was empty)' --seed=
# Files named relative to where fabsim ran are found from wherever the
# program goes.
(cd "$TEST_TMPDIR" && echo '{"preset": "roce-25g"}' >rel.json &&
	out=$("$fabsim" run --config rel.json --pcap rel.pcap -- \
		sh -c 'echo "$FI_SIM_CONFIG $FI_SIM_PCAP"') &&
	[ "$out" = "$TEST_TMPDIR/rel.json $TEST_TMPDIR/rel.pcap" ]) ||
	fail "relative files were passed on as: $out"
# A program that is there but cannot run: 126, as a shell says.
rc=0; "$fabsim" run -- "$TEST_TMPDIR" 2>/dev/null || rc=$?
[ "$rc" = 126 ] || fail "a directory as the program: exit $rc, expected 126"
rc=0; "$fabsim" run -- "$TEST_TMPDIR/none" 2>/dev/null || rc=$?
[ "$rc" = 127 ] || fail "a missing program: exit $rc, expected 127"
echo PASS
