#!/usr/bin/env bash
# Benchmark: the cost of sampling and computing iostat -x for 1000 devices.
# Builds a fixture root with 1000 devices (sysfs entries and a /proc/diskstats of 1000 lines)
# in a temporary directory, runs `blkscope stat --json` over it for COUNT reports at a short
# interval, and prints the CPU time per report, i.e. the CPU share at one report per second.
# No root needed.
#
#   bash bench/stat_1000.sh            # N=1000 COUNT=100
set -euo pipefail
N=${N:-1000}
COUNT=${COUNT:-100}
. "$(dirname "$0")/lib.sh"
bench_build
bench_tmpdir root
python3 - "$root" "$N" <<'PY'
import os, sys
root, n = sys.argv[1], int(sys.argv[2])
os.makedirs(f"{root}/proc/self")
open(f"{root}/proc/self/mountinfo", "w").close()
open(f"{root}/proc/swaps", "w").write("Filename Type Size Used Priority\n")
with open(f"{root}/proc/diskstats", "w") as ds:
    for i in range(n):
        name = f"sd{i}"
        d = f"{root}/sys/block/{name}"
        os.makedirs(f"{d}/queue")
        open(f"{d}/dev", "w").write(f"8:{i}\n")
        open(f"{d}/size", "w").write("2097152\n")
        open(f"{d}/queue/iostats", "w").write("1\n")
        ds.write(f"   8 {i:7d} {name} {i*10} 5 {i*80} 40 {i*20} 7 {i*160} 90 0 120 130 0 0 0 0 3 1\n")
PY
python3 - "$BIN" "$root" "$COUNT" "$N" <<'PY'
import resource, subprocess, sys, time
binary, root, count, n = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
t0 = time.monotonic()
before = resource.getrusage(resource.RUSAGE_CHILDREN)
out = subprocess.run([binary, "--root", root, "stat", "--json", "--interval", "10ms",
                      "--count", str(count)], check=True, capture_output=True, text=True).stdout
after = resource.getrusage(resource.RUSAGE_CHILDREN)
wall = time.monotonic() - t0
cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
lines = out.splitlines()
devices = len(__import__("json").loads(lines[-1])["devices"])
print(f"{len(lines)} reports of {devices} devices in {wall:.2f} s wall, {cpu:.3f} s CPU "
      f"(start-up included): {cpu / len(lines) * 1000:.2f} ms CPU per report, "
      f"= {cpu / len(lines) * 100:.2f}% of one core at one report per second")
PY
