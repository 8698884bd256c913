#!/usr/bin/env bash
# Benchmark: what reading never-written blocks flatters (the never_written finding). 4K random
# reads with blkscope on two 1 GiB zram devices of its own, one never written and one filled
# with incompressible data (bench_fill), alternately, ROUNDS runs of RUNTIME seconds each at
# every queue depth in QDS; prints every run, whether blkscope raised never_written, and the
# medians. Needs root, zram (/sys/class/zram-control) and fio (for the fill).
#
#   bash bench/empty_vs_filled.sh            # ROUNDS=3 RUNTIME=2 QDS="1 32"
set -euo pipefail
ROUNDS=${ROUNDS:-3}
RUNTIME=${RUNTIME:-2}
QDS=${QDS:-1 32}
. "$(dirname "$0")/lib.sh"
bench_need_fio
bench_need_zram
bench_build
bench_zram empty 1G
bench_zram filled 1G
bench_fill "/dev/$filled"
printf '%-4s %-7s %9s  %s\n' QD device IOPS never_written
for qd in $QDS; do
  for i in $(seq 1 "$ROUNDS"); do
    for z in "$empty" "$filled"; do
      kind=$([ "$z" = "$empty" ] && echo empty || echo filled)
      "$BIN" run "/dev/$z" --op randread --bs 4k --iodepth "$qd" --runtime "${RUNTIME}s" \
          --size 1G --confirm "$z" --no-save --json |
        python3 -c 'import json, sys
r = json.load(sys.stdin)["results"][0]
nw = "yes" if any(f["kind"] == "never_written" for f in r["findings"]) else "no"
print("%-4s %-7s %9d  %s" % (sys.argv[1], sys.argv[2], r["iops"], nw))' "$qd" "$kind"
    done
  done
done | tee /dev/stderr | python3 -c 'import statistics, sys
runs = {}
for line in sys.stdin:
    qd, kind, iops, _ = line.split()
    runs.setdefault((int(qd), kind), []).append(int(iops))
print()
for qd in sorted({q for q, _ in runs}):
    e, f = statistics.median(runs[(qd, "empty")]), statistics.median(runs[(qd, "filled")])
    print(f"QD{qd}: median {e:.0f} IOPS empty, {f:.0f} filled: the empty device reads {e / f:.2f}x as fast")'
