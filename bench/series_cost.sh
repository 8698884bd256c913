#!/usr/bin/env bash
# Benchmark: does keeping the time series (per-interval latency buckets, the samples, the
# encoded histogram) slow the engine? 4K random read QD32 on a zram device filled with random
# data (so reads touch real pages), alternating PAIRS runs of this tree's blkscope and of BASE's
# (default: the commit before the series were kept), medians of IOPS. Goal: within 2%.
# Also the size of the saved file of a 60 s run (goal: under 1 MiB). Needs root.
#
#   sudo bash bench/series_cost.sh                 # BASE=3c88560 PAIRS=5 RUNTIME=3
set -euo pipefail
BASE=${BASE:-3c88560}
PAIRS=${PAIRS:-5}
RUNTIME=${RUNTIME:-3}
. "$(dirname "$0")/lib.sh"
bench_need_zram
bench_build
NEW=$BIN
bench_tmpdir work
bench_build_base BASE_BIN "$work"
OLD=$BASE_BIN
bench_zram zdev 1G
head -c 1G /dev/urandom | dd of="/dev/$zdev" bs=1M oflag=direct status=none
iops() {
  "$1" run "/dev/$zdev" --op randread --bs 4k --iodepth 32 --runtime "${RUNTIME}s" \
    --confirm "$zdev" --no-save --json 2>/dev/null |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["results"][0]["iops"])'
}
new=() ; old=()
for i in $(seq 1 "$PAIRS"); do
  n=$(iops "$NEW"); o=$(iops "$OLD")
  new+=("$n"); old+=("$o")
  echo "pair $i: with series $n IOPS, without $o IOPS"
done
python3 - "${new[*]}" "${old[*]}" <<'PY'
import statistics, sys
n = statistics.median(float(x) for x in sys.argv[1].split())
o = statistics.median(float(x) for x in sys.argv[2].split())
print(f"median: with series {n:.0f} IOPS, without {o:.0f} IOPS: {n/o:.3f}x (goal >= 0.98x)")
PY
export XDG_DATA_HOME=$work/data
"$NEW" run "/dev/$zdev" --op randread --bs 4k --iodepth 32 --runtime 60s --confirm "$zdev" \
  >/dev/null 2>&1
f=$(ls "$work/data/blkscope/runs/"*.json)
echo "saved file of a 60 s run: $(stat -c %s "$f") bytes (goal < 1048576)"
