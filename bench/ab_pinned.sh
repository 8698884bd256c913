#!/usr/bin/env bash
# A/B of two blkscope builds where the engine's own cost shows most: 4K random reads at QD1 on
# a filled zram device, each whole process on CPU 0 (taskset -c 0), so that no wake-up of an
# idle CPU decides the figure. A round is one RUNTIME-second run of A and of B (and, with
# FIO_SRC, of t/io_uring, a second longer: it prints its first figure after one), each round
# in another order, every order in turn (ROUNDS a multiple of 6). Prints every round, then the
# medians, each against t/io_uring, the paired median B/A with how many rounds B was ahead,
# and the mean user CPU of a run (the run's own cpu.user_s: coarse, mostly multiples of 4 ms here).
# On a VM one set of rounds can swing 10% from the next: judge a change by the paired
# figure and its count, not by one median.
#
#   sudo bash bench/ab_pinned.sh A B            # each a git revision or a blkscope binary
#   sudo ROUNDS=36 FIO_SRC=/tmp/fio bash bench/ab_pinned.sh HEAD~1 HEAD
#   sudo QD=32 FIO_SRC=/tmp/fio bash bench/ab_pinned.sh HEAD~1 HEAD
#
# QD (default 1) is the queue depth; with everything on one CPU the job thread and the kernel's
# io-wq workers take turns there, so at QD32 the engine's own instructions per I/O show most.
# t/io_uring then submits and reaps 4 at a time (its -s8 -c8 once hung on zram: vs_fio.py).
#
# Needs root and fio (to fill the device). A revision is built from `git archive` in a
# temporary directory; the zram device and the directory are removed on exit (lib.sh).
set -euo pipefail
ROUNDS=${ROUNDS:-18}
RUNTIME=${RUNTIME:-3}
QD=${QD:-1}
[[ $QD =~ ^[0-9]+$ ]] && [ "$QD" -ge 1 ] && [ "$QD" -le 4096 ] ||
  { echo "QD must be a queue depth from 1 to 4096, not '$QD'" >&2; exit 2; }
[ $# -eq 2 ] || { echo "usage: bench/ab_pinned.sh A B (git revisions or blkscope binaries)" >&2; exit 2; }
A=$1
B=$2
# Binaries are taken as given, relative to where the script was called from.
for x in A B; do
  if [ -f "${!x}" ]; then printf -v "$x" %s "$(realpath "${!x}")"; fi
done
. "$(dirname "$0")/lib.sh"
bench_need_fio
bench_tmpdir work
bin_of() { # $1 revision or binary, $2 name: prints the binary's path
  if [ -x "$1" ] && [ -f "$1" ]; then echo "$1"; return; fi
  mkdir "$work/$2"
  git archive "$1" | tar -xf - -C "$work/$2"
  (cd "$work/$2" && CARGO_TARGET_DIR=$work/target cargo build --release --quiet)
  cp "$work/target/release/blkscope" "$work/$2.bin"
  echo "$work/$2.bin"
}
BIN_A=$(bin_of "$A" a)
BIN_B=$(bin_of "$B" b)
bench_need_zram
bench_zram zdev 1G
bench_fill "/dev/$zdev"
bench_t_io_uring T_IO_URING
echo "A=$A B=$B: 4K randread QD$QD on a filled 1G /dev/$zdev, taskset -c 0, $ROUNDS rounds of ${RUNTIME}s"
# Saved runs go to the temporary directory, not the caller's history.
export XDG_DATA_HOME=$work/data
T_IO_URING=$T_IO_URING python3 - "$BIN_A" "$BIN_B" "/dev/$zdev" "$ROUNDS" "$RUNTIME" "$QD" <<'EOF'
import itertools, json, os, re, statistics as st, subprocess, sys
bin_a, bin_b, dev, rounds, runtime, qd = sys.argv[1:7]
batch = min(int(qd), 4)
tio = os.environ.get("T_IO_URING")
def blk(b):
    out = subprocess.run(["taskset", "-c", "0", b, "run", dev, "--op", "randread", "--bs", "4k",
                          "--iodepth", qd, "--runtime", f"{runtime}s", "--json"],
                         check=True, capture_output=True, text=True).stdout
    r = json.loads(out)["results"][0]
    return r["iops"], r["cpu"]["user_s"]
def t_io_uring():
    # Its best QD1 settings (vs_fio.py), batches of 4 deeper; the median of its per-second figures. It prints its
    # first figure after a second, and with -r2 one at most (none when the timer wins): run it
    # a second longer than the others, at least three, and again if it printed none.
    r = max(int(runtime), 2) + 1
    for _ in range(3):
        try:
            # A hung run (vs_fio.py saw one) is a failed try.
            out = subprocess.run(["taskset", "-c", "0", tio, f"-d{qd}", f"-s{batch}", f"-c{batch}", "-b4096",
                                  "-p0", "-B1", "-F1", "-n1", "-R1", "-X1", "-O1", f"-r{r}", dev],
                                 check=True, capture_output=True, text=True,
                                 timeout=r + 30).stdout
        except subprocess.TimeoutExpired:
            out = "(hung; killed)"
            continue
        v = [float(x) * {"": 1, "K": 1e3, "M": 1e6}[u]
             for x, u in re.findall(r"^IOPS=([0-9.]+)([KM]?)", out, re.M)]
        if v:
            return st.median(v)
    sys.exit(f"t/io_uring printed no IOPS figure: {out!r}")
rows = {"A": [], "B": [], "t": []}
user = {"A": [], "B": []}
# Each round runs the tools in another order, every order in turn. With a fixed order
# (t/io_uring, A, B), B was ahead by 2.3% in 14 of 16 rounds, and then, the two binaries
# swapped, by 2.7% in 13 of 16: the order, not the binary.
orders = list(itertools.permutations(["t", "A", "B"] if tio else ["A", "B"]))
for r in range(int(rounds)):
    figs = {}
    for k in orders[r % len(orders)]:
        if k == "t":
            figs[k] = f"t/io_uring {t_io_uring():.0f}"
            rows["t"].append(float(figs[k].split()[1]))
        else:
            iops, u = blk(bin_a if k == "A" else bin_b)
            rows[k].append(iops)
            user[k].append(u)
            figs[k] = f"{k} {iops:.0f} (user {u:.3f} s)"
    order = "".join(orders[r % len(orders)])
    print(f"round {r + 1} ({order}): " + "  ".join(figs[k] for k in sorted(figs)), flush=True)
for k in ("A", "B"):
    m = st.median(rows[k])
    vs = f", {m / st.median(rows['t']):.3f}x t/io_uring" if tio else ""
    print(f"{k}: median {m:.0f} IOPS{vs}, mean user CPU {st.mean(user[k]):.3f} s a run")
if tio:
    print(f"t/io_uring: median {st.median(rows['t']):.0f} IOPS")
paired = [b / a for a, b in zip(rows["A"], rows["B"])]
ahead = sum(p > 1 for p in paired)
print(f"B/A paired median {st.median(paired):.3f}, B ahead in {ahead} of {len(paired)} rounds")
EOF
