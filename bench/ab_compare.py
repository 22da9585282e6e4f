#!/usr/bin/python3
"""A/B across commits (ci/bench --ab REV): build A (REV) and build B (the working tree) run
alternately in one sitting, round by round. Each run gives one time per benchmark (the median of
its repetitions); each round pairs A's run with B's. Per benchmark: the median of the rounds'
ratios B / A and a one-sided Wilcoxon signed-rank test on their logarithms (rounds, not
repetitions, are the independent samples: repetitions of one run share its process and moment).
A regression is flagged only when B is both slower by more than the threshold and significantly
so, after the Benjamini-Hochberg correction over all the benchmarks compared (some 30 tests at
5% would otherwise flag one of two identical builds by chance)."""
import argparse
import json
import math
import re
import statistics
import sys

from scipy.stats import wilcoxon


def run_times(path):
    """benchmark name -> the median of the run's repetitions (us), aggregates dropped."""
    with open(path) as f:
        data = json.load(f)
    reps = {}
    for b in data.get("benchmarks", []):
        if b.get("run_type") != "iteration" or b.get("error_occurred"):
            continue
        name = re.sub(r"/(min_time:[0-9.]+|manual_time|real_time)", "", b["run_name"])
        reps.setdefault(name, []).append(b["real_time"])
    return {name: statistics.median(ts) for name, ts in reps.items()}


def benjamini_hochberg(pvalues):
    """The Benjamini-Hochberg adjusted p-values (q-values), in the order given."""
    m = len(pvalues)
    order = sorted(range(m), key=lambda i: pvalues[i])
    q, running = [1.0] * m, 1.0
    for rank in range(m, 0, -1):
        i = order[rank - 1]
        running = min(running, pvalues[i] * m / rank)
        q[i] = running
    return q


def compare(a_runs, b_runs, threshold, alpha):
    """Rows (name, median A, median B, median ratio, q slower, verdict) over the paired rounds;
    q: the one-sided p-value adjusted over the benchmarks (Benjamini-Hochberg)."""
    names = set.intersection(*(set(r) for r in a_runs + b_runs)) if a_runs and b_runs else set()
    rows = []
    for name in sorted(names):
        ratios = [b[name] / a[name] for a, b in zip(a_runs, b_runs) if a[name] > 0]
        logs = [math.log(r) for r in ratios]
        p_slower = wilcoxon(logs, alternative="greater").pvalue if any(logs) else 1.0
        p_faster = wilcoxon(logs, alternative="less").pvalue if any(logs) else 1.0
        rows.append([name, statistics.median(a[name] for a in a_runs),
                     statistics.median(b[name] for b in b_runs), statistics.median(ratios),
                     p_slower, p_faster])
    q_slower = benjamini_hochberg([r[4] for r in rows])
    q_faster = benjamini_hochberg([r[5] for r in rows])
    out = []
    for row, qs, qf in zip(rows, q_slower, q_faster):
        ratio, verdict = row[3], ""
        if ratio > 1 + threshold and qs < alpha:
            verdict = "REGRESSION"
        elif ratio < 1 - threshold and qf < alpha:
            verdict = "faster"
        out.append((row[0], row[1], row[2], ratio, qs, verdict))
    return out


def fmt(t):
    return f"{t / 1000:.2f} ms" if t >= 1000 else f"{t:.2f} us"


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--a", nargs="+", required=True, help="build A's JSON files (REV), by round")
    p.add_argument("--b", nargs="+", required=True,
                   help="build B's JSON files (working tree), by round")
    p.add_argument("--a-label", default="A")
    p.add_argument("--b-label", default="B")
    p.add_argument("--threshold", type=float, default=5.0, help="percent (default 5)")
    p.add_argument("--alpha", type=float, default=0.05, help="significance level (default 0.05)")
    args = p.parse_args()
    if len(args.a) != len(args.b):
        print(f"ci/bench --ab: {len(args.a)} runs of A but {len(args.b)} of B: rounds must pair")
        return 2
    a_runs, b_runs = [run_times(f) for f in args.a], [run_times(f) for f in args.b]
    rows = compare(a_runs, b_runs, args.threshold / 100, args.alpha)
    width = max([len(r[0]) for r in rows] + [9])
    print(f"\nA = {args.a_label}, B = {args.b_label}: B / A per benchmark, the median of "
          f"{len(a_runs)} rounds' ratios (each run: the median of its repetitions)\n")
    print(f"{'benchmark':<{width}}  {'A':>10}  {'B':>10}  {'B/A':>6}  {'q slower':>8}  verdict")
    for name, ma, mb, ratio, ps, verdict in rows:
        print(f"{name:<{width}}  {fmt(ma):>10}  {fmt(mb):>10}  {ratio:>6.3f}  {ps:>8.4f}  {verdict}")
    worse = [r for r in rows if r[5] == "REGRESSION"]
    print(f"\nci/bench --ab: {len(worse)} regression(s) (B slower by more than {args.threshold:g}% "
          f"with q < {args.alpha:g}) among {len(rows)} benchmarks"
          + ("".join(f"\n  {r[0]}: {r[3]:.3f}x, q = {r[4]:.4f}" for r in worse)))
    return 1 if worse else 0


if __name__ == "__main__":
    sys.exit(main())
