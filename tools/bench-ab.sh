#!/usr/bin/env bash
# A/B of two sapiens-cli builds on the 0.4b backbone at 1024x768: the builds alternate, ROUNDS times for
# each dtype, so that a machine whose speed drifts within minutes treats both alike. Prints one line per
# run: time (median of 2 after 1 warm-up), floor ratio (time over the FLOPs at the GEMM rate measured in
# the same run) and peak RSS. Compare the floor ratios of the two builds, not times across machines.
#   tools/bench-ab.sh BEFORE_CLI AFTER_CLI [ROUNDS=2] [DTYPES="bf16 fp32"]
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: tools/bench-ab.sh BEFORE_CLI AFTER_CLI [ROUNDS] [DTYPES]" >&2; exit 2; }
before="$1" after="$2" rounds="${3:-2}" dtypes="${4:-bf16 fp32}"
for round in $(seq "$rounds"); do
  for dtype in $dtypes; do
    for which in before after; do
      exe="$before"
      [ "$which" = after ] && exe="$after"
      "$exe" bench --arch 0.4b --task backbone --height 1024 --width 768 --dtype "$dtype" --iterations 2 \
        --warmup 1 --json 2>/dev/null |
        /usr/bin/python3 -c 'import json, sys
r = json.load(sys.stdin)
t, ratio, floor, rss = (r[k] for k in ("ms_median", "floor_ratio", "gflops_floor", "peak_rss_mb"))
print(f"round {sys.argv[1]} {sys.argv[2]:>4} {sys.argv[3]:>6}: {t:8.0f} ms  floor ratio {ratio:.2f}"
      f"  (floor {floor:.0f} GFLOP/s)  peak RSS {rss:.0f} MB")' "$round" "$dtype" "$which"
    done
  done
done
