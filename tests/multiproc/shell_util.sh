# Helpers sourced by the shell tests that run Debian's programs on ours.
#
# Under `bazel test --config=asan` our libraries are instrumented and the
# distribution's programs are not: the sanitizer runtimes ours need must be
# loaded first (the distribution's programs are not ours to leak-check).
# ThreadSanitizer's runtime cannot be preloaded into every program a test
# starts (the shell's helpers die with it): under --config=tsan these tests
# say so and stop.
# sanitizer_env BINARY: BINARY is one of ours; exports LD_PRELOAD and
# ASAN_OPTIONS when it is instrumented, does nothing otherwise.
sanitizer_env() {
	local rt preload=""
	# The name in the binary itself, not ldd's listing: with tests run
	# side by side, ldd's did not always show it (seen: 3 of 9 runs).
	if grep -qa 'libtsan\.so' "$1"; then
		echo "SKIP: under ThreadSanitizer the distribution's programs cannot load our instrumented libraries"
		exit 0
	fi
	for rt in $(ldd "$1" 2>/dev/null | awk '/lib(asan|ubsan)\.so/ { print $3 }'); do
		preload="${preload:+$preload:}$rt"
	done
	if [ -n "$preload" ]; then
		export LD_PRELOAD="$preload${LD_PRELOAD:+:$LD_PRELOAD}"
		export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0:verify_asan_link_order=0"
	fi
}

# free_port: a TCP port of the loopback nobody listens on now (for the
# programs' out-of-band control connections; pids repeat across sandboxes).
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
