#!/usr/bin/env bash
# A fleet of N host aliases on one loopback sshd with its default MaxStartups (10:30:100):
# blkscope --host h[1-N] list --json (with --push and without) against pdsh -f 32 running the
# same blkscope list --json on the same aliases; alternating rounds. Prints, per run, the wall
# time, the peak memory of the blkscope (or pdsh) process itself (its ssh children are not
# counted, for either), and how many hosts answered.
#   bench/fleet.sh [N=200] [ROUNDS=2]   (root; needs openssh-server, pdsh, GNU time)
set -euo pipefail
n=${1:-200}
rounds=${2:-2}
here=$(cd "$(dirname "$0")/.." && pwd)
bin=${BLKSCOPE:-$here/target/release/blkscope}
[ -x "$bin" ] || { echo "no $bin: cargo build --release first (or BLKSCOPE=path)" >&2; exit 2; }
dir=$(mktemp -d)
trap 'kill $(cat "$dir/sshd.pid" 2>/dev/null) 2>/dev/null; rm -rf "$dir"' EXIT
"$here/bench/fleet_sshd.sh" "$dir" >/dev/null
cfg=$dir/ssh_config

answered_json() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(sum(h["ok"] for h in d["hosts"]))' "$1"; }
answered_pdsh() { python3 -c '
import json,sys,collections
out=collections.defaultdict(str)
for l in open(sys.argv[1]):
    h,_,rest=l.partition(": "); out[h]+=rest
ok=0
for h,t in out.items():
    try: json.loads(t); ok+=1
    except Exception: pass
print(ok)' "$1"; }

run_blkscope() { # $1: label, rest: extra options
  local label=$1; shift
  /usr/bin/time -f "%e %M" -o "$dir/time" "$bin" --host "h[1-$n]" --ssh-config "$cfg" \
    --remote-blkscope "$bin" "$@" list --json --no-signatures >"$dir/out" 2>"$dir/err" || true
  read -r secs kb < <(tail -1 "$dir/time")
  printf '%-28s %7.1f s %8.1f MB %5s of %s answered   %s\n' "$label" "$secs" "$(echo "$kb/1024" | bc -l)" \
    "$(answered_json "$dir/out")" "$n" "$(grep -v pyenv "$dir/err" | tail -1 | cut -c1-70)"
}

run_pdsh() {
  PDSH_SSH_ARGS="-F $cfg -o BatchMode=yes -x %h" /usr/bin/time -f "%e %M" -o "$dir/time" \
    pdsh -R ssh -f 32 -w "h[1-$n]" "$bin list --json --no-signatures" >"$dir/out" 2>"$dir/err" || true
  read -r secs kb < <(tail -1 "$dir/time")
  printf '%-28s %7.1f s %8.1f MB %5s of %s answered   %s\n' "pdsh -f 32" "$secs" "$(echo "$kb/1024" | bc -l)" \
    "$(answered_pdsh "$dir/out")" "$n" "$(grep -v pyenv "$dir/err" | tail -1 | cut -c1-70)"
}

echo "# $n aliases of one sshd (MaxStartups 10:30:100), $(nproc) CPUs, $(date -u +%F)"
for r in $(seq "$rounds"); do
  echo "## round $r"
  run_pdsh
  run_blkscope "blkscope --push (fanout 32)" --push="$bin"
  run_blkscope "blkscope (fanout 32)"
done
