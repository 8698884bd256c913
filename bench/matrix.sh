#!/usr/bin/env bash
# Benchmark: the matrix (bench/matrix.py): blkscope with its defaults (its engine choice and
# tracing included) against the best of fio on each row: fio's psync and pvsync2 (rows at QD1),
# libaio, io_uring (fixed buffers, registered file), io_uring --force_async=1 and
# --sqthread_poll, each tried once, and with FIO_SRC fio's t/io_uring at each batch setting on
# the 4K random-read rows of one job; then the best of them and blkscope alternately, PAIRS pairs,
# medians, one table. Fifteen jobs: 4K random reads at QD1 with 1, 2 and 4 jobs, 4K random
# writes at QD1 with 1 and 2, 4K random reads at QD8, 32 and 128 and at QD16 with 2 jobs, 16K
# random reads, 64K and 1M sequential reads, 1M writes, mixed random I/O. On a zram device
# filled with random data and on a loop device with direct I/O over a filled file in a temporary
# directory; both are this script's own and removed on exit. DEVICES=shmloop adds a loop device
# with direct I/O over a filled file on a tmpfs of its own: the loop driver without the host's
# disk under it, whose rows swing far less from run to run. brd and null_blk rows need a kernel
# that has them (this VM's has not: tests/guest boots one that has). Needs root, fio, python3.
# Per device about 11 minutes at the defaults (t/io_uring's screen adds about 2).
#
#   sudo bash bench/matrix.sh                          # RUNTIME=3 PAIRS=3
#   DEVICES=zram ROWS=1,2 sudo -E bash bench/matrix.sh    # only zram, only rows 1 and 2
#   git clone https://github.com/axboe/fio /tmp/fio && sudo FIO_SRC=/tmp/fio bash bench/matrix.sh
#   SETUPS=psync,io_uring ...                          # only those fio setups
#   TRACE_AB=1 sudo -E bash bench/matrix.sh            # blkscope --no-trace against its default
#   HALT_POLL_NS=200000 sudo -E bash bench/matrix.sh   # idle vCPUs poll 200 us before halting
#                                                      # (a KVM guest's haltpoll driver; the
#                                                      # kernel's default), put back after
set -euo pipefail
RUNTIME=${RUNTIME:-3}
PAIRS=${PAIRS:-3}
DEVICES=${DEVICES:-zram,loop}
. "$(dirname "$0")/lib.sh"
bench_need_fio
bench_need_zram
bench_build
bench_halt_poll "${HALT_POLL_NS:-}"
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
if [[ ,$DEVICES, == *,shmloop,* ]]; then
  # The loop driver's own path (its worker, direct I/O to the file) without a disk below: the
  # file is memory's, so the rows move with the code and not with the host's disk.
  bench_tmpfs shm 1100M
  fallocate -l 1G "$shm/loop.img"
  bench_loop sdev "$shm/loop.img" --direct-io=on
  echo "shmloop: $sdev, direct I/O over $shm/loop.img on tmpfs" >&2
  devs+=("$sdev")
fi
for d in "${devs[@]}"; do
  bench_fill "$d"
done
bench_t_io_uring T_IO_URING
echo "$(uname -r), $(nproc) CPUs, fio $(fio --version), blkscope $(git describe --always --dirty), guest_halt_poll_ns $(cat /sys/module/haltpoll/parameters/guest_halt_poll_ns 2>/dev/null || echo -)" >&2
T_IO_URING=$T_IO_URING PYTHONPATH=bench python3 bench/matrix.py "$BIN" "$RUNTIME" "$PAIRS" "${devs[@]}"
