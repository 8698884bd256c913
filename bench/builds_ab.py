#!/usr/bin/env python3
"""Two blkscope builds against each other on bench/matrix.py's rows (and three more with
writes at QD32), alternately: ROUNDS rounds of one RUNTIME-second run of each, the medians of
IOPS and of CPU per I/O (the whole process, getrusage, as matrix.py counts it), their ratios
(the second build over the first), and in how many rounds the second was faster.

Usage: builds_ab.py RUNTIME ROUNDS ROWS DEVICE BLKSCOPE_A BLKSCOPE_B   (bench/wait_ab.sh)
       ROWS: numbers as matrix.py prints them, 16-18 for the extra rows; EXTRA: more of
       blkscope's arguments (default --no-trace: the engine alone).
"""
import os
import statistics as st
import sys

from matrix import ROWS
from vs_fio import blkscope

EXTRA_ROWS = [
    ("4K randwrite QD32", "randwrite", "4k", 32, 1, None),
    ("4K randrw QD16", "randrw", "4k", 16, 1, None),
    ("4K randrw 70/30 QD32", "randrw", "4k", 32, 1, 70),
]


def main():
    runtime, rounds = int(sys.argv[1]), int(sys.argv[2])
    rows = [int(x) for x in sys.argv[3].split(",")]
    dev, builds = sys.argv[4], sys.argv[5:7]
    extra = os.environ.get("EXTRA", "--no-trace").split()
    every = ROWS + EXTRA_ROWS
    print(f"{'#':>2} {'job':<24} {'A IOPS':>8} {'A us':>6} {'B IOPS':>8} {'B us':>6} "
          f"{'IOPS B/A':>8} {'CPU B/A':>7}  B faster", flush=True)
    for i in rows:
        label, op, bs, qd, jobs, mix = every[i - 1]
        res = [[], []]
        for _ in range(rounds):
            for k, b in enumerate(builds):
                res[k].append(blkscope(b, dev, op, bs, qd, runtime, engine="auto", jobs=jobs,
                                       mix=mix, extra=extra))
        (ia, ca), (ib, cb) = [(st.median(x[0] for x in r), st.median(x[1] for x in r))
                              for r in res]
        faster = sum(b[0] > a[0] for a, b in zip(*res))
        print(f"{i:>2} {label:<24} {ia:8.0f} {ca:6.2f} {ib:8.0f} {cb:6.2f} {ib / ia:8.3f} "
              f"{cb / ca:7.3f}  {faster}/{rounds}", flush=True)


if __name__ == "__main__":
    main()
