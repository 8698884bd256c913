#!/usr/bin/env python3
"""Measures how fast `blkscope run` stops after SIGINT: from the signal to the process's exit
(in-flight I/O drained, scratch file removed, partial result printed). No root needed.

    python3 bench/cancel_latency.py [BLKSCOPE] [RUNS]
"""
import os, signal, statistics, subprocess, sys, tempfile, time

binary = sys.argv[1] if len(sys.argv) > 1 else "target/release/blkscope"
runs = int(sys.argv[2]) if len(sys.argv) > 2 else 10
for label, args in [
    ("4 KiB random read QD16", ["--op", "randread", "--bs", "4k", "--iodepth", "16"]),
    ("1 MiB sequential write QD8", ["--op", "write", "--bs", "1M", "--iodepth", "8"]),
]:
    times = []
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as d:
            p = subprocess.Popen([binary, "run", d, *args, "--size", "128M", "--runtime", "60s",
                                  "--json", "--no-save"], stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL)
            time.sleep(1.0)
            t = time.monotonic()
            p.send_signal(signal.SIGINT)
            p.wait()
            times.append((time.monotonic() - t) * 1000)
            assert not os.listdir(d), "scratch file left"
    print(f"{label}: SIGINT to exit median {statistics.median(times):.1f} ms, "
          f"max {max(times):.1f} ms over {runs} runs")
