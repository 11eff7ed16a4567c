#!/usr/bin/env bash
# Installs the build into a temporary prefix, builds tests/consumer against it with find_package,
# and runs it. Usage: run.sh BUILD_DIR SOURCE_DIR WORK_DIR
set -euo pipefail
build=$1 source=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
cmake --install "$build" --prefix "$work/prefix" >/dev/null
# The core package is the lean library: its targets need nlohmann_json and nothing the CLI or the
# kernels use (those come only with COMPONENTS kernels).
if grep -lE "Boost|benchmark|OpenMP|Eigen|CUDA|program_options" "$work"/prefix/lib*/cmake/mhacfg/mhacfgTargets*.cmake; then
  echo "the installed package depends on a library only the CLI needs (files above)"; exit 1
fi
cmake -S "$source/tests/consumer" -B "$work/build" -DCMAKE_PREFIX_PATH="$work/prefix" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$work/build" -j2 >/dev/null
"$work/build/consumer"
test -x "$work/prefix/bin/mhacfg"
"$work/prefix/bin/mhacfg" profiles >/dev/null
# The installed CLI finds its CPU backend plugin (<prefix>/<libdir>/mhacfg) and measures with it.
printf '{"op": "gemm", "m": 4, "n": 8, "k": 8, "dtype": "fp32"}\n' >"$work/gemm.jsonl"
timed=$(env -u MHACFG_BACKEND_DIR "$work/prefix/bin/mhacfg" bench --in "$work/gemm.jsonl" --repetitions 1)
grep -q '"backend":"mhacfg-cpu"' <<<"$timed"
echo "1 passed, 0 failed"
