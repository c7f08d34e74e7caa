#!/usr/bin/env bash
# `fabsim run` runs an unmodified libfabric program on sim; with
# --virtual-clock the program's own clock readings equal the fabric's
# virtual time, and without it they are real time (which differs).
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

# The preset reaches the program: a slower network takes longer.
slow=$("$fabsim" run --preset roce-25g --virtual-clock -- "$probe")
[ "$(field virtual_ns "$slow")" -gt "$virt" ] || { echo "FAIL: --preset ignored"; exit 1; }

# Without --virtual-clock the program reads real time.
real=$("$fabsim" run --preset roce-100g -- "$probe")
[ "$(field clock_gettime_ns "$real")" != "$(field virtual_ns "$real")" ] ||
	{ echo "FAIL: real clock equals virtual time"; exit 1; }

# Usage errors are status 2 with a message.
set +e
"$fabsim" run --frobnicate -- "$probe" 2>/dev/null; [ $? -eq 2 ] || { echo "FAIL: bad option"; exit 1; }
"$fabsim" run 2>/dev/null; [ $? -eq 2 ] || { echo "FAIL: no program"; exit 1; }
echo PASS
