#!/usr/bin/env bash
# Debian's own fi_pingpong (libfabric-bin), unmodified, as a server and a
# client process on one shared simulated fabric through `fabsim run
# --virtual-clock`: for msg, rdm and dgram endpoints and sizes from 64 B to
# 1 MiB, the latency and bandwidth it prints are the network model's
# (`fabsim model`), within 1%; its data checks (-c) pass; two runs write
# byte-identical traces.
set -euo pipefail
fabsim="$TEST_SRCDIR/fabsim/tools/fabsim"
pingpong=$(command -v fi_pingpong || true)
if [ -z "$pingpong" ]; then
	echo "SKIP: fi_pingpong is not installed (Debian package libfabric-bin)"
	exit 0
fi
cd "$TEST_TMPDIR"
. "$TEST_SRCDIR/fabsim/tests/multiproc/shell_util.sh"
sanitizer_env "$fabsim"
export FABSIM_RUNTIME_DIR="$TEST_TMPDIR/run"
preset=roce-100g
model=$("$fabsim" model --preset $preset)

# model_us SIZE: the model's post-to-completion latency for SIZE bytes.
model_us() { awk -v s="$1" '$1 == s && NF == 3 { print $2 }' <<<"$model"; }

# within_1pct GOT WANT
within_1pct() {
	awk -v g="$1" -v w="$2" 'BEGIN { d = g - w; if (d < 0) d = -d;
		exit !(d <= 0.01 * w) }'
}

# run_pair EP SIZE ITERS PCAP: one server and one client on a fresh shared
# fabric, recording its wire into PCAP; sets `line` to the client's figures.
run=0
run_pair() {
	local ep=$1 size=$2 iters=$3 pcap=$4 out server
	run=$((run + 1))
	# The control port (loopback only), fresh for each pair: tests that
	# run at the same time must not meet on it.
	port=$(free_port)
	# No --nodes: fi_pingpong's client joins the fabric only after its
	# control connection, which its server accepts after its own fabric
	# set-up; a start barrier would hold that set-up for its 2 s.
	local common=(--fabric "pp$$x$run" --preset $preset --virtual-clock
		--pcap "$pcap")
	"$fabsim" run "${common[@]}" --node 0 -- "$pingpong" -e $ep \
		-S $size -I $iters -c -B $port >server.out 2>&1 &
	server=$!
	sleep 0.2
	if ! out=$(timeout 60 "$fabsim" run "${common[@]}" --node 1 -- \
			"$pingpong" -e $ep -S $size -I $iters -c -P $port \
			127.0.0.1 2>&1); then
		echo "FAIL: $ep $size: the client failed:" >&2
		echo "$out" >&2
		cat server.out >&2
		fail=1
	fi
	timeout 30 tail --pid=$server -f /dev/null || kill $server
	wait $server || { echo "FAIL: $ep $size: the server failed:" >&2
		cat server.out >&2; fail=1; }
	line=$(grep -E '^[0-9]+[kmg]? ' <<<"$out" | tail -1 || true)
}

fail=0
for ep in msg rdm dgram; do
	sizes="64 1024 65536 1048576"
	# A datagram is one packet at most.
	[ $ep = dgram ] && sizes="64 1024 4096"
	for size in $sizes; do
		iters=200
		[ $size -ge 65536 ] && iters=20
		# The same programs twice: the same packets at the same instants.
		run_pair $ep $size $iters second.pcap
		run_pair $ep $size $iters first.pcap
		if [ "$(stat -c %s first.pcap)" -le 1000 ]; then
			echo "FAIL: $ep $size: the trace holds no traffic"
			fail=1
		elif ! cmp -s first.pcap second.pcap; then
			echo "FAIL: $ep $size: two runs wrote different traces"
			fail=1
		fi
		got_us=$(awk '{ print $7 }' <<<"$line")
		got_mbs=$(awk '{ print $6 }' <<<"$line")
		want_us=$(model_us $size)
		want_mbs=$(awk -v s=$size -v t="$want_us" 'BEGIN { printf "%.2f", s / t }')
		echo "$ep $size B: fi_pingpong ${got_us:-?} us ${got_mbs:-?} MB/s; model $want_us us $want_mbs MB/s"
		if [ -z "$got_us" ] || ! within_1pct "$got_us" "$want_us" ||
		   ! within_1pct "$got_mbs" "$want_mbs"; then
			echo "FAIL: $ep $size: not the model's figures"
			fail=1
		fi
	done
done
# --pcap on a shared fabric: the process that creates it decides where the
# whole network is recorded; one that asks for another file, or for one on a
# fabric started without recording, is told on standard error.
pcap_told() {
	local server_pcap=$1 client_pcap=$2 want=$3 port out
	run=$((run + 1))
	port=$(free_port)
	local server_args=(--fabric "pp$$x$run" --node 0)
	[ -n "$server_pcap" ] && server_args+=(--pcap "$server_pcap")
	"$fabsim" run "${server_args[@]}" -- "$pingpong" -e rdm -S 64 -I 5 \
		-B $port >server.out 2>&1 &
	server=$!
	sleep 0.2
	out=$(timeout 60 "$fabsim" run --fabric "pp$$x$run" --node 1 \
		--pcap "$client_pcap" -- "$pingpong" -e rdm -S 64 -I 5 -P $port \
		127.0.0.1 2>&1) || { echo "FAIL: pcap $want: the client failed"; fail=1; }
	wait $server || { echo "FAIL: pcap $want: the server failed"; fail=1; }
	# fabsim run passes the files on as absolute paths.
	if ! grep -q "fabsim: shared fabric pp$$x$run: FI_SIM_PCAP=$PWD/$client_pcap: .*$want" <<<"$out"; then
		echo "FAIL: the client was not told its --pcap is not used ($want):"
		echo "$out"
		fail=1
	fi
	if [ -e "$client_pcap" ]; then
		echo "FAIL: $client_pcap written although the fabric records elsewhere"
		fail=1
	fi
}
pcap_told server.pcap client.pcap "records the whole network to $PWD/server.pcap"
pcap_told "" client2.pcap "started without recording (the first process decides); nothing is recorded"

# A process that asks for another MTU than the fabric's creator is told
# which one its datagrams get (fi_getinfo reported its own as their
# max_msg_size), and its pingpong still runs.
run=$((run + 1))
port=$(free_port)
"$fabsim" run --fabric "pp$$x$run" --node 0 -- "$pingpong" -e dgram -S 64 \
	-I 5 -B $port >server.out 2>&1 &
server=$!
sleep 0.2
out=$(FI_SIM_LINK_MTU=1024 timeout 60 "$fabsim" run --fabric "pp$$x$run" \
	--node 1 -- "$pingpong" -e dgram -S 64 -I 5 -P $port 127.0.0.1 2>&1) ||
	{ echo "FAIL: mtu: the client failed"; echo "$out"; fail=1; }
wait $server || { echo "FAIL: mtu: the server failed"; cat server.out; fail=1; }
if ! grep -q "its links' MTU is 4096 bytes .*asked for 1024" <<<"$out"; then
	echo "FAIL: the client was not told the fabric's MTU:"
	echo "$out"
	fail=1
fi

[ $fail -eq 0 ] && echo PASS
exit $fail
