#!/usr/bin/env python3
"""GB/s against block size for tcpx4j (GpuPairBench) and its baselines (raw TCP, NCCL sockets).

  plot_gpu_pair.py OUT.png pair.jsonl [nccl.jsonl ...]

Reads JSON lines with "system", "bytes", "gbps" and, for GpuPairBench, "op"; missing files are
skipped. Draws one line per system and op.
"""
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    out, inputs = sys.argv[1], sys.argv[2:]
    series = {}
    for path in inputs:
        if not os.path.exists(path):
            continue
        for line in open(path):
            line = line.strip()
            if not line.startswith("{"):
                continue
            r = json.loads(line)
            op = r.get("op", "SENDRECV")
            key = r["system"] if op in ("STREAM", "SENDRECV") else "%s %s" % (r["system"], op)
            series.setdefault(key, []).append((r["bytes"], r["gbps"]))
    fig, ax = plt.subplots(figsize=(8, 5), dpi=100)
    for key in sorted(series):
        pts = sorted(series[key])
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
