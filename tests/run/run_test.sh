#!/usr/bin/env bash
# `fabsim run` runs an unmodified libfabric program on sim; with
# --virtual-clock the program's own clock readings equal the fabric's
# virtual time, and without it they are real time (which differs). With
# --verbs, a verbs program runs on the simulated NIC.
set -euo pipefail
fabsim="$TEST_SRCDIR/fabsim/tools/fabsim"
probe="$TEST_SRCDIR/fabsim/tests/run/vclock_probe"
cd "$TEST_TMPDIR"
# Under --config=asan the probe is instrumented, and --virtual-clock puts
# libfabsim_vclock.so ahead of the ASan runtime in the preload list.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"

field() { awk -v k="$1" '$1 == k { print $2 }' <<<"$2"; }

out=$("$fabsim" run --preset roce-100g --virtual-clock -- "$probe")
echo "$out"
clock=$(field clock_gettime_ns "$out")
tod=$(field gettimeofday_us "$out")
virt=$(field virtual_ns "$out")
[ "$virt" -gt 0 ] || { echo "FAIL: no virtual time passed"; exit 1; }
[ "$clock" = "$virt" ] || { echo "FAIL: clock_gettime $clock != virtual $virt"; exit 1; }
# gettimeofday has microseconds: within one of the virtual figure.
diff=$(( tod - virt / 1000 ))
[ "${diff#-}" -le 1 ] || { echo "FAIL: gettimeofday $tod us vs virtual $virt ns"; exit 1; }

# A program that waits by reading the clock in a loop does not hang: each
# reading past a thousand that find the clock where it was lets 1 us pass.
spin=$(field spin_virtual_ns "$out")
[ "$spin" -ge 100000 ] && [ "$spin" -le 101000 ] ||
	{ echo "FAIL: a 100 us delay read off gettimeofday took $spin ns of virtual time"; exit 1; }
readings=$(field spin_readings "$out")
[ "$readings" -le 1200 ] ||
	{ echo "FAIL: a 100 us delay took $readings readings (1 us each past the first thousand)"; exit 1; }
[ "$(field timezone_only "$out")" = 0 ] ||
	{ echo "FAIL: gettimeofday(NULL, &tz) failed"; exit 1; }
# Its sleeps (25 ms, 3 ms, to 100 ms ahead, 1 s) are virtual time: 1.128 s
# by its clock and by the fabric's, though it ran for much less.
want=1128000000
[ "$(field sleep_clock_ns "$out")" = "$want" ] ||
	{ echo "FAIL: the sleeps took $(field sleep_clock_ns "$out") ns by the program's clock"; exit 1; }
[ "$(field sleep_virtual_ns "$out")" = "$want" ] ||
	{ echo "FAIL: the sleeps took $(field sleep_virtual_ns "$out") ns of virtual time"; exit 1; }

# The clocks start on a whole second: what the program reads in microseconds
# is the same run after run, not only what it reads in nanoseconds.
for i in 1 2 3 4; do
	again=$("$fabsim" run --preset roce-100g --virtual-clock -- "$probe")
	[ "$(field gettimeofday_us "$again")" = "$tod" ] ||
		{ echo "FAIL: gettimeofday read $(field gettimeofday_us "$again") us, then $tod"; exit 1; }
done

# The preset reaches the program: a slower network takes longer.
slow=$("$fabsim" run --preset roce-25g --virtual-clock -- "$probe")
[ "$(field virtual_ns "$slow")" -gt "$virt" ] || { echo "FAIL: --preset ignored"; exit 1; }

# Without --virtual-clock the program reads real time.
real=$("$fabsim" run --preset roce-100g -- "$probe")
[ "$(field clock_gettime_ns "$real")" != "$(field virtual_ns "$real")" ] ||
	{ echo "FAIL: real clock equals virtual time"; exit 1; }

# --verbs: a verbs program gets the simulated NIC's libibverbs and
# librdmacm; with --virtual-clock, Debian's ibv_rc_pingpong times the
# simulated network, the same figure run after run.
if command -v ibv_rc_pingpong >/dev/null; then
	"$fabsim" run --verbs -- ibv_devices | grep -q fabsim0 ||
		{ echo "FAIL: ibv_devices under --verbs lists no simulated NIC"; exit 1; }
	export FABSIM_RUNTIME_DIR="$TEST_TMPDIR/run"
	pingpong() {
		local port=$((20000 + RANDOM % 20000))
		"$fabsim" run --verbs --virtual-clock --fabric "vc$1" --node 0 -- \
			ibv_rc_pingpong -g 0 -n 200 -p $port >server.$1 2>&1 &
		local pid=$!
		sleep 0.3
		"$fabsim" run --verbs --virtual-clock --fabric "vc$1" --node 1 -- \
			ibv_rc_pingpong -g 0 -n 200 -p $port 127.0.0.1 2>&1 |
			grep "usec/iter" | sed 's/.*= //'
		wait $pid
	}
	a=$(pingpong 1); b=$(pingpong 2)
	echo "ibv_rc_pingpong on virtual time: $a, then $b"
	case "$a" in ""|"0.00 usec/iter") echo "FAIL: no virtual time per iteration"; exit 1;; esac
	[ "$a" = "$b" ] || { echo "FAIL: two runs timed $a and $b"; exit 1; }
else
	echo "SKIP: ibv_rc_pingpong is not installed (Debian package ibverbs-utils)"
fi

# Usage errors are status 2 with a message.
set +e
"$fabsim" run --frobnicate -- "$probe" 2>/dev/null; [ $? -eq 2 ] || { echo "FAIL: bad option"; exit 1; }
"$fabsim" run 2>/dev/null; [ $? -eq 2 ] || { echo "FAIL: no program"; exit 1; }
echo PASS
