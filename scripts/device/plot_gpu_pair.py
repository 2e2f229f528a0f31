#!/usr/bin/env python3
"""GB/s against block size for tcpx4j (GpuPairBench) and its baselines (raw TCP, NCCL sockets).

  plot_gpu_pair.py [--drop PREFIX]... [--rename OLD=NEW]... OUT.png pair.jsonl [nccl.jsonl ...]

Reads JSON lines with "system", "bytes", "gbps" and, for GpuPairBench, "op"; missing files are
skipped. Draws one line per system and op, through the median of the points of each block size
(run.sh's ab stage measures every size once per round). --drop leaves out systems starting with
PREFIX; --rename renames a system prefix (variant names in the legend).
"""
import json
import os
import statistics
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    args, drop, rename = sys.argv[1:], [], []
    while args and args[0] in ("--drop", "--rename"):
        (drop if args[0] == "--drop" else rename).append(args[1])
        args = args[2:]
    out, inputs = args[0], args[1:]
    series = {}
    for path in inputs:
        if not os.path.exists(path):
            continue
        for line in open(path):
            line = line.strip()
            if not line.startswith("{"):
                continue
            r = json.loads(line)
            if any(r["system"].startswith(p) for p in drop):
                continue
            for pair in rename:
                old, new = pair.split("=", 1)
                if r["system"].startswith(old):
                    r["system"] = new + r["system"][len(old):]
            op = r.get("op", "SENDRECV")
            key = r["system"] if op in ("STREAM", "SENDRECV") else "%s %s" % (r["system"], op)
            series.setdefault(key, {}).setdefault(r["bytes"], []).append(r["gbps"])
    fig, ax = plt.subplots(figsize=(8, 5), dpi=100)
    ax.set_prop_cycle(color=plt.cm.tab20.colors)  # more series than tab10's colours
    for key in sorted(series):
        pts = sorted((b, statistics.median(v)) for b, v in series[key].items())
        style = "--" if key.startswith("raw") else (":" if key.startswith("nccl") else "-")
        ax.plot([p[0] for p in pts], [p[1] for p in pts], style, marker="o", markersize=3, label=key)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("block size (bytes)")
    ax.set_ylabel("GB/s")
    ax.set_title("GPU0 -> GPU1 over TCP on lo (one process per GPU)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out)
    print("wrote", out, "series:", ", ".join(sorted(series)))


if __name__ == "__main__":
    main()
