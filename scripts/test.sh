#!/usr/bin/env bash
# Installs, builds and runs every test: the CTest suite (unit, golden CLI, schema, example and
# browser tests) and the installed-package consumer build.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh "$@"
jobs=$(nproc 2>/dev/null || echo 2)
ctest --test-dir build --output-on-failure -j"$jobs"
