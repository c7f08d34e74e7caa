#!/usr/bin/env bash
# bazel run --config=release //:install -- PREFIX (./dev install PREFIX)
# Lays out PREFIX/lib/libfabric.so.1 (+ libfabric.so), PREFIX/include/rdma,
# PREFIX/bin, PREFIX/share/fabsim/fabsim.lua (the Wireshark dissector) and
# PREFIX/lib/pkgconfig/libfabric.pc, the way a libfabric
# installation looks, so that
#   cc prog.c $(PKG_CONFIG_PATH=PREFIX/lib/pkgconfig pkg-config --cflags --libs libfabric)
# builds against fabsim and LD_LIBRARY_PATH=PREFIX/lib runs on it.
set -euo pipefail

if [ $# -ne 1 ]; then
	echo "usage: bazel run --config=release //:install -- PREFIX" >&2
	exit 2
fi
prefix=$1
# bazel run starts us in the runfiles tree; a relative PREFIX means the
# caller's directory.
case "$prefix" in
/*) ;;
*) prefix="${BUILD_WORKING_DIRECTORY:-$PWD}/$prefix" ;;
esac

runfiles=${RUNFILES_DIR:-$0.runfiles}/fabsim
[ -d "$runfiles" ] || runfiles=$PWD

mkdir -p "$prefix/lib/pkgconfig" "$prefix/include" "$prefix/bin"
# cp, not install(1): inside Bazel our own //:install may shadow it on PATH.
cp -fL "$runfiles/api/libfabric.so.1" "$prefix/lib/libfabric.so.1"
chmod 0755 "$prefix/lib/libfabric.so.1"
ln -sfn libfabric.so.1 "$prefix/lib/libfabric.so"
cp -fL "$runfiles/tools/libfabsim_vclock.so" "$prefix/lib/libfabsim_vclock.so"
chmod 0755 "$prefix/lib/libfabsim_vclock.so"
rm -rf "$prefix/include/rdma"
cp -rL "$runfiles/api/include/rdma" "$prefix/include/rdma"
chmod -R u+w,a+rX "$prefix/include/rdma"
# The verbs face (`fabsim run --verbs`), apart from PREFIX/lib.
mkdir -p "$prefix/lib/fabsim-verbs"
for lib in libibverbs.so.1 librdmacm.so.1; do
	cp -fL "$runfiles/providers/sim_verbs/$lib" "$prefix/lib/fabsim-verbs/$lib"
	chmod 0755 "$prefix/lib/fabsim-verbs/$lib"
done
# The Wireshark dissector of fabsim's own headers and marks.
mkdir -p "$prefix/share/fabsim"
cp -fL "$runfiles/traces/wireshark/fabsim.lua" "$prefix/share/fabsim/fabsim.lua"
chmod 0644 "$prefix/share/fabsim/fabsim.lua"
for tool in fabsim; do
	cp -fL "$runfiles/tools/$tool" "$prefix/bin/$tool"
	chmod 0755 "$prefix/bin/$tool"
done

cat >"$prefix/lib/pkgconfig/libfabric.pc" <<PC
prefix=$prefix
exec_prefix=\${prefix}
libdir=\${exec_prefix}/lib
includedir=\${prefix}/include

Name: libfabric
Description: fabsim: the libfabric API on a simulated RDMA NIC
URL: https://ofiwg.github.io/libfabric/
Version: 1.17.0
Libs: -L\${libdir} -lfabric
Cflags: -I\${includedir}
PC
echo "installed fabsim in $prefix"
