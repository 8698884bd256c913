#!/usr/bin/env bash
# What the built-in lessons find on this machine: each lesson run headless (`learn NAME --json
# --no-save`, ROUNDS times), one line per claim with whether it held and its numbers, then per
# lesson the choice the figures supported: what docs/lessons.md says the lessons found here comes
# from this. Needs root (the lab's loop devices and zram).
#
#   sudo bash bench/lessons.sh                   # ROUNDS=1, every built-in lesson
#   sudo ROUNDS=3 LESSONS="cache-trap dsync" bash bench/lessons.sh
#   sudo ROUNDS=5 bash bench/lessons.sh | grep answer      # the same answer each time?
# Each lesson runs each test 3 times (its medians decide); REPEAT=N passes --repeat N.
set -euo pipefail
ROUNDS=${ROUNDS:-1}
. "$(dirname "$0")/lib.sh"
bench_build
LESSONS=${LESSONS:-$("$BIN" learn --list | awk '{print $1}')}
held=0 total=0
for l in $LESSONS; do
  for r in $(seq "$ROUNDS"); do
    doc=$("$BIN" learn "$l" --json --no-save ${REPEAT:+--repeat "$REPEAT"} 2>/dev/null)
    echo "$doc" | jq -r --arg l "$l" '.steps[].claims[] |
      "\($l)\t\(if .held == true then "held" elif .held == false then "NOT HELD" elif .held_in then "not clear (held in \(.held_in[0]) of \(.held_in[1]))" else "unchecked" end)\t\(.text)\t\(.numbers | to_entries | map("\(.key)=\(.value * 1000 | round / 1000)") | join(" "))"'
    echo "$doc" | jq -r --arg l "$l" '"\($l)\tanswer\t\(if .unclear then "not clear: \(.unclear)" else "\(.answer.choice // "-")) \(.answer.text // "none fits")" end)"'
    h=$(echo "$doc" | jq '[.steps[].claims[] | select(.held == true)] | length')
    t=$(echo "$doc" | jq '[.steps[].claims[]] | length')
    held=$((held + h)) total=$((total + t))
  done
done
echo "claims held: $held of $total"
