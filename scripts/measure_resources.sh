#!/usr/bin/env bash
# Peak memory and wall time of the commands whose inputs grow (issue 26, point 13), measured with
# /usr/bin/time -v ("Maximum resident set size"): `predict` on 1,000,000 kernel records (the CPU held-out
# shapes of tests/fixtures, repeated; target: at most 200 MB) and `calibrate --device cpu --quick`
# (target: at most 1.5 GB). A measured command, not a unit test: it prints the figures and exits 1 when a
# target is missed. docs/security.md ("Resources") quotes its figures.
#
#   scripts/measure_resources.sh [BUILD_DIR] [predict|calibrate|all] [RECORDS]
set -euo pipefail
build=${1:-build}
what=${2:-all}
records=${3:-1000000}
root=$(cd "$(dirname "$0")/.." && pwd)
mhacfg="$build/mhacfg"
[ -x "$mhacfg" ] || { echo "no $mhacfg: build first (scripts/build.sh)" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/mhacfg-resources-XXXXXX")
trap 'rm -rf "$work"' EXIT
status=0

# measure NAME LIMIT_BYTES COMMAND...: runs it under /usr/bin/time -v and prints its peak RSS and wall time.
measure() {
  local name=$1 limit=$2
  shift 2
  /usr/bin/time -v "$@" >"$work/stdout" 2>"$work/time" || { cat "$work/time" >&2; echo "$name: failed" >&2; exit 3; }
  local kib wall
  kib=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$work/time")
  wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$work/time")
  local verdict="ok"
  if [ $((kib * 1024)) -gt "$limit" ]; then verdict="OVER the target"; status=1; fi
  awk -v n="$name" -v k="$kib" -v l="$limit" -v v="$verdict" -v w="$wall" \
    'BEGIN { printf "%s: peak RSS %d KiB (%.1f MB; target %.0f MB) %s, wall %s\n", n, k, k * 1024 / 1e6, l / 1e6, v, w }'
}

if [ "$what" = predict ] || [ "$what" = all ]; then
  python3 - "$root" "$records" "$work/records.jsonl" <<'EOF'
import glob, itertools, sys
root, n, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
lines = [l for f in sorted(glob.glob(root + "/tests/fixtures/cpu-holdout-shapes*.jsonl")) for l in open(f) if l.strip()]
with open(out, "w") as o:
    for _, l in zip(range(n), itertools.cycle(lines)):
        o.write(l)
EOF
  echo "predict: $records records, $(wc -c <"$work/records.jsonl") bytes"
  measure "predict --out FILE" 200000000 "$mhacfg" predict --profile cpu-epyc-2vcpu --in "$work/records.jsonl" --out "$work/predicted.jsonl"
  [ "$(wc -l <"$work/predicted.jsonl")" -eq "$records" ] || { echo "predict: wrong number of lines" >&2; exit 3; }
  measure "predict > stdout" 200000000 "$mhacfg" predict --profile cpu-epyc-2vcpu --in "$work/records.jsonl"
  rm -f "$work/predicted.jsonl" "$work/stdout"
fi
if [ "$what" = calibrate ] || [ "$what" = all ]; then
  measure "calibrate --device cpu --quick" 1500000000 "$mhacfg" calibrate --device cpu --quick --out "$work/cpu.json"
fi
exit $status
