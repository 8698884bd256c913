#!/usr/bin/env python3
"""What `--engine auto`'s probe costs: alternating pairs of auto against the engine it chose,
medians of IOPS and CPU per I/O (bench/probe_cost.sh sets the device up).

Usage: probe_cost.py BLKSCOPE DEVICE RUNTIME PAIRS OP:BS:QD...
"""
import statistics
import sys

from vs_fio import blkscope


def main():
    binary, dev, runtime, pairs = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    for row in sys.argv[5:]:
        op, bs, qd = row.split(":")
        engines = set()
        blkscope(binary, dev, op, bs, int(qd), 1, engine="auto", engines=engines)
        chosen = sorted(engines)[0].split(",")[0]
        runs = {"auto": [], chosen: []}
        for i in range(pairs):
            # Every other pair the other way round.
            order = ["auto", chosen] if i % 2 == 0 else [chosen, "auto"]
            for e in order:
                runs[e].append(blkscope(binary, dev, op, bs, int(qd), runtime, engine=e))
        med = {e: (statistics.median(r[0] for r in v), statistics.median(r[1] for r in v))
               for e, v in runs.items()}
        (ai, ac), (ci, cc) = med["auto"], med[chosen]
        print(f"{op} {bs} QD{qd}: auto {ai:.0f} IOPS at {ac:.2f} us/IO, --engine {chosen} "
              f"{ci:.0f} IOPS at {cc:.2f} us/IO; auto/{chosen}: IOPS {ai / ci:.3f}, "
              f"CPU per I/O {ac / cc:.3f}", flush=True)


if __name__ == "__main__":
    main()
