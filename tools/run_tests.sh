#!/usr/bin/env bash
# tools/run_tests.sh TEST_BINARY [criterion args...]: runs the Criterion suites and says what the summary hides: how
# many tests were skipped and why (the GPU suites skip on a machine without a CUDA device), so "all passed" on a
# CPU-only machine is never mistaken for a GPU run. Exits with the test binary's status.
set -u
bin=${1:?usage: tools/run_tests.sh TEST_BINARY [args...]}
shift
log=$(mktemp)
trap 'rm -f "$log"' EXIT
"$bin" --verbose "$@" 2>&1 | tee "$log" | grep -v -E '^\[(RUN |PASS|SKIP)\]'
rc=${PIPESTATUS[0]}
ran=$(grep -c '^\[RUN \]' "$log")
skipped=$(grep -E '^\[SKIP\]' "$log" | grep -v -c 'Test is disabled')
nodev=$(grep -E '^\[SKIP\]' "$log" | grep -c 'no CUDA device')
echo "run_tests: $ran tests ran, $skipped skipped ($nodev for want of a CUDA device)."
if [ "$nodev" -gt 0 ]; then
    echo "run_tests: NO GPU TEST RAN HERE: $nodev GPU tests were skipped; only the CPU suites checked anything."
fi
exit "$rc"
