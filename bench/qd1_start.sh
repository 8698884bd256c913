#!/usr/bin/env bash
# Benchmark: how much of an unpinned QD1 result on zram depends on what else runs beside it.
# zram takes no non-blocking reads, so io_uring hands each one to an io-wq worker thread;
# where the scheduler puts that worker against the job thread (same CPU or not) decides most of
# the latency (docs/benchmarks.md, "QD1 on zram, and `--cpus`"). This runs 4K random reads at QD1 on a
# filled zram of its own with fio and with blkscope, each alone and each with a 300 ms busy loop
# started beside it at the same moment (what a JSON parser started in the same shell pipeline
# does), in turn, ROUNDS times RUNTIME seconds; prints every run and the medians, then each
# variant's IOPS in every 100 ms of the run (the median over the rounds: fio's --write_iops_log
# with --log_avg_msec=100, blkscope's samples), which shows when the two threads part and that
# they share a CPU only while the busy loop runs. Needs root, zram and fio.
#
#   bash bench/qd1_start.sh            # ROUNDS=5 RUNTIME=2
set -euo pipefail
ROUNDS=${ROUNDS:-5}
RUNTIME=${RUNTIME:-2}
. "$(dirname "$0")/lib.sh"
bench_need_fio
bench_build
bench_need_zram
bench_tmpdir work
bench_zram z 1G
bench_fill "/dev/$z"

# Each prints the run's IOPS and appends "VARIANT IOPS-per-100ms..." to $work/series.
fio_iops() {
  rm -f "$work"/fl_iops.*.log
  fio --name=b --rw=randread --bs=4k --iodepth=1 --ioengine=io_uring --time_based \
      --runtime="$RUNTIME" --size=1G --output-format=json --filename="/dev/$z" --direct=1 \
      --fixedbufs --registerfiles --randrepeat=0 --write_iops_log="$work/fl" --log_avg_msec=100 \
      > "$work/out.json"
  python3 - "$work" "$1" <<'PY'
import glob, json, sys
work, v = sys.argv[1], sys.argv[2]
print(int(json.load(open(f"{work}/out.json"))["jobs"][0]["read"]["iops"]))
log = glob.glob(f"{work}/fl_iops.*.log")[0]
per = [line.split(",")[1].strip() for line in open(log) if line.strip()]
open(f"{work}/series", "a").write(" ".join([v] + per) + "\n")
PY
}
blk_iops() {
  "$BIN" run "/dev/$z" --op randread --bs 4k --iodepth 1 --mode direct --runtime "${RUNTIME}s" \
      --size 1G --confirm "$z" --no-save --json > "$work/out.json"
  python3 - "$work" "$1" <<'PY'
import json, sys
work, v = sys.argv[1], sys.argv[2]
r = json.load(open(f"{work}/out.json"))["results"][0]
print(int(r["iops"]))
per = [str(round(s["iops"])) for s in r["samples"] if not s["ramp"]]
open(f"{work}/series", "a").write(" ".join([v] + per) + "\n")
PY
}
# A CPU kept busy for 300 ms, from the moment the tool starts (its first I/O comes 30-50 ms in).
burn() { timeout 0.3 sh -c 'while :; do :; done' || true; }

for i in $(seq 1 "$ROUNDS"); do
  for v in fio-alone blk-alone fio-burn blk-burn; do
    tool=${v%-*}
    if [ "${v#*-}" = burn ]; then
      burn &
      n=$("${tool}_iops" "$v")
      wait
    else
      n=$("${tool}_iops" "$v")
    fi
    echo "$v $n"
  done
done | tee /dev/stderr | python3 -c 'import statistics, sys
runs = {}
for line in sys.stdin:
    v, n = line.split()
    runs.setdefault(v, []).append(int(n))
print()
for v in ("fio-alone", "blk-alone", "fio-burn", "blk-burn"):
    print(f"{v:<10} median {statistics.median(runs[v]):8.0f} IOPS  ({min(runs[v])}-{max(runs[v])})")'
# IOPS in each 100 ms of the run, the median over the rounds (in thousands).
python3 - "$work/series" <<'PY'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    v, *per = line.split()
    runs.setdefault(v, []).append([float(x) for x in per])
print("\nIOPS (thousands) in each 100 ms of the run, median over the rounds:")
for v in ("fio-alone", "blk-alone", "fio-burn", "blk-burn"):
    n = min(len(r) for r in runs[v])
    print(f"{v:<10} " + " ".join(f"{statistics.median(r[k] for r in runs[v]) / 1000:5.1f}" for k in range(n)))
PY
