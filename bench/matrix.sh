#!/usr/bin/env bash
# Benchmark: the matrix (bench/matrix.py): blkscope with its defaults (tracing included) against
# fio --ioengine=io_uring --fixedbufs --registerfiles on eleven jobs (4K random reads at QD1 and
# QD128, 64K and 1M sequential reads, 16K random reads, 4K random writes at QD1, two jobs, mixed
# random I/O, 1M writes), alternating pairs, medians, one table. On a zram device filled with
# random data and on a loop device with direct I/O over a filled file in a temporary directory;
# both are this script's own and removed on exit. Needs root, fio and python3.
#
#   sudo bash bench/matrix.sh                     # RUNTIME=3 PAIRS=3
#   DEVICES=zram ROWS=1,2 sudo -E bash bench/matrix.sh   # only zram, only rows 1 and 2
#   FIO_ARGS=--force_async=1 DEVICES=zram sudo -E bash bench/matrix.sh  # fio handing over too
set -euo pipefail
RUNTIME=${RUNTIME:-3}
PAIRS=${PAIRS:-3}
DEVICES=${DEVICES:-zram,loop}
. "$(dirname "$0")/lib.sh"
bench_need_fio
bench_need_zram
bench_build
bench_tmpdir work
devs=()
if [[ ,$DEVICES, == *,zram,* ]]; then
  bench_zram zdev 1G
  devs+=("/dev/$zdev")
fi
if [[ ,$DEVICES, == *,loop,* ]]; then
  fallocate -l 1G "$work/loop.img"
  bench_loop ldev "$work/loop.img" --direct-io=on
  devs+=("$ldev")
fi
for d in "${devs[@]}"; do
  bench_fill "$d"
done
echo "$(uname -r), $(nproc) CPUs, fio $(fio --version), blkscope $(git describe --always --dirty)" >&2
PYTHONPATH=bench python3 bench/matrix.py "$BIN" "$RUNTIME" "$PAIRS" "${devs[@]}"
