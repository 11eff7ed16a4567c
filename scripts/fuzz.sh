#!/usr/bin/env bash
# Fuzzes what users hand mhacfg (tests/fuzz/cli_targets.cpp): HF configs, profiles, measurement records
# and arguments, with libFuzzer, AddressSanitizer and UndefinedBehaviorSanitizer (clang), and then
# runs the test suite in that sanitized build.
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]   (default 300 s; every target in tests/fuzz/seeds.txt)
# Each target starts from its corpus in tests/fuzz/seeds.txt plus what earlier runs grew (build-fuzz/corpus/).
# Inputs that break the contract land in build-fuzz/findings/TARGET/ (libFuzzer's crash-* files): fix
# the cause, then add the input to tests/fuzz/corpus/TARGET/, where CTest replays it on every build.
# The grown corpus, minimized, is packed as build-fuzz/min/TARGET.tar.xz: copy it over
# tests/fuzz/corpus/TARGET.tar.xz to keep it.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-300}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || mapfile -t targets < <(sed -n 's/^\([a-z_]*\) .*/\1/p' tests/fuzz/seeds.txt)
bash scripts/setup.sh
command -v clang++ >/dev/null || apt-get install -y --no-install-recommends clang libclang-rt-14-dev >/dev/null
jobs=$(nproc 2>/dev/null || echo 2)
sanitize="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
CC=clang CXX=clang++ cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMHACFG_CUDA=OFF \
  -DMHACFG_BUILD_BENCHMARKS=OFF -DMHACFG_FUZZ=ON "-DCMAKE_CXX_FLAGS=$sanitize -fsanitize=fuzzer-no-link" \
  "-DCMAKE_EXE_LINKER_FLAGS=$sanitize" "-DCMAKE_SHARED_LINKER_FLAGS=$sanitize" >/dev/null
cmake --build build-fuzz -j"$jobs"

out=$PWD/build-fuzz  # absolute: the args target changes folder
status=0
for t in "${targets[@]}"; do
  bin=$out/tests/fuzz/mhacfg_fuzz_$t corpus=$out/corpus/$t findings=$out/findings/$t min=$out/min/$t
  mkdir -p "$corpus" "$findings"
  for s in $(sed -n "s/^$t //p" tests/fuzz/seeds.txt); do
    case $s in
      *.tar.xz) tar -xJf "$s" -C "$corpus" ;;
      *) if [ -d "$s" ]; then find "$s" -type f -exec cp -t "$corpus" {} +; else cp "$s" "$corpus"; fi ;;
    esac
  done
  dict=$PWD/tests/fuzz/json.dict
  [ "$t" != args ] || dict=$PWD/tests/fuzz/args.dict
  echo "== $t: $seconds s from $(ls "$corpus" | wc -l) inputs"
  # -rss_limit_mb: the CLI caps its inputs (256 MiB files, 64-deep JSON), so 4 GiB is a leak or a blow-up.
  if ! ASAN_OPTIONS=detect_leaks=1 "$bin" "$corpus" -dict="$dict" -max_total_time="$seconds" -timeout=20 \
       -rss_limit_mb=4096 -max_len=65536 -artifact_prefix="$findings/" -print_final_stats=1 2> "$out/fuzz-$t.log"; then
    status=1
    echo "   contract broken: $(ls "$findings" | head -3) (log: build-fuzz/fuzz-$t.log)"
  fi
  grep -E '^(Done|stat::peak_rss_mb)' "$out/fuzz-$t.log" | sed 's/^/   /' || true
  rm -rf "$min" && mkdir -p "$min"
  "$bin" -merge=1 "$min" "$corpus" > "$out/merge-$t.log" 2>&1 || { status=1; echo "   merge failed: build-fuzz/merge-$t.log"; }
  tar -C "$min" --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -cJf "$min.tar.xz" .
  echo "   minimized corpus: $(ls "$min" | wc -l) inputs in build-fuzz/min/$t.tar.xz"
done
echo "== the test suite under AddressSanitizer and UndefinedBehaviorSanitizer"
# Left out: the installed-package build, and the CPU calibration, whose time limit a sanitized build misses.
ctest --test-dir build-fuzz --output-on-failure -j"$jobs" -E 'consumer.find_package|calibration.cpu_holdout' || status=1
exit $status
