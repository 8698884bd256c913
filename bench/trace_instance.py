#!/usr/bin/env python3
"""What one tracing instance costs the process that makes it, step by step, as blkscope makes
one (`trace/mod.rs`: `Tracer::start`, `set_up`, `remove_instance`) and as a window turns its
three block events on and off (`trace/reader.rs`). Each step is a write (or mkdir, rmdir) timed
by the process's own CPU (getrusage: what a matrix row's CPU per I/O counts) and by the wall
clock; ROUNDS instances, medians. The kernel's work in other threads (RCU callbacks that free
the buffers, say) is not the process's and is not counted.

Usage: sudo python3 bench/trace_instance.py [ROUNDS] [MAJ:MIN]
  sudo python3 bench/trace_instance.py 10 7:0
The device number only goes into the events' filter (no I/O is made); default 7:0.
"""
import os
import sys

from steps import Steps

BASE = "/sys/kernel/tracing/instances"
EVENTS = ["block_bio_queue", "block_rq_issue", "block_rq_complete"]
LIFE = ["sched_process_fork", "sched_process_exit"]
NEEDED_KB = 1171  # trace/mod.rs buffer_kb at the default rate limit


def write(path, value):
    with open(path, "w") as f:
        f.write(value)


def one(d, dev, steps):
    """Makes, sets up, windows once and removes instance `d`, each step into `steps`."""
    step = steps.step
    step("mkdir", lambda: os.mkdir(d))
    step("tracing_on 0", lambda: write(f"{d}/tracing_on", "0"))
    step("record-tgid", lambda: write(f"{d}/options/record-tgid", "1"))
    step("trace_clock mono", lambda: write(f"{d}/trace_clock", "mono"))
    # As blkscope since 2026-11-29: resized only where the instance's own hold less than the
    # default rate limit's 1171 KiB (the kernel's 1410 do).
    if int(open(f"{d}/buffer_size_kb").read().split()[0]) < NEEDED_KB:
        step("buffer_size_kb", lambda: write(f"{d}/buffer_size_kb", str(NEEDED_KB)))
    for e in EVENTS:
        step("filter (each)", lambda: write(f"{d}/events/block/{e}/filter", f"dev == {dev}"))
    for e in EVENTS:
        step("enable (each)", lambda: write(f"{d}/events/block/{e}/enable", "1"))
    for e in LIFE:
        step("sched enable (each)", lambda: write(f"{d}/events/sched/{e}/enable", "1"))
    step("tracing_on 1", lambda: write(f"{d}/tracing_on", "1"))
    for e in EVENTS:
        step("disable (each)", lambda: write(f"{d}/events/block/{e}/enable", "0"))
    step("events/enable 0", lambda: write(f"{d}/events/enable", "0"))
    step("rmdir", lambda: os.rmdir(d))


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    major, minor = (sys.argv[2] if len(sys.argv) > 2 else "7:0").split(":")
    dev = (int(major) << 20) | int(minor)
    d = f"{BASE}/blkscope-bench-instance-{os.getpid()}"
    steps = Steps()
    try:
        for _ in range(rounds):
            one(d, dev, steps)
    finally:
        if os.path.isdir(d):
            write(f"{d}/events/enable", "0")
            os.rmdir(d)
    total = steps.table(rounds, f"medians of {rounds}; each: per write")
    print(f"CPU an instance, its window included: {total:.2f} ms")


if __name__ == "__main__":
    main()
