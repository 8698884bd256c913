#!/usr/bin/env python3
"""Where a traced run's CPU goes, thread by thread: blkscope runs of one job on a device, in
alternating rounds of each MODE, each thread's CPU time read from /proc/PID/task/TID/schedstat
every 10 ms while the command runs (the job threads, the main thread, the trace's reader,
others such as io-wq workers), over the run's I/Os. Prints each round's whole-process CPU per
I/O, then per mode the medians, each mode's per-round ratio to the first mode's, and the part
of it the mode's own threads carry (the reader and the main thread's more, over the first
mode's whole CPU: the trace's fixed and reading costs, without the device's noise in the job
thread; the events' recording in the job thread is not in it).

MODES (comma-separated): off (`--no-trace`), default (BPF programs where the kernel runs
them), NAME=BINARY (another build's default, to compare two builds' traces against one `off`:
`off,default,old=/tmp/blkscope-old`), tracefs (the default through a tracefs instance,
BLKSCOPE_TRACE_VIA=tracefs), soft
(tracefs with the block events kept registered between windows in the kernel's soft mode,
BLKSCOPE_TRACE_SOFT=1), bare (a
`--no-trace` run beside a tracefs instance of this script's own whose three block events are
in soft mode, no window ever opened).

With PROGRAMS=1, kernel.bpf_stats_enabled is on for the rounds (the kernel then times each BPF
program's runs, about two clock reads a run more) and each run's trace programs' time in the
kernel (their `run_time_ns` in /proc/PID/fdinfo, read with the threads) is a column of its own,
`programs`: the events' recording, in whichever thread or interrupt ran the tracepoint (the
job thread, the loop device's worker, completions), which the threads' figures above do not
separate. It is added to the own threads' share as a second figure.

Usage: sudo python3 bench/trace_threads.py DEVICE ROUNDS RUNTIME MODES JOB-ARGS...
  sudo python3 bench/trace_threads.py /dev/loop0 16 3s off,default,soft \\
       --op randread --bs 4k --iodepth 32 --mode direct
BLKSCOPE: the binary (default target/release/blkscope). The device must hold data (filled).
"""
import json
import os
import statistics as st
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
BIN = os.environ.get("BLKSCOPE", os.path.join(HERE, "..", "target", "release", "blkscope"))
BARE = "/sys/kernel/tracing/instances/blkscope-bench-threads"
STATS = "/proc/sys/kernel/bpf_stats_enabled"
PROGRAMS = os.environ.get("PROGRAMS") == "1"


def bare_instance():
    """A tracefs instance whose block events are registered and off (soft mode)."""
    os.mkdir(BARE)
    trigger = os.path.join(BARE, "events/block/block_rq_requeue/trigger")
    for e in ("block_bio_queue", "block_rq_issue", "block_rq_complete"):
        with open(trigger, "a") as f:
            f.write(f"enable_event:block:{e}:0")


def thread_kind(comm):
    if comm.startswith("blkscope-job"):
        return "job"
    return {"blkscope": "main", "blkscope-trace": "reader"}.get(comm, "other")


def kind_of(pid, tid, comm):
    """The main thread by its id (its name is the binary's, which BLKSCOPE may rename)."""
    return "main" if tid == str(pid) else thread_kind(comm)


def programs_ns(pid):
    """The kernel time (ns) of the BPF programs process `pid` holds, as its fdinfo says now."""
    total = 0
    try:
        fds = os.listdir(f"/proc/{pid}/fdinfo")
    except OSError:
        return None
    for fd in fds:
        try:
            text = open(f"/proc/{pid}/fdinfo/{fd}").read()
        except OSError:
            continue
        if "prog_type:" in text:
            for line in text.splitlines():
                if line.startswith("run_time_ns:"):
                    total += int(line.split()[1])
    return total


def one(dev, runtime, mode, job):
    binary = mode.split("=", 1)[1] if "=" in mode else BIN
    args = [binary, "run", dev, *job, "--runtime", runtime, "--no-save", "--json"]
    env = dict(os.environ)
    if mode in ("off", "bare"):
        args.append("--no-trace")
    if mode == "soft":
        env["BLKSCOPE_TRACE_SOFT"] = "1"
    if mode in ("tracefs", "soft"):
        env["BLKSCOPE_TRACE_VIA"] = "tracefs"
    if mode == "bare":
        bare_instance()
    try:
        p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
        seen = {}
        progs = 0
        while p.poll() is None:
            if PROGRAMS:
                progs = max(progs, programs_ns(p.pid) or 0)
            try:
                tids = os.listdir(f"/proc/{p.pid}/task")
            except OSError:
                tids = []
            for tid in tids:
                try:
                    comm = open(f"/proc/{p.pid}/task/{tid}/comm").read().strip()
                    ns = int(open(f"/proc/{p.pid}/task/{tid}/schedstat").read().split()[0])
                    seen[tid] = (kind_of(p.pid, tid, comm), ns)
                except OSError:
                    pass
            time.sleep(0.01)
        out = p.stdout.read()
    finally:
        if mode == "bare":
            os.rmdir(BARE)
    r = json.loads(out)["results"][0]
    by = {}
    for k, ns in seen.values():
        by[k] = by.get(k, 0.0) + ns / 1e6
    by["all"] = sum(by.values())
    if PROGRAMS:
        by["programs"] = progs / 1e6
    return r["iops"], max(r["ios"], 1), by


def name(mode):
    """A mode as its rows print it: NAME of NAME=BINARY."""
    return mode.split("=", 1)[0]


def main():
    if len(sys.argv) < 6:
        sys.exit(__doc__)
    dev, rounds, runtime = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    modes, job = sys.argv[4].split(","), sys.argv[5:]
    res = {m: [] for m in modes}
    stats_were = None
    if PROGRAMS:
        stats_were = open(STATS).read().strip()
        open(STATS, "w").write("1")
    try:
        for i in range(rounds):
            for m in modes if i % 2 == 0 else modes[::-1]:
                res[m].append(one(dev, runtime, m, job))
    finally:
        if stats_were is not None:
            open(STATS, "w").write(stats_were)
    us = lambda r, k: r[2].get(k, 0.0) * 1e3 / r[1]  # noqa: E731
    for m in modes:
        print(f"{name(m):<8}", " ".join(f"{r[0] / 1e3:.0f}K/{us(r, 'all'):.2f}" for r in res[m]))
    print("\nmedians: IOPS, then each thread's CPU ms a run and us an I/O")
    for m in modes:
        keys = sorted({k for r in res[m] for k in r[2]})
        cells = " ".join(
            f"{k} {st.median(r[2].get(k, 0.0) for r in res[m]):.1f}ms "
            f"{st.median(us(r, k) for r in res[m]):.3f}us"
            for k in keys
        )
        print(f"{name(m):<8} IOPS {st.median(r[0] for r in res[m]):.0f} {cells}")
    base = modes[0]
    for m in modes[1:]:
        ratios = sorted(us(a, "all") / us(b, "all") for a, b in zip(res[m], res[base]))
        print(f"{name(m)}/{name(base)} whole-process CPU per I/O, each round: median"
              f" {st.median(ratios):.3f} [{' '.join(f'{x:.2f}' for x in ratios)}]")
        # The part of the trace's cost its own threads carry (the reader, the main thread's
        # more), each round against the base run beside it: the device's swings, which move
        # the job thread's CPU by more than the whole trace costs, are not in it.
        own = sorted(share(a, b, False) for a, b in zip(res[base], res[m]))
        print(f"{name(m)}: its reader and main thread's more, of {name(base)}'s whole CPU, each"
              f" round: median {100 * st.median(own):.1f}% [{percents(own)}]")
        if PROGRAMS:
            full = sorted(share(a, b, True) for a, b in zip(res[base], res[m]))
            print(f"{name(m)}: the same with its programs' kernel time, each round: median"
                  f" {100 * st.median(full):.1f}% [{percents(full)}]")


def share(a, b, programs):
    """Run b's reader and main thread's more than run a's, over a's whole CPU; with `programs`,
    b's programs' time in the kernel too (in the job thread, the loop device's worker or an
    interrupt, wherever the tracepoint ran)."""
    more = b[2].get("reader", 0.0) + b[2].get("main", 0.0) - a[2].get("main", 0.0)
    if programs:
        more += b[2].get("programs", 0.0)
    return more / max(a[2]["all"], 1e-9)


def percents(xs):
    return " ".join(f"{100 * x:.1f}" for x in xs)


if __name__ == "__main__":
    main()
