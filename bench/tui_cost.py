#!/usr/bin/env python3
"""Drives blkscope headless and in tmux; see tui_cost.sh."""
import json, os, re, statistics, subprocess, sys, time

binary, mnt, pairs = sys.argv[1], sys.argv[2], int(sys.argv[3])
S = "blkscope-bench"
TICK = os.sysconf("SC_CLK_TCK")

def tmux(*a):
    return subprocess.run(["tmux", *a], check=True, capture_output=True, text=True).stdout

def screen():
    return tmux("capture-pane", "-p", "-t", S)

def keys(*ks):
    for k in ks:
        tmux("send-keys", "-t", S, k)
        time.sleep(0.08)

def wait_for(text, secs):
    t = time.time()
    while time.time() - t < secs:
        s = screen()
        if text in s:
            return s
        time.sleep(0.1)
    raise SystemExit(f"timed out waiting for {text!r}:\n{screen()}")

def cpu(pid, tid=None):
    path = f"/proc/{pid}/task/{tid}/stat" if tid else f"/proc/{pid}/stat"
    f = open(path).read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / TICK  # utime + stime

def headless():
    out = subprocess.run([binary, "run", mnt, "--op", "randread", "--bs", "4k", "--iodepth", "32",
                          "--runtime", "5s", "--size", "256M", "--json"],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)["results"][0]["iops"]

# The environment goes in the command: a tmux server already running would otherwise start the
# TUI with its own (and the TUI would save its runs in the real home).
tmux("new-session", "-d", "-s", S, "-x", "80", "-y", "24",
     f"env XDG_DATA_HOME={os.environ['XDG_DATA_HOME']} {binary} --dir {mnt}")
wait_for("Devices", 20)
pid = int(subprocess.run(["pgrep", "-n", "-f", f"{binary} --dir {mnt}"], capture_output=True,
                         text=True).stdout.split()[0])
# Idle: 10 s with nothing running (the diskstats panel still refreshes every second).
c0 = cpu(pid); time.sleep(10); idle = (cpu(pid) - c0) / 10
# Pick "Random read" and set its runtime to 5 s.
keys("Tab", "j", "j", "j", "e", "Down", "Down", "Enter", *["BSpace"] * 6, "5", "s", "Enter", "Escape")
tui_iops, head_iops, draw_cpu = [], [], []
for i in range(pairs):
    head_iops.append(headless())
    ui0 = cpu(pid, pid)
    t0 = time.time()
    keys("r")
    # Wait for this run's row in the results table.
    while True:
        s = screen()
        # At 80 columns the target column shows "scratch", wider "scratch file".
        rows = re.findall(r"│(\d+)\s+Random read\s+scratch(?: file)?\s+([\d.]+)\s+(\d+)", s)
        if len(rows) >= i + 1 and "Results" in s:
            break
        if time.time() - t0 > 30:
            raise SystemExit(s)
        time.sleep(0.2)
    draw_cpu.append((cpu(pid, pid) - ui0) / (time.time() - t0))
    tui_iops.append(float(rows[i][2]))
keys("q")
h, t = statistics.median(head_iops), statistics.median(tui_iops)
print(f"headless IOPS: {[round(x) for x in head_iops]} median {h:.0f}")
print(f"under TUI IOPS: {[round(x) for x in tui_iops]} median {t:.0f}")
print(f"TUI cost in throughput: {(h - t) / h * 100:+.1f}% (goal: under 3%)")
print(f"TUI CPU while idle: {idle * 100:.2f}% of one core")
print(f"UI thread CPU while drawing a live test: {statistics.median(draw_cpu) * 100:.2f}% of one core")
