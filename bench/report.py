#!/usr/bin/python3
"""Merges dist_bench / dist_proc_bench / dist_mpi_bench / dist_mpi_pairs / torch_bench.py JSON files
(several runs each: the median is kept), prints the targets table (issues 7 and 25: sim against
MPI and the memory floor, dist's processes against torch's; issue 22's call layer on/off; the
thread-form gloo rows of issue 6) with ratios measured in this run, sim_scale's table (issue 24),
checks for regressions against a baseline, and draws busbw against message size."""
import argparse
import json
import re
import statistics
import sys

from report_procs import proc_rows
from report_predict import predict_section
from report_scale import sim_scale_section


def clean(name):
    """A benchmark's name without Google Benchmark's /min_time:... and /manual_time suffixes."""
    return re.sub(r"/(min_time:[0-9.]+|manual_time|real_time)", "", name)


def load(paths):
    """name -> list of entries (one per run), aggregates dropped."""
    runs = {}
    for path in paths:
        with open(path) as f:
            data = json.load(f)
        for b in data.get("benchmarks", []):
            if b.get("run_type") == "aggregate" or b.get("error_occurred"):
                continue
            runs.setdefault(clean(b["name"]), []).append(b)
    return runs


def median_entry(entries):
    times = sorted(entries, key=lambda b: b["real_time"])
    b = dict(times[len(times) // 2])
    b["real_time"] = statistics.median(e["real_time"] for e in entries)
    b["cpu_time"] = statistics.median(e["cpu_time"] for e in entries)
    for key in ("algbw", "busbw", "ratio", "ratio_total", "base_us"):
        if all(key in e for e in entries):
            b[key] = statistics.median(e[key] for e in entries)
    b["runs"] = len(entries)
    return b


def merge(paths):
    merged = {}
    for name, entries in load(paths).items():
        b = median_entry(entries)
        b["name"] = b["run_name"] = name
        b["run_type"] = "iteration"
        merged[name] = b
    return merged


def us(results, name):
    b = results.get(name)
    return None if b is None else b["real_time"]


def fmt_us(t):
    if t is None:
        return "-"
    return f"{t / 1000:.2f} ms" if t >= 1000 else f"{t:.2f} us"


class Table:
    def __init__(self):
        self.rows = []

    def add(self, target, ours, theirs, ratio, goal, ok, note=""):
        self.rows.append((target, fmt_us(ours), theirs, "-" if ratio is None else f"{ratio:.2f}",
                          goal, "-" if ok is None else ("yes" if ok else "NO"), note))

    def print(self):
        head = ("target", "ours", "baseline", "ratio", "goal", "met", "note")
        widths = [max(len(str(r[i])) for r in self.rows + [head]) for i in range(len(head))]
        line = lambda r: "  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip()
        print(line(head))
        print("  ".join("-" * w for w in widths))
        for r in self.rows:
            print(line(r))


def ratio_row(t, target, ours_name, base_name, goal, faster_by=None, at_most=None, note=""):
    ours, base = us(t.results, ours_name), us(t.results, base_name)
    if ours is None or base is None:
        t.add(target, ours, fmt_us(base), None, goal, None, note or "not measured in this run")
        return
    info = goal.startswith("(")  # reported, no goal
    if faster_by is not None:  # ratio = baseline / ours, goal: >= faster_by
        r = base / ours
        t.add(target, ours, fmt_us(base), r, goal, None if info else r >= faster_by, note)
    else:  # ratio = ours / baseline, goal: <= at_most
        r = ours / base
        t.add(target, ours, fmt_us(base), r, goal, None if info else r <= at_most, note)


def floor_row(t, n, size):
    """sim's all_reduce of `size` bytes against a memcpy of the same bytes on every core at once
    (sim's ranks copy on every core too)."""
    target = f"sim all_reduce {size >> 20} MiB, {n} ranks / parallel memcpy of its bytes"
    ours = us(t.results, f"all_reduce/sim/ranks:{n}/bytes:{size}")
    floor = us(t.results, f"memcpy_parallel/bytes:{size}")
    if ours is None or floor is None:
        t.add(target, ours, "-", None, "<= 1.2", None, "not measured in this run")
        return
    r = ours / floor
    t.add(target, ours, f"{fmt_us(floor)} (memcpy on every core)", r, "<= 1.2", r <= 1.2)


def torch_rows(t, n):
    name = f"all_gather_object/torch_gloo/ranks:{n}/records:10000"
    ours = us(t.results, f"all_gather_object/sim/ranks:{n}/records:10000")
    base = us(t.results, name)
    note = "torch measured in this run" if base is not None else "torch not measured"
    r = None if ours is None or base is None else base / ours
    t.add(f"sim all_gather_object 10k records, {n} ranks vs torch gloo", ours, fmt_us(base), r,
          ">= 5x faster", None if r is None else r >= 5, note)


def gloo_rows(t):
    """Our gloo backend against the same Gloo call without our layer, from the paired benchmarks
    (op/gloo_vs_raw/...: the same rank threads alternate the two call by call, so both meet the
    machine's slow and fast moments alike): the median over batches of the time ratio, median
    over repeated runs. Where no pair ran, the ratio of the two separate benchmarks' medians."""
    for name in sorted(t.results):
        m = re.match(r"(\w+)/(gloo|gloo_vs_raw)/(ranks:\d+.*)$", name)
        if not m:
            continue
        op, kind, rest = m.groups()
        target = f"gloo {op} {rest} / raw Gloo"
        b = t.results[name]
        if kind == "gloo_vs_raw" and "ratio" in b:
            r = b["ratio"]
            t.add(target, b["real_time"], fmt_us(b.get("base_us")), r, "<= 1.10", r <= 1.10,
                  f"alternating calls, median of {int(b.get('pairs', 0))} batches; "
                  f"ratio of sums {b.get('ratio_total', float('nan')):.2f}")
        elif kind == "gloo" and f"{op}/gloo_vs_raw/{rest}" not in t.results \
                and f"{op}/raw_gloo/{rest}" in t.results:
            ratio_row(t, target, name, f"{op}/raw_gloo/{rest}", "<= 1.10", at_most=1.10,
                      note="separate runs (no pair): medians")


def control_rows(t):
    """The paired method's controls: raw Gloo alternating with itself, and a backend's call under
    the call layer alternating with itself, must measure 1.00."""
    for name in sorted(t.results):
        m = re.match(r"(\w+)/raw_vs_raw/(ranks:\d+.*)$", name)
        b = t.results[name]
        if m and "ratio" in b:
            r = b["ratio"]
            t.add(f"[control] raw Gloo {m.group(1)} {m.group(2)} / itself", b["real_time"],
                  fmt_us(b.get("base_us")), r, "1.00 +- 0.05", abs(r - 1) <= 0.05,
                  "the pairing's own bias: gloo rows are trusted only when this is met")
    for name in sorted(t.results):  # the call layer's pairs: the call under the layer / itself
        m = re.match(r"(\w+)/(\w+)_none_vs_none/(ranks:\d+.*)$", name)
        b = t.results[name]
        if m and "ratio" in b:
            op, backend, rest = m.groups()
            r = b["ratio"]
            t.add(f"[control] {backend} {op} {rest}, layer off / itself", b["real_time"],
                  fmt_us(b.get("base_us")), r, "1.00 +- 0.02", abs(r - 1) <= 0.02,
                  f"the layer pairs' own bias ({backend}): their rows are trusted only when this "
                  f"is met; ratio of sums {b.get('ratio_total', float('nan')):.3f}")


def mpi_rows(t):
    """dist's mpi backend against MPI's own non-blocking call polled alone, and against the
    blocking call, from dist_mpi_pairs (the three alternate batch by batch in one run): the
    medians of the rounds' ratios. No issue sets a goal for them: reported."""
    for name in sorted(t.results):
        m = re.match(r"(\w+)/mpi_vs_nonblocking/(ranks:\d+.*)$", name)
        b = t.results[name]
        if m and "ratio" in b:
            t.add(f"[mpi] {m.group(1)} {m.group(2)} / MPI non-blocking", b["real_time"],
                  fmt_us(b.get("base_us")), b["ratio"], "(report)", None,
                  f"alternating batches, median of {int(b.get('pairs', 0))} rounds; / blocking "
                  f"MPI ({fmt_us(b.get('blocking_us'))}): {b.get('ratio_blocking', float('nan')):.2f}")


LAYER_GOAL = 1.03


def layer_rows(t):
    """The call layer (core/calls: call numbering, the always-on flight recorder, the cross-check's
    hash) on against off, from the pairs <op>/<backend>_layer_vs_none/... (dist_bench for gloo,
    dist_mpi_pairs for mpi): the same backend call through the layer and under it, alternated call
    by call. Issue 22's goal, <= 1.03 on an 8 B all_reduce on gloo and mpi, is judged on the worst
    of those pairs; each pair also has its row (barrier: reported)."""
    pairs = []
    for name in sorted(t.results):
        m = re.match(r"(\w+)/(\w+)_layer_vs_none/(ranks:\d+.*)$", name)
        if m and "ratio" in t.results[name]:
            pairs.append((m.groups(), t.results[name]))
    goal = f"<= {LAYER_GOAL:.2f}"
    judged = [(g, b) for g, b in pairs
              if g[0] == "all_reduce" and g[1] in ("gloo", "mpi") and g[2].endswith("/bytes:8")]
    target = "call layer + flight recorder, on/off, 8 B all_reduce (gloo, mpi)"
    if not judged:
        t.add(target, None, "-", None, goal, None, "not measured in this run")
    else:
        (_, backend, rest), worst = max(judged, key=lambda gb: gb[1]["ratio"])
        missing = [k for k in ("gloo", "mpi") if all(g[1] != k for g, _ in judged)]
        note = "worst of " + ", ".join(f"{g[1]} {g[2].split('/')[0]} {b['ratio']:.3f}"
                                        for g, b in judged)
        if missing:
            note += "; " + " and ".join(missing) + " not measured in this run"
        t.add(target, worst["real_time"], f"{fmt_us(worst.get('base_us'))} ({backend} {rest})",
              worst["ratio"], goal, all(b["ratio"] <= LAYER_GOAL for _, b in judged), note)
    for (op, backend, rest), b in pairs:
        judged_here = any(b is jb for _, jb in judged)
        t.add(f"[layer] {backend} {op} {rest}, layer on / off", b["real_time"],
              fmt_us(b.get("base_us")), b["ratio"], goal if judged_here else "(report)",
              b["ratio"] <= LAYER_GOAL if judged_here else None,
              f"alternating calls, median of {int(b.get('pairs', 0))} batches; "
              f"ratio of sums {b.get('ratio_total', float('nan')):.3f}")


def targets(results):
    t = Table()
    t.results = results
    mib64 = 64 << 20
    ratio_row(t, "sim all_reduce 64 MiB, 2 ranks vs MPI_Allreduce", f"all_reduce/sim/ranks:2/bytes:{mib64}",
              f"all_reduce/mpi/ranks:2/bytes:{mib64}", ">= 4x faster", faster_by=4)
    floor_row(t, 2, mib64)
    ratio_row(t, "sim all_reduce 64 MiB, 8 ranks vs MPI_Allreduce", f"all_reduce/sim/ranks:8/bytes:{mib64}",
              f"all_reduce/mpi/ranks:8/bytes:{mib64}", "(info: x faster)", faster_by=0)
    ratio_row(t, "sim barrier, 2 ranks / MPI_Barrier", "barrier/sim/ranks:2", "barrier/mpi/ranks:2",
              "<= 1.0", at_most=1.0)
    ratio_row(t, "sim barrier, 8 ranks on 2 cores / MPI_Barrier", "barrier/sim/ranks:8",
              "barrier/mpi/ranks:8", "<= 1", at_most=1)
    ratio_row(t, "sim all_reduce 8 B, 2 ranks / MPI_Allreduce", "all_reduce/sim/ranks:2/bytes:8",
              "all_reduce/mpi/ranks:2/bytes:8", "<= 1.0", at_most=1.0)
    torch_rows(t, 2)
    torch_rows(t, 8)
    proc_rows(t, ratio_row)
    layer_rows(t)
    gloo_rows(t)
    control_rows(t)
    mpi_rows(t)
    for n in (2, 4):
        for size, label in ((8, "8 B"), (1 << 20, "1 MiB"), (mib64, "64 MiB")):
            ours = f"all_reduce/gloo/ranks:{n}/bytes:{size}"
            ratio_row(t, f"[threads] gloo all_reduce {label}, {n} rank threads / MPI_Allreduce",
                      ours, f"all_reduce/mpi/ranks:{n}/bytes:{size}", "(report)",
                      at_most=float("inf"), note="not like for like: threads vs processes")
    return t


def regressions(results, baseline_path, pct):
    with open(baseline_path) as f:
        base = {clean(b["name"]): b for b in json.load(f)["benchmarks"]
                if b.get("run_type") != "aggregate"}
    worse = []
    for name, b in sorted(results.items()):
        if re.search(r"/(mpi|raw_gloo|torch_gloo|gloo_vs_raw|raw_vs_raw|\w+_(layer|none)_vs_none)/|^memcpy/", name):
            continue  # a baseline, not our code: its change says how busy the machine was (pairs
            # time our gloo or mpi again, which its own benchmark already checks)
        if name in base and base[name]["real_time"] > 0:
            change = 100.0 * (b["real_time"] / base[name]["real_time"] - 1)
            if change > pct:
                worse.append((name, base[name]["real_time"], b["real_time"], change))
    return worse


COLORS = {"sim": "tab:red", "gloo": "tab:blue", "raw_gloo": "tab:green", "mpi": "tab:orange",
          "torch_gloo": "tab:purple", "nccl": "tab:brown"}


def chart(results, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    ops = ["all_reduce", "all_gather", "reduce_scatter", "broadcast"]
    ranks = [2, 4, 8]
    fig, axes = plt.subplots(len(ops), len(ranks), figsize=(15, 14), squeeze=False)
    for i, op in enumerate(ops):
        for j, n in enumerate(ranks):
            ax = axes[i][j]
            series = {}
            for name, b in results.items():
                m = re.match(rf"{op}/(\w+)/ranks:{n}/bytes:(\d+)$", name)
                if m and "algbw" in b and "_vs_" not in m.group(1):
                    busbw = b.get("busbw", b["algbw"])
                    series.setdefault(m.group(1), []).append((int(m.group(2)), busbw))
            for backend, points in sorted(series.items()):
                points.sort()
                ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=backend,
                        color=COLORS.get(backend, "black"))
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_title(f"{op}, {n} ranks")
            ax.set_xlabel("message size (bytes)")
            ax.set_ylabel("busbw (GB/s)")
            ax.grid(True, which="both", alpha=0.3)
            if series:
                ax.legend(fontsize=8)
    fig.suptitle("dist benchmarks: bus bandwidth against message size (2-core shared machine)")
    fig.tight_layout()
    fig.savefig(path, dpi=80)


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("inputs", nargs="+", help="JSON files of this run (repeated runs allowed)")
    p.add_argument("--merged", help="write the merged medians here (Google Benchmark JSON)")
    p.add_argument("--baseline", help="a stored merged JSON to compare with")
    p.add_argument("--fail-on-regression", type=float, metavar="PCT",
                   help="exit 1 when one of our benchmarks (sim, gloo) is more than PCT%% slower "
                        "than in the baseline")
    p.add_argument("--chart", help="write the busbw chart (PNG) here")
    p.add_argument("--sim-scale", nargs="*", metavar="JSON",
                   help="sim_scale's JSON files: print their table (issue 24)")
    p.add_argument("--prediction", metavar="JSON",
                   help="predict_accuracy's JSON: print the network model's accuracy (issue 26)")
    args = p.parse_args()
    results = merge(args.inputs)
    if args.merged:
        with open(args.merged, "w") as f:
            json.dump({"context": {"merged_from": args.inputs},
                       "benchmarks": [results[k] for k in sorted(results)]}, f, indent=1)
    print("\nTargets (ratios from this run; medians over repeated runs; shared 2-core machine):\n")
    targets(results).print()
    if args.sim_scale is not None:
        sim_scale_section(args.sim_scale)
    if args.prediction:
        predict_section(args.prediction)
    if args.chart:
        chart(results, args.chart)
        print(f"\nchart: {args.chart}")
    if args.baseline and args.fail_on_regression is not None:
        worse = regressions(results, args.baseline, args.fail_on_regression)
        print(f"\nRegressions over {args.fail_on_regression}% against {args.baseline}: {len(worse)}")
        for name, old, new, change in worse:
            print(f"  {name}: {fmt_us(old)} -> {fmt_us(new)} (+{change:.0f}%)")
        if worse:
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
