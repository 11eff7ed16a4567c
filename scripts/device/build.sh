#!/usr/bin/env bash
# Builds, HERE (Debian 12, CUDA 13.0 at /usr/local/cuda), the binaries that scripts/device/h200_check.sh
# runs on the lent H200 (Ubuntu 24.04, no libboost_program_options, hence static Boost), and copies
# them into device-bin/ (ignored, carried with the device call; must stay under 64 MiB).
#   scripts/device/build.sh            # then: device tool run, carry ["device-bin"]
# Built: mhacfg_cuda_tests, mhacfg_cuda_speed and, where the configurator provides it, the CLI mhacfg
# with its backend plugins (libmhacfg_backend_cuda.so, libmhacfg_backend_cpu.so), which it loads from
# its own folder when a command measures: they sit next to it in device-bin/.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build="$root/build-device"
bin="$root/device-bin"
jobs=$(nproc 2>/dev/null || echo 2)

cmake -S "$root" -B "$build" \
  -DCMAKE_BUILD_TYPE=Release \
  -DMHACFG_CUDA=ON \
  -DMHACFG_NATIVE=OFF \
  -DMHACFG_STATIC_BOOST=ON \
  -DMHACFG_BUILD_BENCHMARKS=OFF \
  -DMHACFG_CUDA_VERBOSE_PTXAS=ON

targets=(mhacfg_cuda_tests mhacfg_cuda_speed)
help=$(cmake --build "$build" --target help)  # not piped into grep -q: pipefail would see SIGPIPE
if grep -qE '^\.\.\. mhacfg( |$)' <<<"$help"; then
  targets+=(mhacfg)
else
  echo "build.sh: no target 'mhacfg' (the CLI) yet; building the CUDA targets only"
fi
# Keep the ptxas report (registers, shared memory, spills per kernel) next to the binaries: recompile
# the .cu objects so the report is complete even when nothing changed.
find "$build/kernels/cuda" -name '*.cu.o' -delete 2>/dev/null || true
cmake --build "$build" -j"$jobs" --target "${targets[@]}" 2>&1 | tee "$build/build.log"

rm -rf "$bin"
mkdir -p "$bin"
find "$build" -type f -perm -u+x \( -name mhacfg_cuda_tests -o -name mhacfg_cuda_speed -o -name mhacfg \) \
  -exec cp {} "$bin/" \;
if [ -x "$bin/mhacfg" ]; then
  cp "$build"/libmhacfg_backend_*.so "$bin/"
fi
strip --strip-unneeded "$bin"/* 2>/dev/null || true
# Shared libraries the device machine lacks (it has glibc, libstdc++, libgomp and CUDA 13, but e.g.
# Google Benchmark there is another soname than Debian's libbenchmark.so.1debian): carried in lib/,
# which h200_check.sh puts on LD_LIBRARY_PATH.
mkdir -p "$bin/lib"
for b in "$bin"/mhacfg* "$bin"/libmhacfg_backend_*.so; do
  [ -e "$b" ] || continue
  ldd "$b" | awk '$2 == "=>" && $3 ~ /^\// {print $3}' |
    grep -vE '/(libc|libm|libdl|libpthread|librt|libstdc\+\+|libgcc_s|libgomp|ld-linux[^/]*)\.so|/usr/local/cuda' |
    while read -r lib; do cp -L "$lib" "$bin/lib/"; done || true  # grep finds none: nothing to carry
done
grep -E "Compiling entry|registers|spill" "$build/build.log" > "$bin/ptxas.txt" || true
for b in mhacfg_cuda_tests mhacfg_cuda_speed; do
  [ -x "$bin/$b" ] || { echo "build.sh: $b missing from $bin" >&2; exit 1; }
done
if [ -x "$bin/mhacfg" ] && [ ! -f "$bin/libmhacfg_backend_cuda.so" ]; then
  echo "build.sh: $bin/mhacfg without libmhacfg_backend_cuda.so: calibrate --device cuda could not run" >&2
  exit 1
fi
size=$(du -sb "$bin" | cut -f1)
if [ "$size" -ge $((64 * 1024 * 1024)) ]; then
  echo "build.sh: $bin is $size bytes, over the 64 MiB the device call can carry" >&2
  exit 1
fi
ls -la "$bin"
echo "device-bin: $((size / 1024)) KiB. Run on the device: command 'bash scripts/device/h200_check.sh', carry [\"device-bin\"]"
