#!/usr/bin/env bash
# Benchmark: what tracing the block layer costs a test (issue 37's rule: traced throughout only
# where the cost is under 3%). 4K random reads on a filled 1 GiB zram device of its own, at
# every queue depth in QDS (and with `--cpus 0` for the pinned rows), ROUNDS alternating pairs
# of RUNTIME-second runs: `--no-trace` against a full trace (BLKSCOPE_TRACE_MAX_RATE raised so
# that it never stops at a sample), and against blkscope's default (windows above 10000
# events a second). Prints each pair, then per row the medians and the ratios to --no-trace:
# of IOPS, of the whole machine's CPU time per I/O (/proc/stat, so that what the events cost a
# loop device's worker and the interrupts counts too), and of the command's own CPU per I/O.
# Needs root, zram and fio (for the fill).
#
# JOBS gives the job counts (each row with --jobs N); PINNED=0 leaves out the pinned rows.
# MODES gives the runs of each round (off, full, default; `text`: the default read from the
# kernel's text pipe, as before blkscope read the ring buffer's pages, BLKSCOPE_TRACE_TEXT=1;
# `least`: windows as short as the reader makes them, BLKSCOPE_TRACE_MAX_RATE=1, which leaves
# the trace's cost per run and per window without most of its events; `rate=N`: the default
# with windows of N events a second, BLKSCOPE_TRACE_MAX_RATE=N; `soft`: the default with the
# block events kept registered between windows in the kernel's soft mode, as blkscope did until
# 2026-11-28, BLKSCOPE_TRACE_SOFT=1).
# DEVICE=loop runs the rows on a direct-I/O loop device over a filled 1 GiB file in a temporary
# directory instead of zram (its speed is the disk below's, whose noise the pairs must outlast).
#
#   sudo bash bench/trace_cost.sh                 # ROUNDS=3 RUNTIME=2 QDS="1 32" BSS="4k 64k"
#   JOBS="1 2 4" QDS=1 BSS=4k PINNED=0 sudo -E bash bench/trace_cost.sh   # the QD1 rows
#   DEVICE=loop PINNED=0 ROUNDS=5 sudo -E bash bench/trace_cost.sh         # a loop device
set -euo pipefail
ROUNDS=${ROUNDS:-3}
RUNTIME=${RUNTIME:-2}
QDS=${QDS:-1 32}
BSS=${BSS:-4k 64k}
JOBS=${JOBS:-1}
PINNED=${PINNED:-1}
MODES=${MODES:-off full default}
DEVICE=${DEVICE:-zram}
pins=("")
[ "$PINNED" = 1 ] && pins+=("--cpus 0")
. "$(dirname "$0")/lib.sh"
bench_need_fio
bench_build
if [ "$DEVICE" = loop ]; then
  # A direct-I/O loop device over a filled file in a temporary directory: the trace then also
  # follows it onto the disk below (the file's sectors there).
  bench_tmpdir work
  fallocate -l 1G "$work/loop.img"
  bench_loop dev "$work/loop.img" --direct-io=on
  z=${dev#/dev/}
else
  bench_need_zram
  bench_zram z 1G
fi
bench_fill "/dev/$z"
bench_tmpdir scratch
own=$scratch/own
# The whole machine's busy time so far (/proc/stat's cpu line without idle and iowait), in
# clock ticks: tracing costs where the events fire, in the loop device's worker and interrupts
# too, not only in blkscope's process.
busy() { awk '/^cpu /{print $2+$3+$4+$7+$8+$9; exit}' /proc/stat; }
one() { # $1 row label, $2 mode (off|full|default|text|least), then run's extra arguments
  local label=$1 mode=$2; shift 2
  local env=() flag=() out b0 b1
  case $mode in
    off) flag=(--no-trace) ;;
    full) env=(BLKSCOPE_TRACE_MAX_RATE=1e12) ;;
    text) env=(BLKSCOPE_TRACE_TEXT=1) ;;
    least) env=(BLKSCOPE_TRACE_MAX_RATE=1) ;;
    soft) env=(BLKSCOPE_TRACE_SOFT=1) ;;
    rate=*) env=(BLKSCOPE_TRACE_MAX_RATE="${mode#rate=}") ;;
  esac
  b0=$(busy)
  # The command's own CPU time (every thread of it, as bench/matrix.sh counts it) goes to $own.
  out=$(python3 -c 'import resource, subprocess, sys
r = subprocess.run(sys.argv[2:], stdout=subprocess.PIPE, check=True)
u = resource.getrusage(resource.RUSAGE_CHILDREN)
open(sys.argv[1], "w").write("%f" % (u.ru_utime + u.ru_stime))
sys.stdout.buffer.write(r.stdout)' "$own" env "${env[@]}" "$BIN" "${flag[@]}" run "/dev/$z" \
      --op randread --runtime "${RUNTIME}s" --size 1G --confirm "$z" --no-save --json "$@")
  b1=$(busy)
  python3 -c 'import json, os, sys
r = json.loads(sys.argv[4])["results"][0]
t = r.get("trace", {})
# The machine CPU of the whole command per I/O of its run, and its own, in microseconds.
ios = max(r["ios"], 1)
cpu = (int(sys.argv[3]) * 1e6 / os.sysconf("SC_CLK_TCK")) / ios
own = float(open(sys.argv[5]).read()) * 1e6 / ios
rd = t.get("reader_cpu_s")
print("%-22s %-8s %9d %8.2f %8.2f  %s events %s lost %s reader %s" % (sys.argv[1], sys.argv[2], r["iops"], cpu, own, t.get("mode"), t.get("events"), t.get("lost"), "-" if rd is None else "%.1fms" % (rd * 1e3)))' \
    "$label" "$mode" "$((b1 - b0))" "$out" "$own"
}
for bs in $BSS; do
for qd in $QDS; do
for jobs in $JOBS; do
  for pin in "${pins[@]}"; do
    label="$bs-QD$qd-x$jobs${pin:+ pinned}"
    for i in $(seq 1 "$ROUNDS"); do
      # Each round in another order.
      # shellcheck disable=SC2206
      modes=($MODES)
      [ $((i % 2)) = 0 ] && modes=($(printf '%s\n' $MODES | tac))
      for m in "${modes[@]}"; do
        # shellcheck disable=SC2086
        one "${label// /_}" "$m" --bs "$bs" --iodepth "$qd" --jobs "$jobs" $pin
      done
    done
  done
done
done
done | tee /dev/stderr | python3 -c 'import statistics, sys
runs, cpus, owns = {}, {}, {}
for line in sys.stdin:
    row, mode, iops, cpu, own = line.split()[:5]
    runs.setdefault(row, {}).setdefault(mode, []).append(int(iops))
    cpus.setdefault(row, {}).setdefault(mode, []).append(float(cpu))
    owns.setdefault(row, {}).setdefault(mode, []).append(float(own))
print()
print("IOPS, and the machine CPU per I/O (us), medians; each mode against off:")
modes = sys.argv[1].split()
others = [m for m in modes if m != "off"]
print("%-22s" % "row" + "".join("%10s" % m for m in modes) + "".join("%9s" % (m[:4] + "/off") for m in others)
      + "".join("%9s" % ("cpu " + m[:4]) for m in modes) + "".join("%9s" % ("c " + m[:4] + "/o") for m in others))
for row, m in runs.items():
    i = {k: statistics.median(v) for k, v in m.items()}
    c = {k: statistics.median(v) for k, v in cpus[row].items()}
    print("%-22s" % row + "".join("%10d" % i[k] for k in modes) + "".join("%9.3f" % (i[k] / i["off"]) for k in others)
          + "".join("%9.2f" % c[k] for k in modes) + "".join("%9.3f" % (c[k] / c["off"]) for k in others))
print()
print("The command own CPU per I/O (us, all its threads, as bench/matrix.sh counts it), medians:")
print("%-22s" % "row" + "".join("%10s" % m for m in modes) + "".join("%9s" % (m[:4] + "/off") for m in others))
for row, m in owns.items():
    o = {k: statistics.median(v) for k, v in m.items()}
    print("%-22s" % row + "".join("%10.2f" % o[k] for k in modes) + "".join("%9.3f" % (o[k] / o["off"]) for k in others))' "$MODES"
