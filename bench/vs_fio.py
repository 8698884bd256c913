#!/usr/bin/env python3
"""Runs the same job with fio and blkscope alternately and prints median IOPS and CPU per I/O.

CPU is measured the same way for both: the whole process's user+system time (all its threads,
io_uring's io-wq workers included) from getrusage(RUSAGE_CHILDREN) around the run, divided by
the I/Os it completed. (fio's own usr_cpu/sys_cpu count only its job thread; blkscope's
cpu.per_io_us counts the whole process, so neither's self-report compares with the other's.)

Usage: vs_fio.py BLKSCOPE RUNTIME PAIRS DEVICE...   (called by bench/vs_fio.sh)
"""
import json
import os
import resource
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


def timed(cmd):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return json.loads(out), cpu


def fio(dev, op, bs, qd, runtime, engine="io_uring"):
    args = ["fio", "--name=b", f"--rw={op}", f"--bs={bs}", f"--iodepth={qd}",
            f"--ioengine={engine}", "--time_based", f"--runtime={runtime}", "--size=1G",
            "--output-format=json"]
    if engine == "io_uring":
        args += [f"--filename={dev}", "--direct=1", "--fixedbufs", "--registerfiles"]
    j, cpu = timed(args)
    job = j["jobs"][0]
    ios = job["read"]["total_ios"] + job["write"]["total_ios"]
    return ios / (job["job_runtime"] / 1000), cpu * 1e6 / ios


def blkscope(binary, dev, op, bs, qd, runtime, engine="uring"):
    j, cpu = timed([binary, "run", dev, "--op", op, "--bs", bs, "--iodepth", str(qd),
                    "--mode", "direct", "--runtime", f"{runtime}s", "--size", "1G",
                    "--engine", engine, "--confirm", os.path.basename(dev), "--no-save",
                    "--json"])
    r = j["results"][0]
    return r["iops"], cpu * 1e6 / r["ios"]


def main():
    binary, runtime, pairs, devices = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
    print(f"{'device':<8} {'workload':<16} {'fio IOPS':>10} {'blk IOPS':>10} {'ratio':>6} "
          f"{'fio us/IO':>10} {'blk us/IO':>10} {'ratio':>6}")
    for dev in devices:
        for name, op, bs, qd in WORKLOADS:
            f_iops, f_cpu, b_iops, b_cpu = [], [], [], []
            for _ in range(pairs):
                i, c = fio(dev, op, bs, qd, runtime)
                f_iops.append(i)
                f_cpu.append(c)
                i, c = blkscope(binary, dev, op, bs, qd, runtime)
                b_iops.append(i)
                b_cpu.append(c)
            fi, bi = statistics.median(f_iops), statistics.median(b_iops)
            fc, bc = statistics.median(f_cpu), statistics.median(b_cpu)
            print(f"{os.path.basename(dev):<8} {name:<16} {fi:10.0f} {bi:10.0f} {bi / fi:6.2f} "
                  f"{fc:10.2f} {bc:10.2f} {bc / fc:6.2f}", flush=True)
    # The harnesses' own ceiling: no I/O, full bookkeeping (fio --ioengine=null, blkscope
    # --engine null), 4K random reads at QD32.
    f_iops, f_cpu, b_iops, b_cpu = [], [], [], []
    for _ in range(pairs):
        i, c = fio(devices[0], "randread", "4k", 32, runtime, engine="null")
        f_iops.append(i)
        f_cpu.append(c)
        i, c = blkscope(binary, devices[0], "randread", "4k", 32, runtime, engine="null")
        b_iops.append(i)
        b_cpu.append(c)
    fi, bi = statistics.median(f_iops), statistics.median(b_iops)
    fc, bc = statistics.median(f_cpu), statistics.median(b_cpu)
    print(f"{'null':<8} {'RND4K-Q32-read':<16} {fi:10.0f} {bi:10.0f} {bi / fi:6.2f} "
          f"{fc:10.2f} {bc:10.2f} {bc / fc:6.2f}", flush=True)


if __name__ == "__main__":
    main()
