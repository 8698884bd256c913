#!/usr/bin/env bash
# Instructions per I/O in user space, counted by valgrind's callgrind: blkscope against fio and
# t/io_uring, 4K random reads on a filled zram device at QD1 and QD32. Counts, not seconds:
# repeatable on a VM that has no PMU (perf stat says "not supported" here) and whatever else
# the machine is doing. The kernel's share of an I/O is not counted.
#
#   sudo bash bench/instructions.sh
#   sudo FIO_SRC=/tmp/fio bash bench/instructions.sh      # t/io_uring too
#   sudo BLKSCOPE=/path/to/blkscope bash bench/instructions.sh
#
# Each tool runs twice under callgrind (separate threads), N1 and N2 I/Os (t/io_uring, which
# runs for a time, 1 s and 3 s, its I/Os counted as calls of its get_offset); a figure is the
# difference of the two runs over the difference of their I/Os, so start-up and teardown
# cancel. "I/O thread" is the thread that grew most (blkscope's job, fio's job thread,
# t/io_uring's submitter); "process" is all threads. Work a tool does per unit of time (blkscope
# hands its interval figures to the sampler every 10 ms; fio checks its clocks) is counted at
# valgrind's speed, ~50x slower than without it, so it weighs more here than it does natively:
# blkscope's top functions are printed so that it can be told apart.
#
# Needs root, zram, fio (to fill the device) and valgrind (apt-get install valgrind).
# t/io_uring is built from FIO_SRC with --disable-native: valgrind cannot run the AVX-512 code
# that -march=native gives on this machine.
set -euo pipefail
N1=${N1:-4096}
N2=${N2:-16384}
. "$(dirname "$0")/lib.sh"
bench_need_fio
bench_need_zram
command -v valgrind >/dev/null || { echo "valgrind is needed: apt-get install valgrind" >&2; exit 1; }
if [ -n "${BLKSCOPE:-}" ]; then BIN=$(realpath "$BLKSCOPE"); else bench_build; fi
bench_tmpdir work
bench_zram zdev 1G
bench_fill "/dev/$zdev"
bench_t_io_uring TIO --disable-native
export XDG_DATA_HOME=$work/data
echo "blkscope: $BIN; 4K random reads on a filled 1G /dev/$zdev; runs of $N1 and $N2 I/Os"
TIO=$TIO python3 - "$BIN" "/dev/$zdev" "$work" "$N1" "$N2" <<'EOF'
import glob, json, os, re, subprocess, sys
binary, dev, work, n1, n2 = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
tio = os.environ.get("TIO")

def callgrind(tag, argv):
    """Runs argv under callgrind; its stdout and {thread number: (instructions, file)}."""
    out = subprocess.run(["valgrind", "--tool=callgrind", "--separate-threads=yes",
                          f"--callgrind-out-file={work}/{tag}.%p"] + argv,
                         check=True, capture_output=True, text=True).stdout
    threads = {}
    for f in glob.glob(f"{work}/{tag}.*-*"):
        n = int(f.rsplit("-", 1)[1])
        with open(f) as fh:
            m = re.search(r"^(?:summary|totals): (\d+)", fh.read(), re.M)
        threads[n] = (int(m.group(1)) if m else 0, f)
    return out, threads

def calls(path, name):
    """Calls of functions named name (or name.part.N, name.isra.N) in a callgrind file."""
    names, cur, total = {}, None, 0
    with open(path) as fh:
        for line in fh:
            m = re.match(r"c?fn=\((\d+)\)(?: (.*))?", line)
            if m:
                if m.group(2):
                    names[m.group(1)] = m.group(2)
                cur = names.get(m.group(1), "") if line.startswith("cfn") else None
                continue
            m = re.match(r"calls=(\d+)", line)
            if m and cur is not None and re.fullmatch(re.escape(name) + r"(\..*)?", cur):
                total += int(m.group(1))
            if m:
                cur = None
    return total

def functions(path):
    """{function: instructions} of one callgrind file (callgrind_annotate, self cost)."""
    out = subprocess.run(["callgrind_annotate", "--threshold=100", path],
                         capture_output=True, text=True).stdout
    f = {}
    for line in out.splitlines():
        m = re.match(r"\s*([\d,]+) \([^)]*\)\s+(\S.*?) \[", line)
        if m:
            # "file:function" or "???:function"; the function's own name may hold "::".
            name = re.sub(r"^(?:\?\?\?|[^:]*[./][^:]*):", "", m.group(2))
            f[name] = f.get(name, 0) + int(m.group(1).replace(",", ""))
    return f

def per_io(a, b, ios_a, ios_b):
    d = ios_b - ios_a
    grown = {n: b[n][0] - a.get(n, (0, None))[0] for n in b}
    t = max(grown, key=grown.get)
    return grown[t] / d, sum(grown.values()) / d, (a.get(t, (0, None))[1], b[t][1], d)

def blkscope(qd, n, tag):
    out, th = callgrind(tag, [binary, "run", dev, "--op", "randread", "--bs", "4k",
                              "--iodepth", str(qd), "--size", str(n * 4096), "--no-save", "--json"])
    return json.loads(out)["results"][0]["ios"], th

def fio(qd, n, tag):
    out, th = callgrind(tag, ["fio", "--name=b", "--rw=randread", "--bs=4k", f"--iodepth={qd}",
                              "--ioengine=io_uring", f"--size={n * 4096}", f"--filename={dev}",
                              "--direct=1", "--fixedbufs", "--registerfiles", "--randrepeat=0",
                              "--thread", "--output-format=json"])
    return json.loads(out)["jobs"][0]["read"]["total_ios"], th

def t_io_uring(qd, secs, tag):
    b = min(qd, 4)
    _, th = callgrind(tag, [tio, f"-d{qd}", f"-s{b}", f"-c{b}", "-b4096", "-p0", "-B1", "-F1",
                            "-O1", "-R1", f"-r{secs}", dev])
    # Its I/Os: calls of get_offset, one an I/O, in whichever thread made them.
    return sum(calls(f, "get_offset") for _, f in th.values()), th

rows, detail = [], None
for qd in (1, 32):
    tools = [("blkscope", blkscope, n1, n2), ("fio", fio, n1, n2)]
    if tio:
        tools.append(("t/io_uring", t_io_uring, 1, 3))
    for name, run, a_arg, b_arg in tools:
        key = name.replace("/", "_")
        ios_a, a = run(qd, a_arg, f"{key}-{qd}-a")
        ios_b, b = run(qd, b_arg, f"{key}-{qd}-b")
        if ios_b <= ios_a:
            sys.exit(f"{name} QD{qd}: no more I/Os in the longer run ({ios_a}, {ios_b})")
        thread, process, files = per_io(a, b, ios_a, ios_b)
        rows.append((name, qd, thread, process))
        print(f"{name} QD{qd}: {ios_a} and {ios_b} I/Os", flush=True)
        if name == "blkscope":
            fa, fb = functions(files[0]), functions(files[1])
            top = sorted(((fb.get(k, 0) - fa.get(k, 0)) / files[2], k) for k in set(fa) | set(fb))
            detail = (detail or []) + [(qd, [t for t in reversed(top) if t[0] >= 5][:8])]
print()
print(f"{'tool':<12}{'QD':>4}{'I/O thread':>12}{'process':>10}   user-space instructions per I/O")
for name, qd, thread, process in rows:
    print(f"{name:<12}{qd:>4}{thread:>12.0f}{process:>10.0f}")
for qd, top in detail or []:
    print(f"\nblkscope's job thread at QD{qd}, per I/O:")
    for v, k in top:
        print(f"  {v:8.1f}  {k[:100]}")
EOF
