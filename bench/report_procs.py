"""Issue 25's rows of the targets table: dist's process backends against torch.distributed, process
against process, from the same ci/bench run (dist_proc_bench under distrun and mpirun,
torch_bench.py). A baseline that did not run is "not measured", never a stored figure."""

WORKLOADS = [("all_reduce", "/bytes:8", "8 B all_reduce"),
             ("all_reduce", "/bytes:1048576", "1 MiB all_reduce"),
             ("all_reduce", "/bytes:67108864", "64 MiB all_reduce"),
             ("barrier", "", "barrier"),
             ("all_gather_object", "/records:10000", "all_gather_object 10k records")]


def proc_rows(t, ratio_row, ranks=(2, 4, 8)):
    """dist gloo / torch gloo, both one process per rank: goal <= 1.0 everywhere; dist mpi
    processes beside them, reported."""
    for n in ranks:
        for op, tail, label in WORKLOADS:
            ours = f"{op}/gloo_procs/ranks:{n}{tail}"
            torch = f"{op}/torch_gloo/ranks:{n}{tail}"
            ratio_row(t, f"gloo {label}, {n} processes / torch gloo", ours, torch, "<= 1.0",
                      at_most=1.0)
    for n in ranks:
        for op, tail, label in WORKLOADS:
            ratio_row(t, f"[mpi] {label}, {n} processes / torch gloo", f"{op}/mpi_procs/ranks:{n}{tail}",
                      f"{op}/torch_gloo/ranks:{n}{tail}", "(report)", at_most=float("inf"))
    # Issue 40: an async 64 MiB all_reduce beside 50 ms of computation, against the longer alone.
    for backend in ("gloo", "mpi"):
        for n in ranks:
            at = f"overlap/{backend}_procs/ranks:{n}/"
            goal = "<= 1.2" if n == 2 else "(report)"
            ratio_row(t, f"{backend} async 64 MiB all_reduce beside 50 ms of computation, {n} "
                      "processes / the longer alone", at + "both", at + "alone", goal, at_most=1.2)
