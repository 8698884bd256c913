#!/usr/bin/env bash
# Benchmark: what the block events cost while registered and off, as a trace kept in windows
# left them between its windows until 2026-11-28 (the kernel's soft mode, docs/tracing.md;
# bench/trace_threads.py measures it thread by thread on any device). `--no-trace` runs
# of 4K random reads at QD1 on a filled 1 GiB zram device (one block_bio_queue event an I/O,
# each I/O a CPU's work: a cost per event shows in its IOPS), ROUNDS alternating pairs of
# RUNTIME seconds: alone, and with a tracefs instance of this script's own whose three block
# events are in soft mode (a trigger that never fires holds them there), made before the run
# and removed after it. Prints each run, then the medians and each pair's ratio. Needs root,
# zram and fio (for the fill).
#
#   sudo bash bench/soft_mode_cost.sh                 # ROUNDS=8 RUNTIME=3
set -euo pipefail
ROUNDS=${ROUNDS:-8}
RUNTIME=${RUNTIME:-3}
. "$(dirname "$0")/lib.sh"
bench_need_fio
bench_need_zram
bench_build
bench_zram z 1G
bench_fill "/dev/$z"
tracing=/sys/kernel/tracing
[ -d "$tracing/instances" ] || mount -t tracefs nodev "$tracing"
soft=$tracing/instances/blkscope-bench-soft
bench_on_exit "rmdir '$soft' 2>/dev/null"
bench_tmpdir work
for i in $(seq 1 "$ROUNDS"); do
  for m in plain soft; do
    if [ "$m" = soft ]; then
      mkdir "$soft"
      for e in block_bio_queue block_rq_issue block_rq_complete; do
        echo "enable_event:block:$e:0" >> "$soft/events/block/block_rq_requeue/trigger"
      done
    fi
    "$BIN" --no-trace run "/dev/$z" --op randread --bs 4k --iodepth 1 --runtime "${RUNTIME}s" \
      --size 1G --confirm "$z" --no-save --json > "$work/out.json"
    [ "$m" = soft ] && rmdir "$soft"
    python3 -c 'import json, sys
r = json.load(open(sys.argv[2]))["results"][0]
print(sys.argv[1], int(r["iops"]), "%.3f" % r["cpu"]["per_io_us"])' "$m" "$work/out.json"
  done
done | tee /dev/stderr | python3 -c 'import statistics, sys
d = {}
for line in sys.stdin:
    m, iops, cpu = line.split()
    d.setdefault(m, []).append((int(iops), float(cpu)))
print()
for m, v in d.items():
    print("%-6s IOPS %9.0f  CPU/IO %.3f us  (medians of %d)" % (m, statistics.median(x[0] for x in v),
          statistics.median(x[1] for x in v), len(v)))
pairs = sorted(s[0] / p[0] for p, s in zip(d["plain"], d["soft"]))
print("each pair, soft/plain IOPS: %s; median %.3f" % (" ".join("%.3f" % x for x in pairs), statistics.median(pairs)))'
