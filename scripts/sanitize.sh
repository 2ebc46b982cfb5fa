#!/usr/bin/env bash
# scripts/sanitize.sh tsan|asan [FILTER]: builds the tests with ThreadSanitizer or
# AddressSanitizer (`--sanitize=thread|address`, in .build/tsan or .build/asan, apart from the
# normal build) and runs them, all of them or those matching FILTER (`swift test --filter`).
# Prints the tests' totals and the number of sanitizer reports, and fails on a failed test or
# any report. The full log is in .build/<mode>.log.
#   ASan: leak detection is off (LeakSanitizer would report the process-lifetime caches of
#   libvpx, FFmpeg and NSS at exit, which are not leaks of a running program).
#   TSan: halt_on_error=0 so one run lists every race, each with both stacks; the races TSan
#   cannot see the lock of (Swift's Mutex on Linux, a system library) are in
#   scripts/tsan-suppressions.txt with why.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:?usage: scripts/sanitize.sh tsan|asan [FILTER]}
filter=${2:-}
case "$mode" in
  tsan) sanitizer=thread ;;
  asan) sanitizer=address ;;
  *) echo "usage: scripts/sanitize.sh tsan|asan [FILTER]" >&2; exit 64 ;;
esac
SWIFT=${SWIFT:-swift}
scratch=.build/$mode
log=.build/$mode.log
mkdir -p .build
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=0 second_deadlock_stack=1 history_size=4 suppressions=$PWD/scripts/tsan-suppressions.txt}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0 halt_on_error=0}
started=$(date +%s)
"$SWIFT" build --build-tests --sanitize="$sanitizer" --scratch-path "$scratch" >"$log" 2>&1 ||
  { tail -40 "$log"; exit 1; }
built=$(date +%s)
status=0
"$SWIFT" test --skip-build --sanitize="$sanitizer" --scratch-path "$scratch" \
  ${filter:+--filter "$filter"} >>"$log" 2>&1 || status=$?
reports=$(grep -cE "WARNING: ThreadSanitizer|ERROR: AddressSanitizer|runtime error:" "$log" || true)
summary=$(grep -E "^[[:space:]]*Executed [0-9]+ tests?, with" "$log" | tail -1 || true)
echo "$mode: ${summary:-no test totals (see $log)}; $reports sanitizer report(s);" \
  "build $((built - started)) s, tests $(($(date +%s) - built)) s"
if [ "$reports" -gt 0 ]; then
  grep -E -A12 "WARNING: ThreadSanitizer|ERROR: AddressSanitizer|runtime error:" "$log" | head -80
  exit 1
fi
exit $status
