"""sim_scale's section of the bench report (issue 24): its table and the growth of the cost per
rank-call."""
from report_json import read_results

SCALE_TARGETS = "issue 24's targets: 65,536 ranks deterministic under 120 s and 8 GiB peak RSS; " \
    "16,384 ranks concurrent; cost per rank-call at 65,536 within 1.5x of 1,024"


def sim_scale_section(paths):
    """sim_scale's results (bench/sim_scale.cpp, one JSON per invocation): one line per world size
    and schedule, then the growth of the cost per rank-call from its smallest size to its largest."""
    print("\nsim at scale (issue 24)\n")
    runs, ratios, head = [], [], None
    for path in paths:
        data = read_results(path)
        if data is None:
            continue
        head = head or data
        allocator = data.get("allocator", "glibc")  # files from before it was recorded: glibc's
        runs += [dict(r, allocator=allocator) for r in data.get("results", [])]
        ratios += [dict(q, allocator=allocator) for q in data.get("ratios", [])]
    if not runs:
        print("  sim_scale reported nothing (see its output above)")
        return
    stack = f"{head['stack_kib']} KiB" if head["stack_kib"] else "sim's default"
    print(f"{head['calls_per_rank']} dist calls per rank, {head['ranks_per_node']} ranks per node, "
          f"rank stacks {stack}\n")
    print(f"{'ranks':>7}  {'schedule':<13}  {'malloc':<24}  {'wall (s)':>9}  {'peak RSS (MiB)':>14}  "
          f"{'rank-calls':>11}  {'us/rank-call':>12}  (range over runs)")
    for r in runs:
        if r["ok"]:
            cost, wall = r["us_per_rank_call"], r["wall_s"]
            spread = ""
            if "runs" in r and wall > 0:
                spread = (f"  ({cost * r['wall_min_s'] / wall:.3f}-{cost * r['wall_max_s'] / wall:.3f}, "
                          f"{r['runs']} run{'' if r['runs'] == 1 else 's'})")
            print(f"{r['ranks']:>7}  {r['schedule']:<13}  {r['allocator']:<24}  {wall:>9.3f}  "
                  f"{r['peak_rss_mib']:>14.1f}  {r['rank_calls']:>11}  {cost:>12.3f}{spread}")
        else:
            print(f"{r['ranks']:>7}  {r['schedule']:<13}  {r['allocator']:<24}  failed: {r['error']}")
    for q in ratios:
        value = "-" if q["ratio"] is None else f"{q['ratio']:.2f}"
        note = f" ({q['note']})" if q["note"] else ""
        print(f"cost per rank-call at {q['largest']} / at {q['smallest']} ({q['schedule']}, "
              f"malloc of {q['allocator']}): "
              f"{value}{note}")
    print(f"({SCALE_TARGETS})")
