#!/usr/bin/env bash
# Benchmark: what each BPF program of bench/bpf_cost.py costs the thread that submits the I/O
# (docs/architecture.md, "Counting in the kernel: measured before it is built"). fio's psync
# 4K random reads, one job pinned to CPU 1, on a filled zram device of this script's own (one
# block_bio_queue event an I/O, and an I/O is a CPU's work, so a cost an event shows in the
# CPU an I/O): ROUNDS rounds of RUNTIME seconds, each mode in turn within a round (`off`: no
# program), fio's own user+system CPU over its I/Os. Prints each round, then each mode's median
# and its median difference from `off` within a round; then, with kernel.bpf_stats_enabled on
# for one more run of each program, the kernel's own time a run of it (which adds two clock
# reads). This VM's rounds spread by several hundred ns an I/O: the medians of the per-round
# differences are the figure, and `bpf_stats` the cross-check. Needs root, zram, fio.
#
#   sudo bash bench/bpf_cost.sh                       # ROUNDS=12 RUNTIME=1.5
#   MODES="off raw-flag raw-count" sudo -E bash bench/bpf_cost.sh
set -euo pipefail
ROUNDS=${ROUNDS:-12}
RUNTIME=${RUNTIME:-1.5}
MODES=${MODES:-off tp-empty tp-count raw-empty raw-flag raw-count}
. "$(dirname "$0")/lib.sh"
bench_need_fio
bench_need_zram
bench_zram z 1G
bench_fill "/dev/$z"
bench_tmpdir work
stats=/proc/sys/kernel/bpf_stats_enabled
was=$(cat "$stats")
bench_on_exit "echo $was > $stats"
hold=$(python3 -c "print($RUNTIME + 1.5)")
one() {
  fio --name=j --filename="/dev/$z" --rw=randread --bs=4k --direct=1 --ioengine=psync \
    --runtime="$(python3 -c "print(int($RUNTIME * 1000))")ms" --time_based --cpus_allowed=1 --output-format=json > "$work/fio.json"
  python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
n, t = j["read"]["total_ios"], j["job_runtime"] / 1000
print("%.0f %.0f" % (n / t, (j["usr_cpu"] + j["sys_cpu"]) / 100 * t / n * 1e9))' "$work/fio.json"
}
with() {  # MODE: fio's figures with MODE's program attached ("off": none)
  if [ "$1" = off ]; then one; return; fi
  python3 bench/bpf_cost.py "$1" "$hold" > "$work/$1.out" &
  sleep 0.4
  one
  wait
}
echo 0 > "$stats"
for i in $(seq 1 "$ROUNDS"); do
  for m in $MODES; do echo "$m $(with "$m")"; done
done | tee "$work/rounds" >&2
python3 - "$work/rounds" "$ROUNDS" <<'PY'
import statistics as st, sys
runs = [l.split() for l in open(sys.argv[1])]
modes = list(dict.fromkeys(r[0] for r in runs))
by = {m: [(int(r[1]), int(r[2])) for r in runs if r[0] == m] for m in modes}
print(f"\nfio psync 4K randread QD1 on zram, CPU 1, {sys.argv[2]} rounds: medians")
print(f"{'mode':10} {'IOPS':>8} {'ns CPU/IO':>10} {'minus off, per round':>21}")
for m in modes:
    diff = st.median(b[1] - a[1] for a, b in zip(by["off"], by[m])) if "off" in by else 0
    print(f"{m:10} {st.median(x[0] for x in by[m]):8.0f} {st.median(x[1] for x in by[m]):10.0f} {diff:21.0f}")
PY
echo 1 > "$stats"
echo
for m in $MODES; do
  [ "$m" = off ] && continue
  with "$m" > /dev/null
  head -1 "$work/$m.out"
done
