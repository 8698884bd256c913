#!/usr/bin/env python3
"""Runs the same job with fio and blkscope alternately and prints median IOPS and CPU per I/O.

CPU is measured the same way for both: the whole process's user+system time (all its threads,
io_uring's io-wq workers included) from getrusage(RUSAGE_CHILDREN) around the run, divided by
the I/Os it completed. (fio's own usr_cpu/sys_cpu count only its job thread; blkscope's
cpu.per_io_us counts the whole process, so neither's self-report compares with the other's.)

Usage: [T_IO_URING=PATH] vs_fio.py BLKSCOPE RUNTIME PAIRS DEVICE...   (called by bench/vs_fio.sh)
"""
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys

WORKLOADS = [
    ("RND4K-Q1-read", "randread", "4k", 1),
    ("RND4K-Q32-read", "randread", "4k", 32),
    ("RND4K-Q1-write", "randwrite", "4k", 1),
    ("RND4K-Q32-write", "randwrite", "4k", 32),
    ("SEQ1M-Q8-read", "read", "1M", 8),
    ("SEQ1M-Q8-write", "write", "1M", 8),
]


def timed_text(cmd):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return out, cpu


def timed(cmd):
    out, cpu = timed_text(cmd)
    return json.loads(out), cpu


# `taskset -c 0`: a command run on one CPU (the pinned rows).
PIN = ["taskset", "-c", "0"]


def t_io_uring(binary, dev, qd, s, c, runtime, pin=False):
    """fio's peak-IOPS tool: 4K random reads, O_DIRECT, fixed buffers, registered file, no
    polling, submitting s and reaping c at a time. It prints IOPS once a second; the mean of
    those lines is its IOPS, their sum its I/Os."""
    # It prints its first figure after a second: run it for two at least.
    out, cpu = timed_text((PIN if pin else []) + [binary, f"-d{qd}", f"-s{s}", f"-c{c}", "-b4096", "-p0", "-B1",
                           "-F1", "-O1", "-R1", f"-r{max(runtime, 2)}", dev])
    per_s = [float(m.group(1)) * {"": 1, "K": 1e3, "M": 1e6}[m.group(2)]
             for m in re.finditer(r"^IOPS=([\d.]+)([KM]?)", out, re.M)]
    if not per_s or sum(per_s) == 0:
        return 0.0, float("inf")
    return sum(per_s) / len(per_s), cpu * 1e6 / sum(per_s)


def batches(qd):
    """t/io_uring's batch settings tried: submit/complete alike, and all-at-once submits."""
    grid = [(b, b) for b in (1, 2, 4, 8, 16) if b <= qd] + [(qd, 1), (qd, 4)]
    return sorted({(s, min(c, qd)) for s, c in grid})


def fio(dev, op, bs, qd, runtime, engine="io_uring", sqpoll=False, pin=False):
    args = (PIN if pin else []) + ["fio", "--name=b", f"--rw={op}", f"--bs={bs}", f"--iodepth={qd}",
            f"--ioengine={engine}", "--time_based", f"--runtime={runtime}", "--size=1G",
            "--output-format=json"]
    if engine == "io_uring":
        args += [f"--filename={dev}", "--direct=1", "--fixedbufs", "--registerfiles"]
    if sqpoll:
        args += ["--sqthread_poll=1"]
    j, cpu = timed(args)
    job = j["jobs"][0]
    ios = job["read"]["total_ios"] + job["write"]["total_ios"]
    return ios / (job["job_runtime"] / 1000), cpu * 1e6 / ios


def blkscope(binary, dev, op, bs, qd, runtime, engine="uring", sqpoll=False, pin=False):
    j, cpu = timed((PIN if pin else []) + [binary, "run", dev, "--op", op, "--bs", bs, "--iodepth", str(qd),
                    "--mode", "direct", "--runtime", f"{runtime}s", "--size", "1G",
                    "--engine", engine, "--confirm", os.path.basename(dev), "--no-save",
                    "--json"] + (["--sqpoll"] if sqpoll else []))
    r = j["results"][0]
    return r["iops"], cpu * 1e6 / r["ios"]


def sqpoll_rows(binary, runtime, pairs, dev):
    """SQPOLL (a kernel thread polls the submission queue; it costs a core): each tool with and
    without it, 4K random reads at QD32, alternating. Ratios are with/without, per tool."""
    print()
    print(f"{'device':<8} {'workload':<16} {'fio':>10} {'fio+sqp':>10} {'ratio':>6} "
          f"{'blkscope':>10} {'blk+sqp':>10} {'ratio':>6}  (IOPS; SQPOLL on/off)")
    runs = {k: [] for k in ("f", "fs", "b", "bs")}
    for _ in range(pairs):
        runs["f"].append(fio(dev, "randread", "4k", 32, runtime)[0])
        runs["fs"].append(fio(dev, "randread", "4k", 32, runtime, sqpoll=True)[0])
        runs["b"].append(blkscope(binary, dev, "randread", "4k", 32, runtime)[0])
        runs["bs"].append(blkscope(binary, dev, "randread", "4k", 32, runtime, sqpoll=True)[0])
    m = {k: statistics.median(v) for k, v in runs.items()}
    print(f"{os.path.basename(dev):<8} {'RND4K-Q32-read':<16} {m['f']:10.0f} {m['fs']:10.0f} "
          f"{m['fs'] / m['f']:6.2f} {m['b']:10.0f} {m['bs']:10.0f} {m['bs'] / m['b']:6.2f}",
          flush=True)


def alternate(pairs, theirs, ours):
    """Runs `theirs` and `ours` (each returning IOPS, CPU us per I/O) alternately, `pairs`
    times; returns the medians (their IOPS, our IOPS, their CPU/IO, our CPU/IO)."""
    t, o = [], []
    for _ in range(pairs):
        t.append(theirs())
        o.append(ours())
    med = lambda runs, k: statistics.median(r[k] for r in runs)
    return med(t, 0), med(o, 0), med(t, 1), med(o, 1)


def row(dev, name, medians, extra=""):
    ti, bi, tc, bc = medians
    print(f"{dev:<8} {name:<16} {ti:10.0f} {bi:10.0f} {bi / ti:6.2f} "
          f"{tc:10.2f} {bc:10.2f} {bc / tc:6.2f}{extra}", flush=True)


def main():
    binary, runtime, pairs, devices = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
    print(f"{'device':<8} {'workload':<16} {'fio IOPS':>10} {'blk IOPS':>10} {'ratio':>6} "
          f"{'fio us/IO':>10} {'blk us/IO':>10} {'ratio':>6}")
    for dev in devices:
        for name, op, bs, qd in WORKLOADS:
            row(os.path.basename(dev), name, alternate(
                pairs,
                lambda: fio(dev, op, bs, qd, runtime),
                lambda: blkscope(binary, dev, op, bs, qd, runtime)))
    # The harnesses' own ceiling: no I/O, full bookkeeping (fio --ioengine=null, blkscope
    # --engine null), 4K random reads at QD32.
    row("null", "RND4K-Q32-read", alternate(
        pairs,
        lambda: fio(devices[0], "randread", "4k", 32, runtime, engine="null"),
        lambda: blkscope(binary, devices[0], "randread", "4k", 32, runtime, engine="null")))

    sqpoll_rows(binary, runtime, pairs, devices[0])

    # QD1 on zram, every tool on one CPU. zram has no NOWAIT, so io_uring hands every read to
    # an io-wq worker; whether the scheduler puts that worker on the submitter's CPU or the
    # other one decides the figure (here ~20K IOPS on two CPUs, ~150K on one), and which a run
    # gets is luck. On one CPU that lottery is gone and what is left is each tool's own cost.
    tio = os.environ.get("T_IO_URING")
    zram = [d for d in devices if os.path.basename(d).startswith("zram")]
    if zram and shutil.which("taskset"):
        dev = zram[0]
        print()
        print(f"{'pinned':<8} {'workload':<16} {'theirs':>10} {'blk IOPS':>10} {'ratio':>6} "
              f"{'their us':>10} {'blk us/IO':>10} {'ratio':>6}  (all on CPU 0)")
        row(os.path.basename(dev), "RND4K-Q1 fio", alternate(
            pairs,
            lambda: fio(dev, "randread", "4k", 1, runtime, pin=True),
            lambda: blkscope(binary, dev, "randread", "4k", 1, runtime, pin=True)))
        if tio:
            row(os.path.basename(dev), "RND4K-Q1 t/io", alternate(
                pairs,
                lambda: t_io_uring(tio, dev, 1, 1, 1, runtime, pin=True),
                lambda: blkscope(binary, dev, "randread", "4k", 1, runtime, pin=True)))

    # fio's peak tool, when bench/vs_fio.sh could build it (FIO_SRC): its best batch settings
    # for each device and depth (one run of each), then alternating pairs against blkscope.
    if not tio:
        return
    print()
    print(f"{'device':<8} {'workload':<16} {'t/io_uring':>10} {'blk IOPS':>10} {'ratio':>6} "
          f"{'t/io us/IO':>10} {'blk us/IO':>10} {'ratio':>6}  best -s/-c")
    for dev in devices:
        for qd in (1, 32):
            best = max(batches(qd), key=lambda sc: t_io_uring(tio, dev, qd, *sc, runtime)[0])
            medians = alternate(
                pairs,
                lambda: t_io_uring(tio, dev, qd, *best, runtime),
                lambda: blkscope(binary, dev, "randread", "4k", qd, runtime))
            if medians[0] == 0:
                print(f"{os.path.basename(dev):<8} RND4K-Q{qd}-read: t/io_uring printed no IOPS")
                continue
            row(os.path.basename(dev), f"RND4K-Q{qd}-read", medians, f"  {best[0]}/{best[1]}")


if __name__ == "__main__":
    main()
