#!/usr/bin/env bash
# Benchmark: the CPU time of the trace's reader thread (`blkscope-trace`), this build against
# the one at BASE (a commit, built in a temporary worktree), alternately, ROUNDS rounds of
# RUNTIME-second runs of each RATE (BLKSCOPE_TRACE_MAX_RATE: 10000 is the default's windows, 1
# windows as short as the reader makes them, 1e12 a full trace), on a direct-I/O loop device
# over a filled 1 GiB file in a temporary directory. The reader's CPU is read from outside
# (`perf stat -t` attached to the thread), so that a build that does not report it
# (`trace.reader_cpu_s`) is measured alike; it is a part of the process's CPU that the rest of
# the process's noise does not hide. Prints each run, then per build and rate the medians of
# the reader's milliseconds, its nanoseconds an event, and the events. Needs root, fio, perf.
#
#   BASE=37fb140 sudo -E bash bench/trace_reader.sh         # ROUNDS=5 RUNTIME=3 RATES="1 10000 1e12"
#   BASE=37fb140 BS=4k QD=32 RATES=10000 sudo -E bash bench/trace_reader.sh
set -euo pipefail
ROUNDS=${ROUNDS:-5}
RUNTIME=${RUNTIME:-3}
RATES=${RATES:-1 10000 1e12}
BS=${BS:-64k}
QD=${QD:-32}
BASE=${BASE:?BASE=<a commit to compare with>}
. "$(dirname "$0")/lib.sh"
bench_need_fio
command -v perf >/dev/null || { echo "needs perf (apt-get install linux-perf)" >&2; exit 1; }
bench_build
bench_tmpdir work
bench_build_base BASE_BIN "$work"
builds=("$BIN" "$BASE_BIN")
names=(this "$BASE")
fallocate -l 1G "$work/loop.img"
bench_loop dev "$work/loop.img" --direct-io=on
bench_fill "$dev"
one() { # $1 name, $2 binary, $3 rate
  local pid out stat
  stat=$work/stat
  BLKSCOPE_TRACE_MAX_RATE=$3 "$2" run "$dev" --op randread --bs "$BS" --iodepth "$QD" \
    --runtime "${RUNTIME}s" --size 1G --no-save --json > "$work/out.json" &
  pid=$!
  # The reader thread starts with the trace, before the run: counted from when it is there
  # (its first milliseconds, the pages' set-up, are not).
  local tid=
  for _ in $(seq 1 300); do
    tid=$(ps -L -o tid=,comm= -p "$pid" | awk '$2 == "blkscope-trace" {print $1}')
    [ -n "$tid" ] && break
    sleep 0.01
  done
  : > "$stat"
  [ -n "$tid" ] && perf stat -e task-clock -t "$tid" -o "$stat" 2>/dev/null &
  wait "$pid"
  wait
  python3 -c 'import json, re, sys
r = json.load(open(sys.argv[3]))["results"][0]
t = r.get("trace", {})
ms = sum(float(m.group(1)) for m in re.finditer(r"([\d.]+)\s+msec task-clock", open(sys.argv[4]).read().replace(",", "")))
ev = max(t.get("events", 0), 1)
print("%-8s %-6s %8.1f ms %6.0f ns/event %8d events %s windows" % (sys.argv[1], sys.argv[2], ms, ms * 1e6 / ev, ev, t.get("windows")))' \
    "$1" "$3" "$work/out.json" "$stat"
}
for rate in $RATES; do
  for i in $(seq 1 "$ROUNDS"); do
    order=(0 1)
    [ $((i % 2)) = 0 ] && order=(1 0)
    for k in "${order[@]}"; do
      one "${names[$k]}" "${builds[$k]}" "$rate"
    done
  done
done | tee /dev/stderr | python3 -c 'import statistics, sys
runs = {}
for line in sys.stdin:
    w = line.split()
    runs.setdefault((w[0], w[1]), []).append((float(w[2]), float(w[4]), int(w[6])))
print()
print("%-8s %-6s %10s %12s %10s" % ("build", "rate", "reader ms", "ns/event", "events"))
for (b, rate), v in runs.items():
    print("%-8s %-6s %10.1f %12.0f %10d" % (b, rate, statistics.median(x[0] for x in v),
          statistics.median(x[1] for x in v), statistics.median(x[2] for x in v)))'
