#!/usr/bin/env bash
# Installs, builds and runs every test: the CTest suite (unit, golden CLI, schema, example and
# browser tests) and the installed-package consumer build. In CI (CI=true), or with MHACFG_SANITIZE=1,
# it then fuzzes each target for MHACFG_FUZZ_SECONDS (default 60), from MHACFG_FUZZ_SAMPLE (200) inputs
# of its corpus, and runs the CPU tests under AddressSanitizer and UndefinedBehaviorSanitizer
# (scripts/fuzz.sh); MHACFG_SANITIZE=0 leaves that out.
set -euo pipefail
cd "$(dirname "$0")/.."
sanitize=${MHACFG_SANITIZE:-0}
[ "${CI:-}" != true ] || sanitize=${MHACFG_SANITIZE:-1}
bash scripts/build.sh "$@"
jobs=$(nproc 2>/dev/null || echo 2)
ctest --test-dir build --output-on-failure -j"$jobs"
echo "== build and tests: $SECONDS s"
if [ "$sanitize" = 1 ]; then
  start=$SECONDS
  MHACFG_FUZZ_MERGE=${MHACFG_FUZZ_MERGE:-0} MHACFG_FUZZ_SAMPLE=${MHACFG_FUZZ_SAMPLE:-200} \
    bash scripts/fuzz.sh "${MHACFG_FUZZ_SECONDS:-60}"
  echo "== sanitized build, fuzzing and sanitized tests: $(( SECONDS - start )) s"
fi
