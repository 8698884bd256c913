#!/usr/bin/env bash
# Runs every fuzz target for SECONDS each (default 20) over its corpus (seeded by seed.sh),
# and prints for each the executions and the coverage libFuzzer reached. Exits non-zero when a
# target crashed, hung (over 5 s on one input) or allocated over 16 MiB at once (16 times the
# largest input, 1 MiB): the input is then in fuzz/artifacts/TARGET/, to become a regression test.
#
#   bash fuzz/run.sh            # 20 s each (what CI runs)
#   bash fuzz/run.sh 3600       # an hour each
#   TARGETS="device_bytes" bash fuzz/run.sh 600
set -uo pipefail
cd "$(dirname "$0")"
secs=${1:-20}
targets=${TARGETS:-"device_bytes device_sparse proc_files smartctl_json toml_files saved_run"}
[ -d corpus/device_bytes ] || bash seed.sh
cargo +nightly fuzz build -O >/dev/null || exit 1
status=0
for t in $targets; do
  mkdir -p "corpus/$t"
  log=$(mktemp)
  cargo +nightly fuzz run -O "$t" "corpus/$t" -- \
    -max_total_time="$secs" -timeout=5 -rss_limit_mb=1024 -malloc_limit_mb=16 \
    -max_len=$((1 << 20)) -print_final_stats=1 >"$log" 2>&1
  rc=$?
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$')
  cov=$(grep -o 'cov: [0-9]* ft: [0-9]*' "$log" | tail -1)
  printf '%-14s %s: %s executions, %s, corpus %s inputs\n' "$t" \
    "$([ $rc -eq 0 ] && echo ok || echo FAILED)" "${runs:-?}" "${cov:-?}" "$(ls "corpus/$t" | wc -l)"
  if [ $rc -ne 0 ]; then
    status=1
    grep -E 'ERROR|panicked|SUMMARY|Test unit written' "$log" | head -20
  fi
  rm -f "$log"
done
exit $status
