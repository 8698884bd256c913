#!/usr/bin/env bash
# Benchmark: what `--engine auto`'s probe costs a run where it probes (io_uring hands the I/O to
# io-wq: zram). On a filled 1 GiB zram device of its own, each job of ROWS runs PAIRS
# alternating pairs of RUNTIME-second runs, `--engine auto` against the engine the probe chose
# there (`--engine uring` or `psync`, read from the first auto run), and prints the medians of
# IOPS and of the whole process's CPU time per I/O (getrusage of the child, as bench/matrix.sh
# measures it), and their ratios: the probe's 0.23 s is counted in auto's CPU, not in its I/Os.
# Needs root, zram, fio (for the fill) and python3.
#
#   sudo bash bench/probe_cost.sh                    # PAIRS=4 RUNTIME=3
#   ROWS="randread:4k:128 randread:16k:16" sudo -E bash bench/probe_cost.sh
set -euo pipefail
PAIRS=${PAIRS:-4}
RUNTIME=${RUNTIME:-3}
ROWS=${ROWS:-randread:4k:128 randread:16k:16 randread:4k:8}
. "$(dirname "$0")/lib.sh"
bench_need_fio
bench_need_zram
bench_build
bench_zram z 1G
bench_fill "/dev/$z"
PYTHONPATH=bench python3 bench/probe_cost.py "$BIN" "/dev/$z" "$RUNTIME" "$PAIRS" $ROWS
