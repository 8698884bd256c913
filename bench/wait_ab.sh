#!/usr/bin/env bash
# Benchmark: this tree's blkscope against BASE's (a commit, built in a temporary worktree) on
# bench/matrix.py's rows and three more with writes at QD32 (bench/builds_ab.py), on a loop
# device with direct I/O over a filled 1 GiB file in a temporary directory (DEVICE=zram: a
# filled zram device), alternately, ROUNDS rounds of RUNTIME-second runs, `--no-trace` (EXTRA
# sets other arguments). Made for the engine's ways of waiting (engine/few.rs); any two builds.
# Needs root and fio (to fill the device). About 7 s a round a row.
#
#   BASE=ecbd8f1 sudo -E bash bench/wait_ab.sh                    # ROWS=7,8,9,10,14,15,16,18 ROUNDS=5
#   BASE=ecbd8f1 ROWS=16 ROUNDS=8 DEVICE=zram sudo -E bash bench/wait_ab.sh
set -euo pipefail
ROUNDS=${ROUNDS:-5}
RUNTIME=${RUNTIME:-3}
ROWS=${ROWS:-7,8,9,10,14,15,16,18}
DEVICE=${DEVICE:-loop}
BASE=${BASE:?BASE=<a commit to compare with>}
. "$(dirname "$0")/lib.sh"
bench_need_fio
bench_build
bench_tmpdir work
bench_build_base BASE_BIN "$work"
if [[ $DEVICE == zram ]]; then
  bench_need_zram
  bench_zram zdev 1G
  dev=/dev/$zdev
else
  fallocate -l 1G "$work/loop.img"
  bench_loop dev "$work/loop.img" --direct-io=on
fi
bench_fill "$dev"
echo "A: $BASE, B: this tree ($(git describe --always --dirty)); $(uname -r), $(nproc) CPUs, $DEVICE" >&2
PYTHONPATH=bench python3 bench/builds_ab.py "$RUNTIME" "$ROUNDS" "$ROWS" "$dev" \
  "$BASE_BIN" "$BIN"
