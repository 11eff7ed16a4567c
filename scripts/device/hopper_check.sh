#!/usr/bin/env bash
# The Hopper prefill alone (Variant::hopper and hopper_ws, kernels/cuda/NOTES.md "Prepared without a
# device (session 22)"), for a quick re-run on the lent H200 after a fix, when the full
# scripts/device/h200_check.sh (which runs the same steps among all the others) is not needed:
#   scripts/device/build.sh   # here; then the device tool: run
#   command "bash scripts/device/hopper_check.sh", carry ["device-bin"], timeout_s 240
# Steps, each in its own process under its own limit (a broken TMA/mbarrier pipeline makes each
# barrier wait give up after 2 s and the tests report it, so nothing should reach the limits):
#   tests      the [hopper] tests (float64 reference, poisoned outputs, every element, no wait gave up);
#              when they fail, tests-pv64 runs them again with MHACFG_HOPPER_DIAG=pv64 (P V as N = 64
#              products, never reading the N-major descriptor's LBO): NOTES.md says how to read both
#   memcheck / racecheck / synccheck   compute-sanitizer on the [hopper][sanitize] case
#   speed      every prefill row of mhacfg_cuda_speed: today's kernels and the [hopper] /
#              [hopper_ws] sweep rows, side by side (JSON in $OUT/speed-prefill.json)
# Output: $OUT/hopper-log.txt; the summary is printed last. Exit 0 only when every step passed.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 3
OUT=${OUT:-$PWD/device-out}
mkdir -p "$OUT"
BIN=./device-bin
LOG="$OUT/hopper-log.txt"
: >"$LOG"
for d in /usr/local/cuda/lib64 /usr/local/cuda/lib /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -d "$d" ] && export LD_LIBRARY_PATH="$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
export PATH="/usr/local/cuda/bin:$PATH"
export LD_LIBRARY_PATH="$PWD/device-bin/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

summary=()
failed=0
step() {  # step NAME LIMIT_S COMMAND...
  local name=$1 limit=$2
  shift 2
  echo "=== $name (limit ${limit}s): $*" | tee -a "$LOG"
  local t0 rc
  t0=$(date +%s)
  timeout --kill-after=10 "$limit" "$@" 2>&1 | tee -a "$LOG" | tail -40
  rc=${PIPESTATUS[0]}
  summary+=("$(printf '%-10s exit %3s after %4ss' "$name" "$rc" "$(($(date +%s) - t0))")")
  [ "$rc" = 0 ] || failed=1
}

nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader 2>&1 | tee -a "$LOG"
step tests 60 "$BIN/mhacfg_cuda_tests" "[hopper]" --durations yes
if [ "$failed" = 1 ]; then  # diagnostic: the same tests with P V as N = 64 blocks (no N-major LBO)
  step tests-pv64 60 env MHACFG_HOPPER_DIAG=pv64 "$BIN/mhacfg_cuda_tests" "[hopper]"
fi
step memcheck 40 compute-sanitizer --tool memcheck --error-exitcode 1 "$BIN/mhacfg_cuda_tests" "[hopper][sanitize]"
step racecheck 40 compute-sanitizer --tool racecheck --error-exitcode 1 "$BIN/mhacfg_cuda_tests" "[hopper][sanitize]"
step synccheck 30 compute-sanitizer --tool synccheck --error-exitcode 1 "$BIN/mhacfg_cuda_tests" "[hopper][sanitize]"
step speed 60 "$BIN/mhacfg_cuda_speed" --only "prefill" --json "$OUT/speed-prefill.json"
{
  echo
  echo "hopper_check summary"
  printf '%s\n' "${summary[@]}"
  grep -E "^prefill .*(TFLOP/s|FAILED)" "$LOG" | grep -v "^prefill attention" || true
} | tee -a "$LOG"
exit $failed
