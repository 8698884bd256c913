#!/usr/bin/env python3
"""Soak: a long mixed test on a loop device that holds data (not part of CI).

A 1 GiB image filled with random bytes, attached with direct I/O; `blkscope run` does 16 KiB
random read/write at QD16 for DURATION seconds with 1 s NDJSON samples. Checked:
  - every sample is present: one per second, no gap over 2 s, and the count matches the time;
  - RSS stays flat: the largest RSS in the last quarter is within 10% (and 4 MiB) of the
    largest in the second quarter (the first quarter is warm-up);
  - the bytes the engine reports equal what /proc/diskstats saw: writes exactly (nobody else
    writes to our loop device); reads never less, and more by at most 2 MiB + 0.01% (other
    programs' signature probes, `blkscope list` among them, read a little of every device).
Prints the figures and exits 1 when a check fails. Needs root (losetup).

    sudo python3 bench/soak.py            # 30 minutes
    DURATION=300 sudo -E python3 bench/soak.py
"""
import json, os, subprocess, sys, tempfile, threading, time

DURATION = int(os.environ.get("DURATION", "1800"))
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=ROOT, check=True)
BIN = os.path.join(ROOT, "target/release/blkscope")


def diskstats(name):
    for line in open("/proc/diskstats"):
        f = line.split()
        if f[2] == name:
            return int(f[5]) * 512, int(f[9]) * 512
    raise SystemExit(f"{name} not in /proc/diskstats")


def rss_kib(pid):
    try:
        for line in open(f"/proc/{pid}/status"):
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except FileNotFoundError:
        return None
    return None


with tempfile.TemporaryDirectory() as work:
    img = os.path.join(work, "soak.img")
    with open(img, "wb") as f:
        for _ in range(1024):
            f.write(os.urandom(1 << 20))
    dev = subprocess.run(["losetup", "--find", "--show", "--direct-io=on", img],
                         capture_output=True, text=True, check=True).stdout.strip()
    name = os.path.basename(dev)
    try:
        r0, w0 = diskstats(name)
        p = subprocess.Popen([BIN, "run", dev, "--op", "randrw", "--bs", "16k", "--iodepth", "16",
                              "--runtime", f"{DURATION}s", "--interval", "1s", "--ndjson",
                              "--confirm", name, "--no-save"],
                             stdout=subprocess.PIPE, text=True)
        rss = []
        stop = threading.Event()

        def watch():
            t0 = time.time()
            while not stop.is_set():
                v = rss_kib(p.pid)
                if v is not None:
                    rss.append((time.time() - t0, v))
                stop.wait(5)

        threading.Thread(target=watch, daemon=True).start()
        samples, result = [], None
        for line in p.stdout:
            doc = json.loads(line)
            if doc.get("type") == "sample":
                samples.append(doc)
            elif doc.get("type") == "result":
                result = doc["results"][0]
        p.wait()
        stop.set()
        r1, w1 = diskstats(name)
    finally:
        subprocess.run(["losetup", "-d", dev])

fails = []
times = [s["elapsed_s"] for s in samples]
gaps = [b - a for a, b in zip(times, times[1:])]
max_gap = max(gaps) if gaps else float("inf")
if p.returncode != 0 or result is None:
    fails.append(f"blkscope exited {p.returncode}")
if max_gap > 2.0 or len(samples) < DURATION - 2:
    fails.append(f"samples: {len(samples)} for {DURATION} s, largest gap {max_gap:.2f} s")
q = DURATION / 4
second = max((v for t, v in rss if q <= t < 2 * q), default=0)
last = max((v for t, v in rss if t >= 3 * q), default=0)
if last > second * 1.10 and last - second > 4096:
    fails.append(f"RSS grew from {second} KiB to {last} KiB")
eng_r, eng_w = (result or {}).get("read_bytes", -1), (result or {}).get("write_bytes", -1)
dev_r, dev_w = r1 - r0, w1 - w0
if eng_w != dev_w:
    fails.append(f"written: engine {eng_w}, diskstats {dev_w}")
if not (eng_r <= dev_r <= eng_r + (2 << 20) + eng_r // 10000):
    fails.append(f"read: engine {eng_r}, diskstats {dev_r}")

print(f"soak: {DURATION} s of randrw 16K QD16 on {dev} (1 GiB of random data, direct I/O)")
print(f"  samples         {len(samples)} (largest gap {max_gap:.2f} s)")
print(f"  RSS             first {rss[0][1] if rss else 0} KiB, 2nd quarter max {second} KiB, "
      f"last quarter max {last} KiB ({len(rss)} readings)")
if result:
    print(f"  IOPS            {result['iops']:.0f}, p99 {result['latency_ns']['p99'] / 1e3:.0f} us")
print(f"  bytes read      engine {eng_r}, diskstats {dev_r}")
print(f"  bytes written   engine {eng_w}, diskstats {dev_w}")
print("  result          " + ("FAILED: " + "; ".join(fails) if fails else "ok"))
sys.exit(1 if fails else 0)
