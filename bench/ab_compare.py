#!/usr/bin/python3
"""A/B across commits (ci/bench --ab REV): the repetitions of every benchmark from build A (REV) and
build B (the working tree), run alternately in one sitting, compared per benchmark: the ratio of
the medians (B / A) and a one-sided Mann-Whitney U test over the repetitions. A regression is
flagged only when B is both slower by more than the threshold and significantly so."""
import argparse
import json
import re
import statistics
import sys

from scipy.stats import mannwhitneyu


def samples(paths):
    """benchmark name -> every repetition's real time (us), aggregates dropped."""
    out = {}
    for path in paths:
        with open(path) as f:
            data = json.load(f)
        for b in data.get("benchmarks", []):
            if b.get("run_type") != "iteration" or b.get("error_occurred"):
                continue
            name = re.sub(r"/(min_time:[0-9.]+|manual_time|real_time)", "", b["run_name"])
            out.setdefault(name, []).append(b["real_time"])
    return out


def compare(a, b, threshold, alpha):
    """Rows (name, median A, median B, ratio, p slower, p faster, verdict), by name."""
    rows = []
    for name in sorted(set(a) & set(b)):
        ma, mb = statistics.median(a[name]), statistics.median(b[name])
        ratio = mb / ma if ma > 0 else float("inf")
        p_slower = mannwhitneyu(b[name], a[name], alternative="greater").pvalue
        p_faster = mannwhitneyu(b[name], a[name], alternative="less").pvalue
        verdict = ""
        if ratio > 1 + threshold and p_slower < alpha:
            verdict = "REGRESSION"
        elif ratio < 1 - threshold and p_faster < alpha:
            verdict = "faster"
        rows.append((name, ma, mb, ratio, p_slower, p_faster, verdict))
    return rows


def fmt(t):
    return f"{t / 1000:.2f} ms" if t >= 1000 else f"{t:.2f} us"


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--a", nargs="+", required=True, help="build A's JSON files (REV)")
    p.add_argument("--b", nargs="+", required=True, help="build B's JSON files (working tree)")
    p.add_argument("--a-label", default="A")
    p.add_argument("--b-label", default="B")
    p.add_argument("--threshold", type=float, default=5.0, help="percent (default 5)")
    p.add_argument("--alpha", type=float, default=0.05, help="significance level (default 0.05)")
    args = p.parse_args()
    a, b = samples(args.a), samples(args.b)
    rows = compare(a, b, args.threshold / 100, args.alpha)
    width = max([len(r[0]) for r in rows] + [9])
    print(f"\nA = {args.a_label}, B = {args.b_label}: B / A per benchmark, medians of "
          f"{min((len(v) for v in a.values()), default=0)}+ repetitions a side\n")
    print(f"{'benchmark':<{width}}  {'A':>10}  {'B':>10}  {'B/A':>6}  {'p slower':>8}  verdict")
    for name, ma, mb, ratio, ps, pf, verdict in rows:
        print(f"{name:<{width}}  {fmt(ma):>10}  {fmt(mb):>10}  {ratio:>6.3f}  {ps:>8.4f}  {verdict}")
    only = sorted(set(a) ^ set(b))
    if only:
        print(f"\nin one build only (not compared): {', '.join(only)}")
    worse = [r for r in rows if r[6] == "REGRESSION"]
    print(f"\nci/bench --ab: {len(worse)} regression(s) (B slower by more than {args.threshold:g}% "
          f"with p < {args.alpha:g}) among {len(rows)} benchmarks"
          + ("".join(f"\n  {r[0]}: {r[3]:.3f}x, p = {r[4]:.4f}" for r in worse)))
    return 1 if worse else 0


if __name__ == "__main__":
    sys.exit(main())
