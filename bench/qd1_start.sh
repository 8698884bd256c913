#!/usr/bin/env bash
# Benchmark: how much of an unpinned QD1 result on zram the first moments of the run decide.
# zram takes no non-blocking reads, so io_uring hands each one to an io-wq worker thread;
# where the scheduler puts that worker against the job thread (same CPU or not) decides most of
# the latency (README, "QD1 on zram, and `--cpus`"). This runs 4K random reads at QD1 on a
# filled zram of its own with fio and with blkscope, each alone and each with a 300 ms busy loop
# started beside it at the same moment (what a JSON parser started in the same shell pipeline
# does), in turn, ROUNDS times RUNTIME seconds; prints every run and the medians. Needs root,
# zram and fio.
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

fio_iops() {
  fio --name=b --rw=randread --bs=4k --iodepth=1 --ioengine=io_uring --time_based \
      --runtime="$RUNTIME" --size=1G --output-format=json --filename="/dev/$z" --direct=1 \
      --fixedbufs --registerfiles --randrepeat=0 > "$work/out.json"
  python3 -c 'import json, sys; print(int(json.load(open(sys.argv[1]))["jobs"][0]["read"]["iops"]))' "$work/out.json"
}
blk_iops() {
  "$BIN" run "/dev/$z" --op randread --bs 4k --iodepth 1 --mode direct --runtime "${RUNTIME}s" \
      --size 1G --confirm "$z" --no-save --json > "$work/out.json"
  python3 -c 'import json, sys; print(int(json.load(open(sys.argv[1]))["results"][0]["iops"]))' "$work/out.json"
}
# A CPU kept busy for 300 ms, from the moment the tool starts (its first I/O comes 30-50 ms in).
burn() { timeout 0.3 sh -c 'while :; do :; done' || true; }

for i in $(seq 1 "$ROUNDS"); do
  for v in fio-alone blk-alone fio-burn blk-burn; do
    tool=${v%-*}
    if [ "${v#*-}" = burn ]; then
      burn &
      n=$("${tool}_iops")
      wait
    else
      n=$("${tool}_iops")
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
