#!/usr/bin/env bash
# Fuzzes what users hand mhacfg (tests/fuzz/cli_targets.cpp): HF configs, profiles, measurement records
# and arguments, with libFuzzer, AddressSanitizer and UndefinedBehaviorSanitizer (clang), and then
# runs the CPU test suite in that sanitized build. scripts/test.sh runs it in CI (60 s per target).
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]   (default 300 s; every target in tests/fuzz/seeds.txt)
#   MHACFG_FUZZ_MAX_LEN=BYTES   the largest input libFuzzer makes (default 4 MiB)
#   MHACFG_FUZZ_TESTS=0         fuzz only, without the test suite
#   MHACFG_FUZZ_MERGE=0         no minimized corpus at the end (CI, which keeps none)
#   MHACFG_FUZZ_SAMPLE=N        start each target from N inputs of its corpus drawn at random, not all
#                               of it (CI: CTest replays every corpus on every build, without sanitizers)
# Each target starts from its corpus in tests/fuzz/seeds.txt, what earlier runs here grew
# (build-fuzz/corpus/), and an input of 3 MiB of many small objects (tests/fuzz/large_inputs.py).
# Inputs that break the contract land in build-fuzz/findings/TARGET/ (libFuzzer's crash-* files): fix
# the cause, then add the input to tests/fuzz/corpus/TARGET/, where CTest replays it on every build.
# The grown corpus, minimized, is packed as build-fuzz/min/TARGET.tar.xz: copy it over
# tests/fuzz/corpus/TARGET.tar.xz to keep it (docs/development.md, "Fuzzing").
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-300}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || mapfile -t targets < <(sed -n 's/^\([a-z_]*\) .*/\1/p' tests/fuzz/seeds.txt)
max_len=${MHACFG_FUZZ_MAX_LEN:-4194304}
MHACFG_SETUP_FUZZ=1 bash scripts/setup.sh
jobs=$(nproc 2>/dev/null || echo 2)
started=$SECONDS
phase() { echo "   ($(( SECONDS - started )) s)"; started=$SECONDS; }

# Only what the fuzz targets and the CPU tests need (no CUDA, Python module or benchmarks), at -O1:
# a sanitized build shares no objects with the Release one (other flags), so it is kept small.
echo "== sanitized build (clang, ASan + UBSan, -O1): build-fuzz/"
sanitize="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
# -ffp-contract=off: no fused multiply-adds, as GCC in ISO mode, so the golden outputs match to the last digit.
launcher=()
! command -v ccache >/dev/null || launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
CC=clang CXX=clang++ cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo "${launcher[@]}" \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only -DNDEBUG" -DMHACFG_CUDA=OFF -DMHACFG_PYTHON=OFF \
  -DMHACFG_BUILD_BENCHMARKS=OFF -DMHACFG_FUZZ=ON "-DCMAKE_CXX_FLAGS=$sanitize -ffp-contract=off -fsanitize=fuzzer-no-link" \
  "-DCMAKE_EXE_LINKER_FLAGS=$sanitize" "-DCMAKE_SHARED_LINKER_FLAGS=$sanitize" >/dev/null
build_targets=(mhacfg mhacfg_costmodel_tests mhacfg_configurator_tests mhacfg_fuzz_replay)
for t in "${targets[@]}"; do build_targets+=("mhacfg_fuzz_$t"); done
cmake --build build-fuzz -j"$jobs" --target "${build_targets[@]}" > build-fuzz/build.log 2>&1 \
  || { tail -40 build-fuzz/build.log; exit 1; }
phase

out=$PWD/build-fuzz  # absolute: the args target changes folder

# One target: its corpus, the fuzzing run, then the corpus minimized and packed. Prints its summary.
fuzz_target() {
  local t=$1 status=0
  local bin=$out/tests/fuzz/mhacfg_fuzz_$t corpus=$out/corpus/$t findings=$out/findings/$t min=$out/min/$t
  mkdir -p "$corpus" "$findings"
  for s in $(sed -n "s/^$t //p" tests/fuzz/seeds.txt); do
    case $s in
      *.tar.xz) tar -xJf "$s" -C "$corpus" ;;
      *) if [ -d "$s" ]; then find "$s" -type f -exec cp -t "$corpus" {} +; else cp "$s" "$corpus"; fi ;;
    esac
  done
  local sample=${MHACFG_FUZZ_SAMPLE:-0}
  if [ "$sample" -gt 0 ]; then
    # libFuzzer runs its whole starting corpus before it mutates: under the sanitizers that is 0.2-1 s
    # an input, longer than the time a CI run gives a target.
    (cd "$corpus" && ls | shuf | tail -n +$((sample + 1)) | xargs -r rm -f)
  fi
  [ "$t" = args ] || python3 tests/fuzz/large_inputs.py "$t" $((3 << 20)) "$corpus/large-3MiB"
  local dict=$PWD/tests/fuzz/json.dict
  [ "$t" != args ] || dict=$PWD/tests/fuzz/args.dict
  echo "== $t: $seconds s from $(ls "$corpus" | wc -l) inputs, up to $max_len bytes"
  # -rss_limit_mb: the CLI caps its inputs (256 MiB files, 64-deep JSON), so 4 GiB is a leak or a blow-up.
  # -timeout (wall clock): a 3 MiB input takes 2-10 s of CPU here; a minute is a blow-up (the
  # quadratic parser this replaced took 68 s in a Release build on 1.2 MB).
  if ! ASAN_OPTIONS=detect_leaks=1 "$bin" "$corpus" -dict="$dict" -max_total_time="$seconds" -timeout=60 \
       -rss_limit_mb=4096 -max_len="$max_len" -artifact_prefix="$findings/" -print_final_stats=1 2> "$out/fuzz-$t.log"; then
    status=1
    echo "   contract broken: $(ls "$findings" | head -3) (log: build-fuzz/fuzz-$t.log)"
  fi
  grep -E '^(Done|stat::(number_of_executed_units|peak_rss_mb))' "$out/fuzz-$t.log" | sed 's/^/   /' || true
  # The merge replays the whole corpus once more; CI (MHACFG_FUZZ_MERGE=0) keeps nothing, so it skips it.
  [ "${MHACFG_FUZZ_MERGE:-1}" = 1 ] || return $status
  rm -rf "$min" && mkdir -p "$min"
  "$bin" -merge=1 -max_len="$max_len" -timeout=60 -rss_limit_mb=4096 "$min" "$corpus" > "$out/merge-$t.log" 2>&1 \
    || { status=1; echo "   merge failed: build-fuzz/merge-$t.log"; }
  tar -C "$min" --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -cJf "$min.tar.xz" .
  echo "   minimized corpus: $(ls "$min" | wc -l) inputs in build-fuzz/min/$t.tar.xz ($(du -k "$min.tar.xz" | cut -f1) KiB)"
  return $status
}

# The targets run side by side, one per core; each prints its summary when it ends.
for t in "${targets[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
  rm -f "$out/status-$t"
  { if fuzz_target "$t"; then echo 0 > "$out/status-$t"; else echo 1 > "$out/status-$t"; fi; } > "$out/summary-$t.txt" 2>&1 &
done
wait
status=0
for t in "${targets[@]}"; do
  cat "$out/summary-$t.txt"
  [ "$(cat "$out/status-$t" 2>/dev/null)" = 0 ] || status=1
done
phase
[ "${MHACFG_FUZZ_TESTS:-1}" = 1 ] || exit $status

echo "== the CPU unit and golden tests under AddressSanitizer and UndefinedBehaviorSanitizer"
# The CTest label sanitize: the costmodel and configurator Catch tests (golden CLI outputs among them).
# The corpus replay tests are left out: each fuzzing run above starts by running its whole corpus.
ctest --test-dir build-fuzz --output-on-failure -j"$jobs" -L sanitize > build-fuzz/ctest.log 2>&1 || status=1
grep -E '^[0-9]+% tests passed|\*\*\*|Failed|Not Run' build-fuzz/ctest.log | sed 's/^/   /' || true
[ $status = 0 ] || tail -60 build-fuzz/ctest.log
phase
exit $status
