#!/usr/bin/env bash
# Installs missing dependencies, configures and builds mhacfg into build/ (Release).
# Extra CMake arguments pass through, e.g. scripts/build.sh -DMHACFG_CUDA=OFF.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
jobs=$(nproc 2>/dev/null || echo 2)
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
cmake --build build -j"$jobs"
