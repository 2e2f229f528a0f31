#!/usr/bin/env python3
"""NCCL send/recv between two GPUs of one host, forced onto NCCL's socket transport over lo.

The baseline for tcpx4j's GPU-to-GPU numbers (docs/PERFORMANCE.md): one process per GPU,
rank 0 sends, rank 1 receives, timed with CUDA events on the receiver after warm-up.

  python3 nccl_socket_bench.py --sizes 4K,64K,1M,16M,64M,256M --iters 20 [--nsocks 4 --nthreads 4]

Prints one JSON object per size on stdout: {"bytes":..., "gbps":..., "avg_us":...}.
"""
import argparse
import json
import os
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def parse_size(s):
    s = s.strip().upper()
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(s[:-1]) * mult[s[-1]] if s[-1] in mult else int(s)


def worker(rank, args, port, out_q):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", rank=rank, world_size=2, device_id=torch.device("cuda", rank))
    results = []
    for size in args.sizes:
        buf = torch.empty(size, dtype=torch.uint8, device="cuda")
        if rank == 0:
            buf.random_(0, 255)
        for _ in range(args.warmup):
            (dist.send if rank == 0 else dist.recv)(buf, 1 - rank)
        torch.cuda.synchronize()
        dist.barrier()
        start = time.perf_counter()
        for _ in range(args.iters):
            (dist.send if rank == 0 else dist.recv)(buf, 1 - rank)
        torch.cuda.synchronize()
        elapsed = time.perf_counter() - start
        dist.barrier()
        if rank == 1:
            results.append({"bytes": size, "gbps": size * args.iters / elapsed / 1e9,
                            "avg_us": elapsed / args.iters * 1e6})
    if rank == 1:
        out_q.put(results)
    dist.destroy_process_group()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--sizes", default="4K,64K,1M,16M,64M,256M")
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--nsocks", type=int, default=0, help="NCCL_NSOCKS_PERTHREAD (0 = NCCL default)")
    p.add_argument("--nthreads", type=int, default=0, help="NCCL_SOCKET_NTHREADS (0 = NCCL default)")
    p.add_argument("--port", type=int, default=29511)
    args = p.parse_args()
    args.sizes = [parse_size(s) for s in args.sizes.split(",")]
    # Socket transport over lo only: no NVLink/P2P, no shared memory, no multicast.
    os.environ.update({"NCCL_NET": "Socket", "NCCL_P2P_DISABLE": "1", "NCCL_SHM_DISABLE": "1",
                       "NCCL_SOCKET_IFNAME": "lo", "NCCL_NVLS_ENABLE": "0", "NCCL_IB_DISABLE": "1"})
    if args.nsocks:
        os.environ["NCCL_NSOCKS_PERTHREAD"] = str(args.nsocks)
    if args.nthreads:
        os.environ["NCCL_SOCKET_NTHREADS"] = str(args.nthreads)
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    procs = [ctx.Process(target=worker, args=(r, args, args.port, q)) for r in range(2)]
    for pr in procs:
        pr.start()
    results = q.get(timeout=600)
    for pr in procs:
        pr.join(timeout=60)
    label = "nccl-socket-default" if not args.nsocks else "nccl-socket-%dx%d" % (args.nsocks, args.nthreads)
    for r in results:
        r["system"] = label
        print(json.dumps(r), flush=True)


if __name__ == "__main__":
    main()
