#!/usr/bin/env bash
# Debian's Open MPI, through its libfabric transport (pml cm, mtl ofi), runs
# an MPI program on sim through fabsim's libfabric.so.1: four ranks, each a
# process on one shared simulated fabric; point-to-point, a collective and
# a barrier give the right results.
set -euo pipefail
src="$TEST_SRCDIR/fabsim/tests/multiproc/mpi_check.c"
fabsim="$TEST_SRCDIR/fabsim/tools/fabsim"
for tool in mpicc mpirun; do
	if ! command -v $tool >/dev/null; then
		echo "SKIP: $tool is not installed (Debian packages openmpi-bin, libopenmpi-dev)"
		exit 0
	fi
done
if ! ompi_info 2>/dev/null | grep -q "MCA mtl: ofi"; then
	echo "SKIP: this Open MPI has no libfabric transport (mtl ofi)"
	exit 0
fi
cd "$TEST_TMPDIR"
. "$TEST_SRCDIR/fabsim/tests/multiproc/shell_util.sh"
sanitizer_env "$fabsim"
mpicc -o mpi_check "$src"
export FABSIM_RUNTIME_DIR="$TEST_TMPDIR/run"
# Open MPI's session directory goes under TMPDIR, named after the user and
# mpirun's pid: runs side by side in PID namespaces would meet in /tmp.
export TMPDIR="$TEST_TMPDIR"
# fabsim run sets the library path, the provider and the shared fabric;
# mpirun carries them to every rank, whose node is its rank.
root=()
[ "$(id -u)" = 0 ] && root=(--allow-run-as-root)
out=$(timeout 120 "$fabsim" run --fabric mpi$$ -- mpirun "${root[@]}" \
	--oversubscribe -np 4 --mca pml cm --mca mtl ofi \
	--mca mtl_ofi_provider_include sim \
	-x LD_LIBRARY_PATH -x FI_PROVIDER -x FI_SIM_FABRIC -x FABSIM_RUNTIME_DIR \
	./mpi_check 2>&1) || { echo "$out"; echo "FAIL: mpirun failed"; exit 1; }
echo "$out"
for r in 0 1 2 3; do
	grep -q "^rank $r of 4: token $(( (r + 3) % 4 )), 400000 bytes from the right intact, sum 10: ok" <<<"$out" ||
		{ echo "FAIL: rank $r"; exit 1; }
done
# They really ran on the shared fabric, one node per rank.
log=$(cat "$FABSIM_RUNTIME_DIR"/mpi$$.log)
for r in 0 1 2 3; do
	grep -q "node $r (pid [0-9]*, mpi_check) joined" <<<"$log" ||
		{ echo "$log"; echo "FAIL: rank $r never joined the fabric"; exit 1; }
done
# MPI_Finalize closes the fabric: every rank leaves, none is taken for dead
# (a rank leaving with notices unread was, until the coordinator read past
# the reset its close makes).
if grep -q "died" <<<"$log"; then
	echo "$log"; echo "FAIL: a rank was reported dead"; exit 1
fi
echo PASS
