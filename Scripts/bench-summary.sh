#!/bin/sh
# Times `bledissect summary`, `hr --csv` and `gatt` on a capture (default bench/hr_1_5M.btsnoop, made by
# Scripts/captures/make_bench_capture.py) and prints the best of N runs in frames per second,
# beside `info` (reading only) for reference. Usage: Scripts/bench-summary.sh [capture] [runs]
set -eu
capture=${1:-bench/hr_1_5M.btsnoop}
runs=${2:-5}
binary=${BLEDISSECT:-.build/release/bledissect}
[ -x "$binary" ] || swift build -c release --product bledissect >/dev/null
frames=$("$binary" info "$capture" | awk '/^frames:/ { print $2 }')
timing=$(mktemp)
trap 'rm -f "$timing"' EXIT
best() {
  best=""
  for _ in $(seq "$runs"); do
    /usr/bin/time -o "$timing" -f "%e %M" "$binary" "$@" >/dev/null 2>&1 || true
    t=$(tail -1 "$timing")
    e=${t% *}
    if [ -z "$best" ] || [ "$(echo "$e < ${best% *}" | bc)" = 1 ]; then best=$t; fi
  done
  echo "$best"
}
for command in "summary" "summary --json" "hr --csv" "gatt" "info"; do
  set -- $command "$capture"
  r=$(best "$@")
  e=${r% *}
  echo "$command: best of $runs: ${e} s, $(echo "$frames / $e" | bc) frames/s, peak RSS ${r#* } KB ($frames frames)"
done
