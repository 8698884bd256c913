#!/usr/bin/env bash
# Benchmark: blkscope's io_uring engine (--engine uring: its default picks pread/pwrite at QD1;
# bench/matrix.sh measures the default) against fio (--ioengine=io_uring --fixedbufs --registerfiles),
# the same job alternately, PAIRS pairs, on a zram device and on a loop device with direct I/O.
# Prints one table: per row the median IOPS of each and the ratios blkscope/theirs for IOPS and
# for CPU per I/O (whole-process user+system time over I/Os, measured alike: see vs_fio.py).
# Goals: against fio IOPS ratio >= 1.0 and CPU ratio <= 1.0; against t/io_uring IOPS ratio >= 0.95.
# Needs root, fio and python3. Creates its own zram device (hot_add) and loop device over a file
# in a temporary directory, and removes exactly those on exit.
#
# With FIO_SRC (a checkout of https://github.com/axboe/fio), fio's peak-IOPS tool t/io_uring is
# built from it in the temporary directory (nothing of fio's lands in this repository) and
# compared too, at its best batch settings, on 4K random reads at QD1 and QD32.
# Then QD1 4K random reads on zram kept on CPU 0 (fio --cpus_allowed=0 against blkscope
# --cpus 0; t/io_uring and blkscope under taskset -c 0), where the scheduler's placement of
# io_uring's io-wq worker no longer decides the figure (vs_fio.py). In a KVM guest with the
# haltpoll cpuidle driver, last the unpinned QD1 row again with idle vCPUs polling for
# HALT_POLL_NS (200000, the kernel's default) before they halt; the setting is put back after.
# The `pairs` column is the lowest and highest IOPS ratio of a single pair: how far one pair
# swings on this machine, beside the median the goal is judged on.
#
#   sudo bash bench/vs_fio.sh                 # RUNTIME=3 PAIRS=3 by default
#   RUNTIME=5 PAIRS=5 sudo -E bash bench/vs_fio.sh
#   git clone https://github.com/axboe/fio /tmp/fio && sudo FIO_SRC=/tmp/fio bash bench/vs_fio.sh
set -euo pipefail
RUNTIME=${RUNTIME:-3}
PAIRS=${PAIRS:-3}
. "$(dirname "$0")/lib.sh"
bench_need_fio
bench_build
bench_tmpdir work
# A zram device of our own.
bench_zram zdev 1G
# A loop device with direct I/O over a preallocated file.
fallocate -l 1G "$work/loop.img"
bench_loop ldev "$work/loop.img" --direct-io=on
# Write every block once so reads hit real data.
for d in ${zdev:+/dev/$zdev} "$ldev"; do
  bench_fill "$d"
done

bench_t_io_uring T_IO_URING
if [ -z "$T_IO_URING" ]; then
  echo "FIO_SRC is not set: no t/io_uring rows (give a checkout of https://github.com/axboe/fio)" >&2
fi
# vs_fio.py's last rows set the guest's idle polling (a KVM guest's haltpoll driver) and put
# it back; if it is killed in between, this does.
halt=/sys/module/haltpoll/parameters/guest_halt_poll_ns
if [ -w "$halt" ]; then
  bench_on_exit "echo $(cat "$halt") > $halt"
fi
T_IO_URING=$T_IO_URING python3 bench/vs_fio.py "$BIN" "$RUNTIME" "$PAIRS" ${zdev:+/dev/$zdev} "$ldev"
