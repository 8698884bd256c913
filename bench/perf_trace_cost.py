#!/usr/bin/env python3
"""What a trace through perf_event_open would cost its process a run, against a tracefs
instance's (bench/trace_instance.py): blkscope's five events (block_bio_queue, block_rq_issue,
block_rq_complete, sched_process_fork, sched_process_exit) opened as perf tracepoint events on
each CPU, the block ones filtered to one device, one ring buffer a CPU (the others' output set
to it), then two windows turned on and off by ioctl, then all closed. Each step timed by the
process's CPU (getrusage) and the wall clock; ROUNDS rounds, medians. No I/O is made. An
experiment for docs/architecture.md ("Counting in the kernel: measured before it is built").

Usage: sudo python3 bench/perf_trace_cost.py [ROUNDS] [MAJ:MIN]
"""
import ctypes
import mmap
import os
import sys

from steps import Steps

LIBC = ctypes.CDLL(None, use_errno=True)
NR_PERF_EVENT_OPEN = 298  # x86_64
EVENTS = [("block", "block_bio_queue"), ("block", "block_rq_issue"),
          ("block", "block_rq_complete"), ("sched", "sched_process_fork"),
          ("sched", "sched_process_exit")]
IOC_ENABLE, IOC_DISABLE, IOC_SET_OUTPUT, IOC_SET_FILTER = 0x2400, 0x2401, 0x2405, 0x40082406
SAMPLE = (1 << 1) | (1 << 2) | (1 << 7) | (1 << 10)  # TID, TIME, CPU, RAW
RING_PAGES = 256


class Attr(ctypes.Structure):
    _fields_ = [("type", ctypes.c_uint32), ("size", ctypes.c_uint32), ("config", ctypes.c_uint64),
                ("sample_period", ctypes.c_uint64), ("sample_type", ctypes.c_uint64),
                ("read_format", ctypes.c_uint64), ("flags", ctypes.c_uint64),
                ("wakeup_events", ctypes.c_uint32), ("rest", ctypes.c_uint8 * 92)]


def ioctl(fd, req, arg=0):
    if LIBC.ioctl(fd, ctypes.c_ulong(req), arg) < 0:
        raise OSError(ctypes.get_errno(), f"ioctl {req:#x}")


def open_event(config, cpu):
    a = Attr(type=2, size=ctypes.sizeof(Attr), config=config, sample_period=1,
             sample_type=SAMPLE, flags=1, wakeup_events=1 << 20)  # disabled
    fd = LIBC.syscall(NR_PERF_EVENT_OPEN, ctypes.byref(a), -1, cpu, -1, 8)  # FD_CLOEXEC
    if fd < 0:
        raise OSError(ctypes.get_errno(), "perf_event_open")
    return fd


def one(ids, dev, steps):
    step = steps.step
    fds, rings = [], []

    def start():
        for cpu in range(os.cpu_count()):
            first = None
            for i, config in enumerate(ids):
                fd = open_event(config, cpu)
                fds.append(fd)
                if i < 3:
                    ioctl(fd, IOC_SET_FILTER, ctypes.c_char_p(f"dev == {dev}".encode()))
                if first is None:
                    first = fd
                    rings.append(mmap.mmap(fd, (1 + RING_PAGES) * mmap.PAGESIZE))
                else:
                    ioctl(fd, IOC_SET_OUTPUT, first)

    def switch(req):
        return lambda: [ioctl(fd, req) for fd in fds]

    def close():
        for r in rings:
            r.close()
        for fd in fds:
            os.close(fd)

    step("open, filter, map", start)
    for _ in range(2):
        step("a window on (all)", switch(IOC_ENABLE))
        step("a window off (all)", switch(IOC_DISABLE))
    step("close", close)


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    major, minor = (sys.argv[2] if len(sys.argv) > 2 else "7:0").split(":")
    dev = (int(major) << 20) | int(minor)
    ids = [int(open(f"/sys/kernel/tracing/events/{s}/{e}/id").read()) for s, e in EVENTS]
    steps = Steps()
    for _ in range(rounds):
        one(ids, dev, steps)
    total = steps.table(rounds, f"medians of {rounds}, {len(EVENTS)} events x {os.cpu_count()} CPUs")
    print(f"CPU a trace of two windows: {total:.2f} ms")


if __name__ == "__main__":
    main()
