#!/usr/bin/env python3
"""The matrix: blkscope against fio (io_uring, fixed buffers, registered file) on the jobs users
compare tools at, each row the same job alternately, PAIRS pairs, medians. blkscope runs with its
defaults, block-layer tracing included (its cost is part of its figure).

Throughput is I/Os per second over the run (fio: its read+write IOPS summed over jobs; blkscope:
its result's iops). CPU per I/O is the whole process's user+system time (every thread, io_uring's
io-wq workers included) from getrusage(RUSAGE_CHILDREN) around the run, over the I/Os it did: the
same measure for both tools (vs_fio.py says why fio's own usr_cpu cannot be used).

A row meets the goal when blkscope's median throughput is >= 1.0x fio's at <= 1.0x its CPU per
I/O. The `pairs` column is the lowest and highest throughput ratio of a single pair.

Usage: matrix.py BLKSCOPE RUNTIME PAIRS DEVICE...       (called by bench/matrix.sh)
       ROWS=1,2 limits it to those rows (numbered as printed); FIO_ARGS="--force_async=1" adds
       arguments to every fio run (that one: fio hands its I/O to io-wq as blkscope does on a
       device whose I/O the kernel hands there anyway, such as zram).
"""
import os
import sys

from vs_fio import alternate, blkscope, fio

# (label, op, bs, iodepth, jobs, rwmixread)
ROWS = [
    ("4K randread QD1", "randread", "4k", 1, 1, None),
    ("4K randread QD128", "randread", "4k", 128, 1, None),
    ("64K read QD8", "read", "64k", 8, 1, None),
    ("1M read QD4", "read", "1M", 4, 1, None),
    ("16K randread QD16", "randread", "16k", 16, 1, None),
    ("4K randwrite QD1", "randwrite", "4k", 1, 1, None),
    ("4K randread QD16 2 jobs", "randread", "4k", 16, 2, None),
    ("4K randrw QD32", "randrw", "4k", 32, 1, None),
    ("4K randread QD128 again", "randread", "4k", 128, 1, None),
    ("1M write QD4", "write", "1M", 4, 1, None),
    ("4K randrw 70/30 QD16", "randrw", "4k", 16, 1, 70),
    # Not among issue 40's rows: the depth where blkscope still trails fio on zram.
    ("4K randread QD8", "randread", "4k", 8, 1, None),
]

HEADER = (f"{'#':>2} {'device':<7} {'job':<24} {'fio IOPS':>9} {'blk IOPS':>9} {'ratio':>6} "
          f"{'fio us':>7} {'blk us':>7} {'ratio':>6}  {'pairs':<9}  goal")


def main():
    binary, runtime, pairs, devices = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
    only = {int(x) for x in os.environ.get("ROWS", "").split(",") if x}
    fio_args = os.environ.get("FIO_ARGS", "").split()
    if fio_args:
        print(f"fio with {' '.join(fio_args)}", flush=True)
    print(HEADER, flush=True)
    below = 0
    for dev in devices:
        name = os.path.basename(dev)
        for i, (label, op, bs, qd, jobs, mix) in enumerate(ROWS, 1):
            if only and i not in only:
                continue
            ti, bi, tc, bc, (lo, hi) = alternate(
                pairs,
                lambda: fio(dev, op, bs, qd, runtime, jobs=jobs, mix=mix, extra=fio_args),
                lambda: blkscope(binary, dev, op, bs, qd, runtime, jobs=jobs, mix=mix))
            ok = ti > 0 and bi / ti >= 1.0 and bc / tc <= 1.0
            below += not ok
            print(f"{i:>2} {name:<7} {label:<24} {ti:9.0f} {bi:9.0f} {bi / ti:6.2f} {tc:7.2f} "
                  f"{bc:7.2f} {bc / tc:6.2f}  {lo:4.2f}-{hi:4.2f}  {'ok' if ok else 'BELOW'}",
                  flush=True)
    print(f"{below} row(s) below the goal", flush=True)


if __name__ == "__main__":
    main()
