#!/usr/bin/env bash
# Benchmark: `blkscope list` (and `list --json`) with 64 loop devices attached, next to lsblk.
# Needs root. Creates 64 sparse SIZE files (default 16M) in a temporary directory, attaches
# them, times RUNS runs of each command, then detaches and removes exactly what it created (also
# on Ctrl-C). OTHER names another blkscope binary (an earlier build) to time beside this one.
#
#   sudo bash bench/list_64_loops.sh            # builds the release binary first
#   RUNS=50 N=64 sudo -E bash bench/list_64_loops.sh
#   SIZE=1G OTHER=/tmp/blkscope-before sudo -E bash bench/list_64_loops.sh
#   FILL=1 SIZE=64M sudo -E bash bench/list_64_loops.sh   # files of zeros written on a tmpfs:
#                                                        # every block a data extent to read
set -euo pipefail
N=${N:-64}
RUNS=${RUNS:-20}
SIZE=${SIZE:-16M}
OTHER=${OTHER:-}
FILL=${FILL:-}
. "$(dirname "$0")/lib.sh"
bench_build
if [ -n "$FILL" ]; then
  mib=$(numfmt --from=iec "$SIZE"); mib=$((mib >> 20))
  bench_tmpfs dir "$(( (N * mib) + 64 ))M"
else
  bench_tmpdir dir
fi
for i in $(seq 1 "$N"); do
  if [ -n "$FILL" ]; then
    dd if=/dev/zero of="$dir/d$i.img" bs=1M count="$mib" status=none
  else
    truncate -s "$SIZE" "$dir/d$i.img"
  fi
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
