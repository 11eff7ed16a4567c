#!/usr/bin/env bash
# Issue 5's one-call check on the lent H200. Runs THERE, from the repository root, on the binaries
# that scripts/device/build.sh made here:
#   device tool run: command "bash scripts/device/h200_check.sh", carry ["device-bin"], timeout_s 600
# Steps (each under its own time limit, about 4x what it took on the H200 on 2026-11-30, so a hang
# costs little device time; the limits add up to 575 s at most, whichever steps run; the whole script
# took 40-60 s before session 22's hopper, MLA-wgmma, indexer and fp8 tests; session 22 raised tests,
# memcheck and racecheck by 20, 15 and 15 s for the indexer tests' float64 references):
#   env        nvidia-smi line, library resolution, sanitizer version
#   tests      every [cuda] test but the Hopper prefill's (float64 references, poisoned outputs, every
#              element checked)
#   memcheck   compute-sanitizer --tool memcheck on the [sanitize] subset (without [hopper])
#   racecheck  compute-sanitizer --tool racecheck on the [sanitize] subset without cuBLAS ([gemm])
#   synccheck  compute-sanitizer --tool synccheck on the same subset
#   hopper     the [hopper] tests (the Hopper prefill, wgmma + TMA, prepared without a device in session
#              22) in a process of their own, so that a fault or a barrier wait that gives up (after 2 s,
#              counted: NOTES.md) cannot spoil the steps above; hopper-memcheck/-racecheck/-synccheck on
#              its [sanitize] case only when they pass; when they fail, the speed step skips its rows
#              and hopper-pv64 reruns them with MHACFG_HOPPER_DIAG=pv64 at the very end
#   mla-wgmma  the [mla_wgmma] tests (MLA decode on wgmma + TMA, session 22) the same way
#   speed      mhacfg_cuda_speed --json $OUT/speed.json [--skip ...] (acceptance table printed last)
#   profile    ncu per-kernel times of the small decode rows (diagnostic; where ncu exists)
#   calibrate  mhacfg calibrate --device cuda --out $OUT/h200-sxm.json --holdout (held-out shapes measured in
#              the same run; their error lands in the profile's "validation") (only if device-bin/mhacfg and
#              the CUDA backend plugin it loads from its own folder, libmhacfg_backend_cuda.so, exist;
#              the full CUDA grid: 205 records (16 linear-attention decode steps, 30 indexer records, 26 fp8
#              GEMMs and 27 fp8-KV decodes not yet timed on the H200), each on 3 fresh allocations timed 23
#              times; ~30 s)
#   validate   mhacfg validate --profile $OUT/h200-sxm.json --in tests/fixtures/h200-torch.train.jsonl
#              (only if calibrate wrote the profile; MHACFG_VALIDATE_ARGS overrides the arguments)
# Output: $OUT/log.txt (everything), speed.json, speed.txt, steps.tsv, summary.txt, h200-sxm.json,
# h200-measured.jsonl (the grid's timings), h200-holdout-measured.jsonl (the held-out shapes' timings);
# the summary table is printed last. Exit status 0 only when every step that ran passed.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 3
OUT=${OUT:-$PWD/device-out}
mkdir -p "$OUT"
BIN=./device-bin
LOG="$OUT/log.txt"
STEPS="$OUT/steps.tsv"
WORK=$(mktemp -d)  # per-step output (all of it is in log.txt too); $OUT returns at most 8 files
: >"$LOG"
: >"$STEPS"

# CUDA 13 libraries (cudart, cuBLAS, cuBLASLt): the toolkit's, else any copy on the machine.
for d in /usr/local/cuda/lib64 /usr/local/cuda/lib /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -d "$d" ] && export LD_LIBRARY_PATH="$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
if ldd "$BIN/mhacfg_cuda_tests" 2>/dev/null | grep -q "not found"; then
  for lib in libcudart.so.13 libcublas.so.13 libcublasLt.so.13; do
    f=$(find /usr/local /opt /usr/lib -name "$lib" 2>/dev/null | head -1)
    [ -n "$f" ] && export LD_LIBRARY_PATH="$(dirname "$f"):$LD_LIBRARY_PATH"
  done
fi
export PATH="/usr/local/cuda/bin:$PATH"
export LD_LIBRARY_PATH="$PWD/device-bin/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"  # build.sh's carried libraries
export BIN

step() {  # step NAME LIMIT_S COMMAND...
  local name=$1 limit=$2
  shift 2
  echo "=== $name (limit ${limit}s): $*" | tee -a "$LOG"
  local t0
  t0=$(date +%s%N)
  timeout --kill-after=10 "$limit" "$@" 2>&1 | tee -a "$LOG" "$WORK/$name.out"
  local rc=${PIPESTATUS[0]}
  local ms=$((($(date +%s%N) - t0) / 1000000))
  printf '%s\t%s\t%s\n' "$name" "$rc" "$ms" >>"$STEPS"
  echo "=== $name: exit $rc after ${ms} ms" | tee -a "$LOG"
  return 0
}

# `timeout` runs programs, not shell functions: the report is a bash -c script.
env_report='nvidia-smi --query-gpu=name,driver_version,pstate,clocks.sm,clocks.mem,temperature.gpu,power.draw,memory.used,memory.total --format=csv
for b in "$BIN"/mhacfg* "$BIN"/libmhacfg_backend_*.so; do [ -e "$b" ] || continue; echo "$b:"; ldd "$b" | grep -E "cuda|cublas|benchmark|not found"; done
compute-sanitizer --version | tail -1'

step env 15 bash -c "$env_report"
# fp8 (session 22): the fp8 GEMM and fp8-KV decode tests are [cuda] (the fp8 GEMM's [sanitize][gemm]
# like bf16's; the small fp8-KV decode case [sanitize]), the speed tool has fp8 rows.
step tests 60 "$BIN/mhacfg_cuda_tests" "[cuda]~[hopper]~[mla_wgmma]" --durations yes
step memcheck 45 compute-sanitizer --tool memcheck --error-exitcode 1 "$BIN/mhacfg_cuda_tests" "[sanitize]~[hopper]~[mla_wgmma]"
step racecheck 45 compute-sanitizer --tool racecheck --error-exitcode 1 "$BIN/mhacfg_cuda_tests" "[sanitize]~[gemm]~[hopper]~[mla_wgmma]"
step synccheck 20 compute-sanitizer --tool synccheck --error-exitcode 1 "$BIN/mhacfg_cuda_tests" "[sanitize]~[gemm]~[hopper]~[mla_wgmma]"
# The kernels prepared without a device in session 22 (Hopper prefill, MLA decode on wgmma): their tests
# in processes of their own, so that a fault or a barrier wait that gives up cannot spoil the steps
# above; their sanitizers only when their tests pass; their speed rows skipped when they fail; and the
# pv64 diagnostic reruns (MHACFG_HOPPER_DIAG=pv64, NOTES.md) at the very end, after calibrate.
passed() { [ "$(tail -1 "$STEPS" | cut -f2)" = 0 ]; }
skip=()
diag=()
step hopper 60 "$BIN/mhacfg_cuda_tests" "[hopper]" --durations yes
if passed; then
  step hopper-memcheck 30 compute-sanitizer --tool memcheck --error-exitcode 1 "$BIN/mhacfg_cuda_tests" "[hopper][sanitize]"
  step hopper-racecheck 30 compute-sanitizer --tool racecheck --error-exitcode 1 "$BIN/mhacfg_cuda_tests" "[hopper][sanitize]"
  step hopper-synccheck 20 compute-sanitizer --tool synccheck --error-exitcode 1 "$BIN/mhacfg_cuda_tests" "[hopper][sanitize]"
else
  skip+=(--skip "[hopper")
  diag+=(hopper)
fi
step mla-wgmma 30 "$BIN/mhacfg_cuda_tests" "[mla_wgmma]" --durations yes
if passed; then
  step mla-wgmma-memcheck 20 compute-sanitizer --tool memcheck --error-exitcode 1 "$BIN/mhacfg_cuda_tests" "[mla_wgmma][sanitize]"
  step mla-wgmma-racecheck 20 compute-sanitizer --tool racecheck --error-exitcode 1 "$BIN/mhacfg_cuda_tests" "[mla_wgmma][sanitize]"
  step mla-wgmma-synccheck 10 compute-sanitizer --tool synccheck --error-exitcode 1 "$BIN/mhacfg_cuda_tests" "[mla_wgmma][sanitize]"
else
  skip+=(--skip "[wgmma")
  diag+=(mla_wgmma)
fi
step speed 60 "$BIN/mhacfg_cuda_speed" --json "$OUT/speed.json" "${skip[@]}"
# Diagnostic, not a check: per-kernel GPU time (Nsight Compute, clocks left alone) of the small decode
# rows, where launch gaps and the combine weigh most; the split kernel and the combine separately.
profile='for c in "decode MQA B1 L32768 32/1 d128" "decode B1 L32768 32/8 d128"; do
  echo "--- $c"
  ncu --clock-control none --metrics gpu__time_duration.sum -k "regex:decode_kernel|combine_kernel" \
    --launch-skip 8 --launch-count 4 "$BIN/mhacfg_cuda_speed" --only "$c" --no-sweeps --calls 20 2>&1 |
    grep -E "decode_kernel|combine_kernel|gpu__time_duration|ERR|rror"
done; exit 0'
if command -v ncu >/dev/null; then step profile 30 bash -c "$profile"; fi
if [ -x "$BIN/mhacfg" ] && [ -f "$BIN/libmhacfg_backend_cuda.so" ]; then
  step calibrate 60 "$BIN/mhacfg" calibrate --device cuda --out "$OUT/h200-sxm.json" \
    --holdout tests/fixtures/h200-holdout-shapes.jsonl --save-measurements "$OUT/h200-measured.jsonl" \
    --save-holdout "$OUT/h200-holdout-measured.jsonl"
  if [ -s "$OUT/h200-sxm.json" ]; then
    # The CLI's validate flags are the configurator's; override with MHACFG_VALIDATE_ARGS when they differ.
    read -r -a vargs <<<"${MHACFG_VALIDATE_ARGS:---profile $OUT/h200-sxm.json --in tests/fixtures/h200-torch.train.jsonl}"
    step validate 20 "$BIN/mhacfg" validate "${vargs[@]}"
  fi
else
  echo "=== calibrate/validate skipped: no device-bin/mhacfg or device-bin/libmhacfg_backend_cuda.so" | tee -a "$LOG"
fi
for tag in "${diag[@]}"; do
  step "$tag-pv64" 45 env MHACFG_HOPPER_DIAG=pv64 "$BIN/mhacfg_cuda_tests" "[$tag]"
done

{
  echo
  echo "summary ($(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1))"
  printf '%-10s %5s %9s  %s\n' step exit seconds result
  failed=0
  while IFS=$'\t' read -r name rc ms; do
    last=$(grep -E "test cases|All tests passed|ERROR SUMMARY|FAILED" "$WORK/$name.out" 2>/dev/null | tail -1)
    [ "$rc" = 0 ] && verdict=ok || { verdict=FAIL; failed=1; }
    printf '%-10s %5s %9.1f  %s %s\n' "$name" "$rc" "$(awk "BEGIN{print $ms/1000}")" "$verdict" "$last"
  done <"$STEPS"
  if [ -s "$WORK/speed.out" ]; then
    cp "$WORK/speed.out" "$OUT/speed.txt"
    echo
    sed -n '/^case /,$p' "$WORK/speed.out"
  fi
  echo "files: $(cd "$OUT" && ls | tr '\n' ' ')"
  exit $failed
} | tee "$OUT/summary.txt" | tee -a "$LOG"
status=${PIPESTATUS[0]}
rm -rf "$WORK"
exit "$status"
