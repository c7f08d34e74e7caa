#!/usr/bin/env bash
# Builds the libFuzzer target (clang, ASan + UBSan) and fuzzes the trace reader and packet parser,
# starting from the test captures and traces/testdata/fuzz_seeds/. Extra arguments go to libFuzzer.
#   traces/fuzz/run_fuzz.sh -max_total_time=600          # ten minutes
#   traces/fuzz/run_fuzz.sh -runs=100000 -jobs=2
# The growing corpus lives in ${FUZZ_CORPUS:-/tmp/fabsim-fuzz-corpus}; crashes are written to the
# directory it was started from (crash-*; or $FUZZ_ARTIFACTS), each a file to feed back: bazel-bin/traces/fuzz_reader_bin crash-...
set -euo pipefail
here=$PWD
cd "$(dirname "$0")/../.."
command -v clang >/dev/null || { echo "run_fuzz.sh: clang is not installed (apt-get install clang libclang-rt-14-dev)" >&2; exit 2; }
bazel build //traces:fuzz_reader >&2
corpus=${FUZZ_CORPUS:-/tmp/fabsim-fuzz-corpus}
mkdir -p "$corpus"
cp -n traces/testdata/*.pcap traces/testdata/fuzz_seeds/* "$corpus"/ 2>/dev/null || true
exec bazel-bin/traces/fuzz_reader_bin -max_len=70000 -timeout=10 -print_final_stats=1 \
	-artifact_prefix="${FUZZ_ARTIFACTS:-$here/}" "$corpus" "$@"
