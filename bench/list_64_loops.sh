#!/usr/bin/env bash
# Benchmark: `blkscope list` (and `list --json`) with 64 loop devices attached, next to lsblk.
# Needs root. Creates 64 sparse SIZE files (default 16M) in a temporary directory, attaches
# them, times RUNS runs of each command, then detaches and removes exactly what it created (also
# on Ctrl-C). OTHER names another blkscope binary (an earlier build) to time beside this one.
#
#   sudo bash bench/list_64_loops.sh            # builds the release binary first
#   RUNS=50 N=64 sudo -E bash bench/list_64_loops.sh
#   SIZE=1G OTHER=/tmp/blkscope-before sudo -E bash bench/list_64_loops.sh
set -euo pipefail
N=${N:-64}
RUNS=${RUNS:-20}
SIZE=${SIZE:-16M}
OTHER=${OTHER:-}
. "$(dirname "$0")/lib.sh"
bench_build
bench_tmpdir dir
for i in $(seq 1 "$N"); do
  truncate -s "$SIZE" "$dir/d$i.img"
  bench_loop l "$dir/d$i.img"
done
echo "attached $N loop devices; $(ls /sys/block | wc -l) entries in /sys/block"

# Times RUNS runs of a command; prints the median and max in milliseconds.
time_it() {
  local label=$1; shift
  local t=()
  for _ in $(seq 1 "$RUNS"); do
    local a b
    a=$(date +%s%N); "$@" >/dev/null; b=$(date +%s%N)
    t+=($(( (b - a) / 1000 )))
  done
  printf '%s\n' "${t[@]}" | sort -n | awk -v l="$label" '{v[NR]=$1} END {
    printf "%-40s median %7.2f ms   max %7.2f ms   (%d runs)\n", l, v[int((NR+1)/2)]/1000, v[NR]/1000, NR }'
}

time_it "blkscope list" "$BIN" list
[ -n "$OTHER" ] && time_it "OTHER list ($OTHER)" "$OTHER" list
time_it "blkscope list --json" "$BIN" list --json
time_it "blkscope list --no-signatures" "$BIN" list --no-signatures
time_it "lsblk" lsblk
time_it "lsblk -J -b -O" lsblk -J -b -O
