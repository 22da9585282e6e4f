#!/usr/bin/python3
"""The torch.distributed baseline (gloo, one process per rank, as MMEngine runs it): barrier,
all_reduce of float32 tensors and all_gather_object of 10,000 small records, the workloads of
dist_proc_bench, timed like it (slowest rank, batches of calls) and written as Google Benchmark
JSON. Needs python3-torch; exits 3 without it."""
import argparse
import json
import os
import socket
import sys
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def slowest(dist, torch, op, reps):
    dist.barrier()
    t0 = time.perf_counter()
    for _ in range(reps):
        op()
    t = torch.tensor([time.perf_counter() - t0], dtype=torch.float64)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return float(t[0])


def measure(dist, torch, name, op, min_time, nbytes=0):
    slowest(dist, torch, op, 1)  # warm-up
    probe = slowest(dist, torch, op, 1)
    # Every rank must run the same number of calls: rank 0's choice is broadcast.
    reps = torch.tensor([max(1, min(20000, int(2e-3 / max(probe, 1e-9))))])
    dist.broadcast(reps, 0)
    reps = int(reps[0])
    total, calls, batches = 0.0, 0, 0
    while total < min_time or batches < 3:
        total += slowest(dist, torch, op, reps)
        calls += reps
        batches += 1
    return {"name": name, "seconds": total / calls, "calls": calls, "bytes": nbytes}


def worker(rank, n, port, args, queue):
    import torch
    import torch.distributed as dist
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=n)
    results = [measure(dist, torch, f"barrier/torch_gloo/ranks:{n}", dist.barrier, args.min_time)]
    records = [(rank * 10000 + i, i * 0.5, "img_%d" % (i % 1000)) for i in range(10000)]
    out = [None] * n
    results.append(measure(dist, torch, f"all_gather_object/torch_gloo/ranks:{n}/records:10000",
                           lambda: dist.all_gather_object(out, records), args.min_time))
    for nbytes in args.sizes:
        data = torch.full((max(1, nbytes // 4),), float(rank + 1), dtype=torch.float32)
        results.append(measure(dist, torch, f"all_reduce/torch_gloo/ranks:{n}/bytes:{nbytes}",
                               lambda: dist.all_reduce(data), args.min_time, data.numel() * 4))
    if rank == 0:
        queue.put(results)
    dist.destroy_process_group()


def to_json(results):
    benchmarks = []
    for r in results:
        us = r["seconds"] * 1e6
        b = {"name": r["name"], "run_name": r["name"], "run_type": "iteration", "repetitions": 1,
             "repetition_index": 0, "threads": 1, "iterations": r["calls"], "real_time": us,
             "cpu_time": us, "time_unit": "us"}
        if r["bytes"]:
            b["bytes"] = r["bytes"]
            b["algbw"] = r["bytes"] / r["seconds"] / 1e9
            n = int(r["name"].split("ranks:")[1].split("/")[0])
            b["busbw"] = b["algbw"] * 2 * (n - 1) / n  # all_reduce's factor (nccl-tests)
        benchmarks.append(b)
    return {"context": {"executable": "torch_bench.py"}, "benchmarks": benchmarks}


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", required=True)
    parser.add_argument("--ranks", default="2,4,8", help="world sizes, comma-separated")
    parser.add_argument("--profile", default="smoke", choices=["smoke", "full"])
    args = parser.parse_args()
    try:
        import torch.multiprocessing as mp
    except ImportError:
        print("torch_bench: python3-torch is not installed; torch baselines not measured")
        return 3
    args.min_time = 0.2 if args.profile == "full" else 0.05
    args.sizes = [8, 1 << 20, 64 << 20]
    results = []
    for n in [int(x) for x in args.ranks.split(",")]:
        ctx = mp.get_context("spawn")
        queue = ctx.Queue()
        procs = [ctx.Process(target=worker, args=(r, n, free_port_once, args, queue))
                 for free_port_once in [free_port()] for r in range(n)]
        for p in procs:
            p.start()
        got = queue.get(timeout=600)  # raises queue.Empty when a rank died
        for p in procs:
            p.join(timeout=300)
            if p.is_alive():
                p.kill()
        results += got
    with open(args.out, "w") as f:
        json.dump(to_json(results), f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
