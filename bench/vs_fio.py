#!/usr/bin/env python3
"""Runs the same job with fio (or fio's t/io_uring) and blkscope alternately and prints one
table: each row is one job, the median IOPS and CPU per I/O of each tool, blkscope's ratios, and
whether the row meets the goal (IOPS >= 1.0x fio at no more CPU per I/O; >= 0.95x t/io_uring).

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
import time

WORKLOADS = [
    ("RND4K-Q1-read", "randread", "4k", 1),
    ("RND4K-Q32-read", "randread", "4k", 32),
    ("RND4K-Q1-write", "randwrite", "4k", 1),
    ("RND4K-Q32-write", "randwrite", "4k", 32),
    ("SEQ1M-Q8-read", "read", "1M", 8),
    ("SEQ1M-Q8-write", "write", "1M", 8),
]


def timed_text(cmd, timeout=None):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=timeout).stdout
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
    polling, submitting s and reaping c at a time. It prints IOPS once a second, the first after
    a second, so it runs a second longer than the others (at least 3 s), and again if it
    printed no figure (with -r2 it printed one at best, sometimes none). The mean of those
    lines is its IOPS; its I/Os are that rate over the run's wall time. (They were the lines'
    sum, which counted one or two of the run's seconds against the CPU time of all of them:
    CPU per I/O came out about twice the real figure.)"""
    r = max(runtime, 2) + 1
    for _ in range(3):
        t0 = time.monotonic()
        try:
            # It can hang: at QD32 with -s8 -c8 on zram it once waited in io_cqring_wait for
            # completions that never came, 11 minutes, until killed. A hung run is a failed try.
            out, cpu = timed_text((PIN if pin else []) + [binary, f"-d{qd}", f"-s{s}", f"-c{c}", "-b4096", "-p0", "-B1",
                                   "-F1", "-O1", "-R1", f"-r{r}", dev], timeout=r + 30)
        except subprocess.TimeoutExpired:
            print(f"t/io_uring -d{qd} -s{s} -c{c} hung; killed after {r + 30} s", file=sys.stderr)
            continue
        wall = time.monotonic() - t0
        per_s = [float(m.group(1)) * {"": 1, "K": 1e3, "M": 1e6}[m.group(2)]
                 for m in re.finditer(r"^IOPS=([\d.]+)([KM]?)", out, re.M)]
        if per_s and sum(per_s) > 0:
            iops = sum(per_s) / len(per_s)
            return iops, cpu * 1e6 / (iops * wall)
    return 0.0, float("inf")


def batches(qd):
    """t/io_uring's batch settings tried: submit/complete alike, and all-at-once submits."""
    grid = [(b, b) for b in (1, 2, 4, 8, 16) if b <= qd] + [(qd, 1), (qd, 4)]
    return sorted({(s, min(c, qd)) for s, c in grid})


def fio(dev, op, bs, qd, runtime, engine="io_uring", sqpoll=False, cpus=None, jobs=1,
        mix=None, extra=()):
    """fio's IOPS (read and write, over its jobs) and CPU us per I/O for one job. With `jobs`,
    each job gets its own region of 1 GiB / jobs, as blkscope's jobs do (--offset_increment);
    `mix` is --rwmixread, `extra` more arguments (bench/matrix.py's FIO_ARGS)."""
    region = (1 << 30) // jobs
    args = ["fio", "--name=b", f"--rw={op}", f"--bs={bs}", f"--iodepth={qd}",
            f"--ioengine={engine}", "--time_based", f"--runtime={runtime}",
            f"--size={region}", "--output-format=json"]
    if jobs > 1:
        args += [f"--numjobs={jobs}", f"--offset_increment={region}", "--group_reporting"]
    args += [f"--filename={dev}", "--direct=1"]
    if engine == "io_uring":
        args += ["--fixedbufs", "--registerfiles"]
    if op.startswith("rand"):
        # A new random order each run, as blkscope draws (fio's default repeats the offsets of
        # the last run, which a cache below the device, such as the host's, then serves).
        args += ["--randrepeat=0"]
    if sqpoll:
        args += ["--sqthread_poll=1"]
    if cpus is not None:
        args += [f"--cpus_allowed={cpus}"]
    if mix is not None:
        args += [f"--rwmixread={mix}"]
    args += list(extra)
    j, cpu = timed(args)
    job = j["jobs"][0]
    ios = job["read"]["total_ios"] + job["write"]["total_ios"]
    # fio's own rate: with --group_reporting, job_runtime is the jobs' runtimes summed, so
    # I/Os over it would halve two jobs' IOPS; for one job the two are the same figure.
    return job["read"]["iops"] + job["write"]["iops"], cpu * 1e6 / ios


def blkscope(binary, dev, op, bs, qd, runtime, engine="uring", sqpoll=False, pin=False,
             cpus=None, jobs=1, mix=None, engines=None, extra=()):
    """blkscope's IOPS and CPU us per I/O for one job; with `engines` (a set), the engine its
    result names is added to it (",io-wq" when it handed its I/O to io-wq). `extra`: more of
    blkscope's arguments (`--no-trace`)."""
    j, cpu = timed((PIN if pin else []) + [binary, "run", dev, "--op", op, "--bs", bs, "--iodepth", str(qd),
                    "--mode", "direct", "--runtime", f"{runtime}s", "--size", "1G",
                    "--engine", engine, "--confirm", os.path.basename(dev), "--no-save",
                    "--json"] + (["--sqpoll"] if sqpoll else [])
                   + (["--cpus", cpus] if cpus is not None else [])
                   + (["--jobs", str(jobs)] if jobs != 1 else [])
                   + (["--rwmixread", str(mix)] if mix is not None else [])
                   + list(extra))
    r = j["results"][0]
    if engines is not None:
        engines.add(r["engine"] + (",io-wq" if r.get("to_workers") else ""))
    return r["iops"], cpu * 1e6 / r["ios"]


def alternate(pairs, theirs, ours):
    """Runs `theirs` and `ours` (each returning IOPS, CPU us per I/O) alternately, `pairs`
    times; returns the medians (their IOPS, our IOPS, their CPU/IO, our CPU/IO) and the lowest
    and highest IOPS ratio of a pair (ours/theirs), which show how far one pair can swing."""
    t, o = [], []
    for i in range(pairs):
        # Every other pair the other way round (theirs, ours, ours, theirs, ...): pinned on this
        # VM, a run right after t/io_uring came out 1-3% behind the other
        # (bench/ab_pinned.sh), so a fixed order would hand the same tool that place each time.
        if i % 2 == 0:
            t.append(theirs())
            o.append(ours())
        else:
            o.append(ours())
            t.append(theirs())
    # A pair where either run gave no figure (t/io_uring hung three times) is left out, not
    # counted as 0 IOPS, which would pull that side's median down.
    kept = [(a, b) for a, b in zip(t, o) if a[0] > 0 and b[0] > 0]
    if len(kept) < len(t):
        print(f"{len(t) - len(kept)} of {len(t)} pairs left out: a run gave no figure",
              file=sys.stderr)
    if not kept:
        return 0.0, 0.0, float("inf"), float("inf"), (0.0, 0.0)
    t, o = [a for a, _ in kept], [b for _, b in kept]
    med = lambda runs, k: statistics.median(r[k] for r in runs)
    ratios = [b[0] / a[0] for a, b in kept]
    return med(t, 0), med(o, 0), med(t, 1), med(o, 1), (min(ratios), max(ratios))


def best_batch(tio, dev, qd, runtime, tries=3):
    """t/io_uring's best batch settings for `dev` at `qd`: the highest median IOPS of `tries`
    runs of each setting (one run each picked whichever setting the noise favoured)."""
    return max(batches(qd), key=lambda sc: statistics.median(
        t_io_uring(tio, dev, qd, *sc, runtime)[0] for _ in range(tries)))


# The goals: against fio, at least its IOPS at no more CPU per I/O; against t/io_uring,
# within 5% of its IOPS. SQPOLL rows have none (on two cores the poller only costs).
GOALS = {"fio": (1.0, 1.0), "t/io_uring": (0.95, None), "sqpoll": (None, None)}

HEADER = (f"{'device':<8} {'workload':<15} {'against':<24} {'their IOPS':>10} {'blk IOPS':>10} "
          f"{'ratio':>6} {'their us':>9} {'blk us':>9} {'ratio':>6}  {'pairs':<9}  goal")


def row(dev, name, against, goal, medians):
    """One line of the table: their and blkscope's median IOPS and CPU per I/O, the ratios
    blkscope/theirs, and whether the row meets its goal (ok / BELOW / -)."""
    ti, bi, tc, bc, (lo, hi) = medians
    iops_goal, cpu_goal = GOALS[goal]
    if ti == 0:
        print(f"{dev:<8} {name:<15} {against:<24} printed no IOPS", flush=True)
        return
    met = "-"
    if iops_goal is not None:
        ok = bi / ti >= iops_goal and (cpu_goal is None or bc / tc <= cpu_goal)
        met = "ok" if ok else "BELOW"
    print(f"{dev:<8} {name:<15} {against:<24} {ti:10.0f} {bi:10.0f} {bi / ti:6.2f} "
          f"{tc:9.2f} {bc:9.2f} {bc / tc:6.2f}  {lo:4.2f}-{hi:4.2f}  {met}", flush=True)


def main():
    binary, runtime, pairs, devices = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
    tio = os.environ.get("T_IO_URING")
    zram = [d for d in devices if os.path.basename(d).startswith("zram")]
    print(HEADER)
    for dev in devices:
        for name, op, bs, qd in WORKLOADS:
            row(os.path.basename(dev), name, "fio", "fio", alternate(
                pairs,
                lambda: fio(dev, op, bs, qd, runtime),
                lambda: blkscope(binary, dev, op, bs, qd, runtime)))
        # fio's peak tool, when bench/vs_fio.sh could build it (FIO_SRC): its best batch
        # settings for this device and depth (the median of three runs of each), then
        # alternating pairs.
        if tio:
            for qd in (1, 32):
                best = best_batch(tio, dev, qd, runtime)
                row(os.path.basename(dev), f"RND4K-Q{qd}-read",
                    f"t/io_uring -s{best[0]} -c{best[1]}", "t/io_uring", alternate(
                        pairs,
                        lambda: t_io_uring(tio, dev, qd, *best, runtime),
                        lambda: blkscope(binary, dev, "randread", "4k", qd, runtime)))
    # The harnesses' own ceiling: no I/O, full bookkeeping (fio --ioengine=null, blkscope
    # --engine null), 4K random reads at QD32.
    row("none", "RND4K-Q32-read", "fio --ioengine=null", "fio", alternate(
        pairs,
        lambda: fio(devices[0], "randread", "4k", 32, runtime, engine="null"),
        lambda: blkscope(binary, devices[0], "randread", "4k", 32, runtime, engine="null")))
    # SQPOLL (a kernel thread polls the submission queue; it costs a core): both tools with it,
    # 4K random reads at QD32. Compare with the same workload's row without it above.
    row(os.path.basename(devices[0]), "RND4K-Q32-read", "fio, both SQPOLL", "sqpoll", alternate(
        pairs,
        lambda: fio(devices[0], "randread", "4k", 32, runtime, sqpoll=True),
        lambda: blkscope(binary, devices[0], "randread", "4k", 32, runtime, sqpoll=True)))
    # QD1 on zram, each I/O kept on one CPU. zram has no NOWAIT, so io_uring hands every read
    # to an io-wq worker; when the scheduler puts that worker and the job on different CPUs,
    # each I/O waits for an idle vCPU to wake (~20K IOPS here, the unpinned rows above), on
    # one CPU it does not (~140K). With that gone, what is left is each tool's own cost.
    if zram and shutil.which("taskset"):
        dev = zram[0]
        # Each tool's own option for it: fio --cpus_allowed=0, blkscope --cpus 0 (which binds
        # the job thread and its io-wq workers; the rest of each process runs anywhere).
        row(os.path.basename(dev), "RND4K-Q1-read", "fio, both --cpus 0", "fio", alternate(
            pairs,
            lambda: fio(dev, "randread", "4k", 1, runtime, cpus="0"),
            lambda: blkscope(binary, dev, "randread", "4k", 1, runtime, cpus="0")))
        # t/io_uring has no such option: every tool's whole process under taskset -c 0.
        if tio:
            row(os.path.basename(dev), "RND4K-Q1-read", "t/io_uring, all on CPU 0",
                "t/io_uring", alternate(
                    pairs,
                    lambda: t_io_uring(tio, dev, 1, 1, 1, runtime, pin=True),
                    lambda: blkscope(binary, dev, "randread", "4k", 1, runtime, pin=True)))
        # The same unpinned QD1 row with the guest's idle vCPUs polling before they halt (the
        # haltpoll cpuidle governor of a KVM guest; this VM boots with guest_halt_poll_ns=0, so
        # every wake-up above went through the hypervisor). Set only for these rows and put
        # back (bench/vs_fio.sh puts it back too if this script is killed).
        halt = "/sys/module/haltpoll/parameters/guest_halt_poll_ns"
        governor = "/sys/devices/system/cpu/cpuidle/current_governor_ro"
        if os.path.exists(halt) and os.path.exists(governor) and \
                open(governor).read().strip() == "haltpoll":
            with open(halt) as f:
                before = f.read().strip()
            poll = os.environ.get("HALT_POLL_NS", "200000")
            try:
                with open(halt, "w") as f:
                    f.write(poll)
                row(os.path.basename(dev), "RND4K-Q1-read", f"fio, vCPUs poll {int(poll) // 1000} us",
                    "fio", alternate(
                        pairs,
                        lambda: fio(dev, "randread", "4k", 1, runtime),
                        lambda: blkscope(binary, dev, "randread", "4k", 1, runtime)))
                if tio:
                    row(os.path.basename(dev), "RND4K-Q1-read",
                        "t/io_uring, vCPUs poll", "t/io_uring", alternate(
                            pairs,
                            lambda: t_io_uring(tio, dev, 1, 1, 1, runtime),
                            lambda: blkscope(binary, dev, "randread", "4k", 1, runtime)))
            finally:
                with open(halt, "w") as f:
                    f.write(before)


if __name__ == "__main__":
    main()
