#!/usr/bin/env bash
# bazel run -c opt //providers/sim/bench:pingpong_compare [-- ITERATIONS [SIZES...]]
#
# Wall-clock time per transfer of Debian's fi_pingpong (libfabric-bin)
# between two processes on this machine, side by side in one run:
# sim (two processes on one shared fabric, through fabsim run; real time,
# not the virtual clock) next to Debian's own libfabric with its shm and
# tcp providers. Each figure is the client's usec/xfer, the median of
# PINGPONG_ROUNDS (5) rounds in which the three take turns; the rounds'
# range follows the table.
set -euo pipefail
fabsim="${RUNFILES_DIR:-$0.runfiles}/fabsim/tools/fabsim"
line_handover="${RUNFILES_DIR:-$0.runfiles}/fabsim/providers/sim/bench/line_handover"
iters=${1:-10000}
shift || true
sizes=${*:-64 1024 65536}
command -v fi_pingpong >/dev/null ||
	{ echo "fi_pingpong is not installed (Debian package libfabric-bin)"; exit 1; }
export FABSIM_RUNTIME_DIR=$(mktemp -d)
trap 'rm -rf "$FABSIM_RUNTIME_DIR"' EXIT
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

# one_run PROVIDER SIZE: the client's usec/xfer.
one_run() {
	local prov=$1 size=$2 server client out
	if [ "$prov" = sim ]; then
		local f="bench$$x$RANDOM"
		server=("$fabsim" run --fabric "$f" --node 0 -- fi_pingpong)
		client=("$fabsim" run --fabric "$f" --node 1 -- fi_pingpong)
	else
		server=(fi_pingpong -p "$prov")
		client=(fi_pingpong -p "$prov")
	fi
	"${server[@]}" -e rdm -S "$size" -I "$iters" -B $port >/dev/null 2>&1 &
	local pid=$!
	sleep 0.3
	out=$(timeout 120 "${client[@]}" -e rdm -S "$size" -I "$iters" -P $port \
		127.0.0.1 2>&1) || true
	wait $pid 2>/dev/null || true
	awk '/^[0-9]+[kmg]? / { print $7 }' <<<"$out" | tail -1
}

# median FIGURES...: the middle one of those there are ("" if none).
median() {
	printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'
}

# range FIGURES...: "least-most" ("failed" if none).
range() {
	printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { print NR ? v[1] "-" v[NR] : "failed" }'
}

# This machine's speed comes and goes (a virtual machine's CPUs share the
# host, and where the host runs them changes how fast they share memory:
# shm's 64 B round has taken 0.31 us instead of ~0.63 in about one round in
# fifty): the providers take turns, round after round, so that each sees
# the same conditions, and each keeps the median of its rounds, which one
# lucky or unlucky round does not move.
rounds=${PINGPONG_ROUNDS:-5}
# What the machine is like now (sim's figures scale with it; on a virtual
# machine it may change during the run): before and after.
"$line_handover" 300000
echo "fi_pingpong -e rdm, $iters iterations, usec/xfer (client, median of $rounds rounds)"
printf "%10s %10s %10s %10s %14s %14s\n" bytes sim shm tcp "sim/tcp" "sim/shm"
ranges=()
for size in $sizes; do
	sims=() shms=() tcps=()
	for _ in $(seq "$rounds"); do
		sims+=($(one_run sim "$size"))
		shms+=($(one_run shm "$size"))
		tcps+=($(one_run tcp "$size"))
	done
	sim=$(median "${sims[@]}") shm=$(median "${shms[@]}") tcp=$(median "${tcps[@]}")
	printf "%10s %10s %10s %10s %14s %14s\n" "$size" "${sim:-failed}" \
		"${shm:-failed}" "${tcp:-failed}" \
		"$(awk -v a="$sim" -v b="$tcp" 'BEGIN { if (a && b) printf "%.2f", a / b; else print "-" }')" \
		"$(awk -v a="$sim" -v b="$shm" 'BEGIN { if (a && b) printf "%.2f", a / b; else print "-" }')"
	ranges+=("$(printf "%10s   sim %s   shm %s   tcp %s" "$size" \
		"$(range "${sims[@]}")" "$(range "${shms[@]}")" "$(range "${tcps[@]}")")")
done
echo "each round's figures, least-most:"
printf '%s\n' "${ranges[@]}"
"$line_handover" 300000
