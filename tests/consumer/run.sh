#!/usr/bin/env bash
# Installs the build into a temporary prefix, builds tests/consumer against it with find_package,
# and runs it. Usage: run.sh BUILD_DIR SOURCE_DIR WORK_DIR
set -euo pipefail
build=$1 source=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
cmake --install "$build" --prefix "$work/prefix" >/dev/null
# The package is the lean library: a consumer needs nlohmann_json and nothing the CLI uses.
if grep -lE "Boost|benchmark|OpenMP|Eigen|CUDA|program_options" "$work"/prefix/lib*/cmake/mhacfg/*.cmake; then
  echo "the installed package depends on a library only the CLI needs (files above)"; exit 1
fi
cmake -S "$source/tests/consumer" -B "$work/build" -DCMAKE_PREFIX_PATH="$work/prefix" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$work/build" -j2 >/dev/null
"$work/build/consumer"
test -x "$work/prefix/bin/mhacfg"
"$work/prefix/bin/mhacfg" profiles >/dev/null
echo "1 passed, 0 failed"
