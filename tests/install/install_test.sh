#!/usr/bin/env bash
# The install target lays out a libfabric-like prefix that pkg-config and a
# C compiler can use, and the installed library runs a program.
set -euo pipefail
fail() { echo "FAIL: $*" >&2; exit 1; }

prefix="$TEST_TMPDIR/prefix"
RUNFILES_DIR="$TEST_SRCDIR" "$TEST_SRCDIR/fabsim/install" "$prefix"

[ -f "$prefix/lib/libfabric.so.1" ] || fail "no lib/libfabric.so.1"
[ "$(readlink "$prefix/lib/libfabric.so")" = libfabric.so.1 ] || fail "libfabric.so link"
for h in fabric.h fi_domain.h fi_endpoint.h fi_cm.h fi_eq.h fi_rma.h fi_tagged.h \
	fi_atomic.h fi_errno.h providers/fi_prov.h providers/fi_log.h; do
	f="$prefix/include/rdma/$h"
	[ -f "$f" ] && [ ! -L "$f" ] || fail "include/rdma/$h missing or a link"
done
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
[ "$(pkg-config --modversion libfabric)" = 1.17.0 ] || fail "pkg-config version"
flags=$(pkg-config --cflags --libs libfabric)

cat >"$TEST_TMPDIR/prog.c" <<'PROG'
#include <stdio.h>
#include <rdma/fabric.h>
#ifndef FABSIM_RDMA_HEADERS
#error "pkg-config gave the distribution's headers"
#endif
int main(void)
{
	struct fi_info *info;
	int ret = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, NULL, &info);
	if (ret) {
		printf("fi_getinfo: %s\n", fi_strerror(-ret));
		return 1;
	}
	printf("%s\n", info->fabric_attr->prov_name);
	fi_freeinfo(info);
	return 0;
}
PROG
# shellcheck disable=SC2086
cc "$TEST_TMPDIR/prog.c" -o "$TEST_TMPDIR/prog" $flags || fail "cannot compile with pkg-config flags"
# A sanitizer build of the library needs its runtimes loaded first.
preload=""
for rt in asan ubsan; do
	if readelf -d "$prefix/lib/libfabric.so.1" | grep -q "NEEDED.*lib$rt"; then
		preload="$preload:$(cc -print-file-name=lib$rt.so)"
	fi
done
out=$(LD_PRELOAD="${preload#:}" ASAN_OPTIONS=detect_leaks=0 LD_LIBRARY_PATH="$prefix/lib" "$TEST_TMPDIR/prog") || fail "program failed: $out"
[ "$out" = sim ] || fail "expected the sim provider, got: $out"
# The installed command line finds the installed library.
LD_PRELOAD="${preload#:}" ASAN_OPTIONS=detect_leaks=0 "$prefix/bin/fabsim" info >"$TEST_TMPDIR/info.txt" ||
	fail "installed fabsim info failed"
grep -q "^  sim 0.1" "$TEST_TMPDIR/info.txt" || fail "fabsim info does not list sim"
# The verbs face, apart from lib/, which `fabsim run --verbs` finds.
for lib in libibverbs.so.1 librdmacm.so.1; do
	[ -f "$prefix/lib/fabsim-verbs/$lib" ] || fail "no lib/fabsim-verbs/$lib"
done
[ ! -e "$prefix/lib/libibverbs.so.1" ] || fail "lib/ shadows rdma-core's libibverbs"
if command -v ibv_devices >/dev/null; then
	LD_PRELOAD="${preload#:}" ASAN_OPTIONS=detect_leaks=0 \
		"$prefix/bin/fabsim" run --verbs -- ibv_devices >"$TEST_TMPDIR/devices.txt" ||
		fail "installed fabsim run --verbs failed"
	grep -q fabsim0 "$TEST_TMPDIR/devices.txt" || fail "run --verbs: no simulated NIC"
fi
# The Wireshark dissector, which the demo's hint names.
[ -f "$prefix/share/fabsim/fabsim.lua" ] || fail "no share/fabsim/fabsim.lua"
TMPDIR="$TEST_TMPDIR" LD_PRELOAD="${preload#:}" ASAN_OPTIONS=detect_leaks=0 \
	"$prefix/bin/fabsim" demo >"$TEST_TMPDIR/demo.txt" 2>&1 || fail "installed fabsim demo failed"
grep -qF "lua_script:$(realpath "$prefix/share/fabsim/fabsim.lua")" "$TEST_TMPDIR/demo.txt" ||
	fail "the demo's hint does not name the installed dissector"
echo PASS
