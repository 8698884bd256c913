#!/usr/bin/env bash
# Benchmark: how fast a read-back (the code --verify and `verify --stamp` share) reads, against
# a plain sequential read of the same size. A loop device with direct I/O over a 1 GiB file;
# one write run records its stamp, then PAIRS alternating pairs of
#   blkscope verify DEV --stamp RUN     (the read-back's own bytes/seconds)
#   blkscope run DEV --op read --size 1G  (1M QD1, the default)
# Both read a device at rest (not right after 1 GiB of writes, whose write-back would slow
# whichever read came first). Prints the medians and the ratio (goal: >= 0.9x). Needs root.
#
#   sudo bash bench/verify_speed.sh           # PAIRS=5
set -euo pipefail
PAIRS=${PAIRS:-5}
. "$(dirname "$0")/lib.sh"
bench_build
bench_tmpdir work
head -c $((1024 * 1024 * 1024)) /dev/urandom > "$work/img"
bench_loop dev "$work/img" --direct-io=on
name=${dev#/dev/}
export XDG_DATA_HOME=$work/data
"$BIN" run "$dev" --op write --size 1G --confirm "$name" >/dev/null 2>&1
sync
verify=() ; plain=()
for i in $(seq 1 "$PAIRS"); do
  v=$("$BIN" verify "$dev" --stamp last --json |
      python3 -c 'import json,sys; v=json.load(sys.stdin)["verify"]; assert v["sectors_bad"]==0; print(v["bytes_read"]/v["seconds"])')
  p=$("$BIN" run "$dev" --op read --size 1G --no-save --json |
      python3 -c 'import json,sys; print(json.load(sys.stdin)["results"][0]["bytes_per_sec"])')
  verify+=("$v"); plain+=("$p")
  python3 -c "print(f'pair $i: verify {$v/1e6:.0f} MB/s, plain read {$p/1e6:.0f} MB/s')"
done
python3 - "${verify[*]}" "${plain[*]}" <<'PY'
import statistics, sys
v = [float(x) for x in sys.argv[1].split()]
p = [float(x) for x in sys.argv[2].split()]
mv, mp = statistics.median(v), statistics.median(p)
print(f"median: verify {mv/1e6:.0f} MB/s, plain read {mp/1e6:.0f} MB/s, ratio {mv/mp:.2f}x (goal >= 0.9x)")
PY
