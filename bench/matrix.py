#!/usr/bin/env python3
"""The matrix: blkscope with its defaults (its engine choice and block-layer tracing included)
against the best of fio on each row, not one engine of it.

Each row is one job. First every fio setup that can run the job is tried once (psync and pvsync2
only at one I/O in flight per job, where they are the same job; libaio; io_uring with fixed
buffers and a registered file; the same with --force_async=1, and with --sqthread_poll), and on
the 4K random-read rows of one job fio's t/io_uring at each of its batch settings (with T_IO_URING,
built from fio's source by bench/matrix.sh). The setup with the most IOPS is the row's "best";
then it and blkscope run alternately, PAIRS pairs, and the row shows the medians.

Throughput is I/Os per second over the run (fio: read+write IOPS summed over jobs; blkscope: its
result's iops). CPU per I/O is the whole process's user+system time (every thread, io_uring's
io-wq workers and SQPOLL thread included) from getrusage(RUSAGE_CHILDREN) around the run, over
the I/Os it did: the same measure for every tool (vs_fio.py says why fio's own usr_cpu cannot
be used).

A row meets the goal when blkscope's median throughput is >= 1.0x the best's at <= 1.0x its CPU
per I/O. `pairs` is the lowest and highest throughput ratio of a single pair; `engine` is the
engine blkscope chose. Under each row, the one-run screen of every setup.

With TRACE_AB=1 each row is blkscope against itself instead: `--no-trace` against its default
(the block layer's trace kept in windows), PAIRS alternating pairs, medians; the row says
whether the default's throughput is within 3% of the untraced one's (>= 0.97x) and its CPU per
I/O too (<= 1.03x), each on its own: the cost issue 49 bounds, on the matrix's own rows.

Usage: matrix.py BLKSCOPE RUNTIME PAIRS DEVICE...       (called by bench/matrix.sh)
       ROWS=1,2 limits it to those rows (numbered as printed); SETUPS=psync,io_uring to those
       fio setups.
"""
import json
import os
import sys

from vs_fio import alternate, batches, blkscope, fio, t_io_uring

# (label, op, bs, iodepth, jobs, rwmixread)
ROWS = [
    ("4K randread QD1", "randread", "4k", 1, 1, None),
    ("4K randread QD1 2 jobs", "randread", "4k", 1, 2, None),
    ("4K randread QD1 4 jobs", "randread", "4k", 1, 4, None),
    ("4K randwrite QD1", "randwrite", "4k", 1, 1, None),
    ("4K randwrite QD1 2 jobs", "randwrite", "4k", 1, 2, None),
    ("4K randread QD8", "randread", "4k", 8, 1, None),
    ("4K randread QD32", "randread", "4k", 32, 1, None),
    ("4K randread QD128", "randread", "4k", 128, 1, None),
    ("4K randread QD16 2 jobs", "randread", "4k", 16, 2, None),
    ("16K randread QD16", "randread", "16k", 16, 1, None),
    ("64K read QD8", "read", "64k", 8, 1, None),
    ("1M read QD4", "read", "1M", 4, 1, None),
    ("1M write QD4", "write", "1M", 4, 1, None),
    ("4K randrw QD32", "randrw", "4k", 32, 1, None),
    ("4K randrw 70/30 QD16", "randrw", "4k", 16, 1, 70),
]

# fio's setups: (name, engine, arguments, synchronous). A synchronous engine keeps one I/O in
# flight per job whatever --iodepth says, so it runs only the rows at QD1.
SETUPS = [
    ("psync", "psync", [], True),
    ("pvsync2", "pvsync2", [], True),
    ("libaio", "libaio", [], False),
    ("io_uring", "io_uring", [], False),
    ("io_uring force_async", "io_uring", ["--force_async=1"], False),
    ("io_uring sqthread_poll", "io_uring", ["--sqthread_poll=1"], False),
]

HEADER = (f"{'#':>2} {'device':<7} {'job':<24} {'best of fio':<24} {'its IOPS':>9} "
          f"{'blk IOPS':>9} {'ratio':>6} {'its us':>7} {'blk us':>7} {'ratio':>6}  "
          f"{'pairs':<9}  {'engine':<6} goal")


def candidates(dev, op, bs, qd, jobs, mix, runtime, tio, only):
    """Every setup that can run the row: (name, a function that runs it once)."""
    out = []
    for name, engine, extra, sync in SETUPS:
        if (sync and qd > 1) or (only and name not in only):
            continue
        out.append((f"fio {name}", lambda e=engine, x=extra: fio(
            dev, op, bs, qd, runtime, engine=e, jobs=jobs, mix=mix, extra=x)))
    if tio and op == "randread" and bs == "4k" and jobs == 1:
        for s, c in batches(qd):
            out.append((f"t/io_uring -s{s} -c{c}",
                        lambda s=s, c=c: t_io_uring(tio, dev, qd, s, c, runtime)))
    return out


def selected(devices, rows):
    """Each device's rows, only those ROWS names when it names some: (number, device, its
    name, row)."""
    for dev in devices:
        for i, row in enumerate(ROWS, 1):
            if not rows or i in rows:
                yield i, dev, os.path.basename(dev), row


def trace_ab(binary, runtime, pairs, devices, rows):
    """Each row: blkscope `--no-trace` against its default, alternately (TRACE_AB=1)."""
    print(f"{'#':>2} {'device':<7} {'job':<24} {'off IOPS':>9} {'dflt IOPS':>9} {'ratio':>6} "
          f"{'off us':>7} {'dflt us':>7} {'ratio':>6}  {'pairs':<9}  throughput cpu", flush=True)
    over = 0
    for i, dev, name, (label, op, bs, qd, jobs, mix) in selected(devices, rows):
        run = lambda extra: blkscope(binary, dev, op, bs, qd, runtime, engine="auto",
                                     jobs=jobs, mix=mix, extra=extra)
        oi, di, oc, dc, (lo, hi) = alternate(pairs, lambda: run(["--no-trace"]),
                                              lambda: run([]))
        iops_ok, cpu_ok = di / max(oi, 1) >= 0.97, dc / oc <= 1.03
        over += not (iops_ok and cpu_ok)
        print(f"{i:>2} {name:<7} {label:<24} {oi:9.0f} {di:9.0f} {di / max(oi, 1):6.3f} "
              f"{oc:7.2f} {dc:7.2f} {dc / oc:6.3f}  {lo:4.2f}-{hi:4.2f}  "
              f"{'ok' if iops_ok else 'OVER':<10} {'ok' if cpu_ok else 'OVER'}", flush=True)
        print(json.dumps({"row": i, "device": name, "job": label, "off_iops": oi,
                          "default_iops": di, "off_cpu_us": oc, "default_cpu_us": dc}),
              file=sys.stderr, flush=True)
    print(f"{over} row(s) where the default trace cost more than 3%", flush=True)


def main():
    binary, runtime, pairs, devices = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
    rows = {int(x) for x in os.environ.get("ROWS", "").split(",") if x}
    if os.environ.get("TRACE_AB") == "1":
        return trace_ab(binary, runtime, pairs, devices, rows)
    only = {x for x in os.environ.get("SETUPS", "").split(",") if x}
    tio = os.environ.get("T_IO_URING") or None
    print(HEADER, flush=True)
    below = 0
    for i, dev, name, (label, op, bs, qd, jobs, mix) in selected(devices, rows):
        screen = [(n, run, run()) for n, run in candidates(dev, op, bs, qd, jobs, mix,
                                                            runtime, tio, only)]
        best, run, _ = max(screen, key=lambda x: x[2][0])
        engines = set()
        ti, bi, tc, bc, (lo, hi) = alternate(
            pairs, run,
            lambda: blkscope(binary, dev, op, bs, qd, runtime, engine="auto", jobs=jobs,
                             mix=mix, engines=engines))
        ok = ti > 0 and bi / ti >= 1.0 and bc / tc <= 1.0
        below += not ok
        print(f"{i:>2} {name:<7} {label:<24} {best:<24} {ti:9.0f} {bi:9.0f} "
              f"{bi / max(ti, 1):6.2f} {tc:7.2f} {bc:7.2f} {bc / tc:6.2f}  "
              f"{lo:4.2f}-{hi:4.2f}  {'/'.join(sorted(engines)):<6} "
              f"{'ok' if ok else 'BELOW'}", flush=True)
        print("     screen: " + ", ".join(f"{n} {r[0] / 1e3:.0f}K {r[1]:.1f}us"
                                          for n, _, r in screen), flush=True)
        print(json.dumps({"row": i, "device": name, "job": label, "best": best,
                          "best_iops": ti, "blkscope_iops": bi, "best_cpu_us": tc,
                          "blkscope_cpu_us": bc, "engines": sorted(engines),
                          "screen": {n: r for n, _, r in screen}}), file=sys.stderr,
              flush=True)
    print(f"{below} row(s) below the goal", flush=True)


if __name__ == "__main__":
    main()
