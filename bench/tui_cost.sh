#!/usr/bin/env bash
# Benchmark: what the TUI costs. The same job (4 KiB random reads, QD32, O_DIRECT, 5 s, on a
# scratch file in a tmpfs, so the device is not the limit and any CPU the UI takes shows)
# headless and under the TUI in tmux at 80x24, alternately; plus the TUI's own CPU while idle
# and the UI thread's CPU while it draws a live test. Needs root (tmpfs mount), tmux, python3.
#
#   sudo bash bench/tui_cost.sh              # PAIRS=3
set -euo pipefail
PAIRS=${PAIRS:-3}
. "$(dirname "$0")/lib.sh"
bench_build
bench_tmpdir XDG_DATA_HOME   # the TUI saves its runs: not into the real home
export XDG_DATA_HOME
bench_tmpfs mnt 1G
bench_on_exit 'tmux kill-session -t blkscope-bench 2>/dev/null'
python3 bench/tui_cost.py "$BIN" "$mnt" "$PAIRS"
