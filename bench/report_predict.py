"""The network model's section of the bench report (issue 26): dist_calibrate's measured points
against the model's predictions (tools/calibrate/predict_accuracy), and the dgx_h100 preset against the
published nccl-tests figures."""
from report_json import read_results

PREDICT_TARGETS = "issue 26's targets: predicted/measured within 0.75-1.33 for >= 80% of points " \
    "(fitted on the 2-rank points only); dgx_h100 ring busbw ~370 GB/s and NVLS ~480 GB/s within 15%"


def predict_section(path):
    """predict_accuracy's JSON: the points off by more than the goal, the share within it per
    world size, and the preset's busbw ratios."""
    print("\nnetwork model accuracy (issue 26)\n")
    data = read_results(path, "see dist_calibrate's and predict_accuracy's output")
    if data is None:
        return
    print(f"{data['backend']} processes; profile: {data['network_source']}\n")
    print(f"{'collective':<15} {'ranks':>5} {'bytes':>10} {'measured us':>12} "
          f"{'predicted us':>13} {'ratio':>6}")
    for p in data["points"]:
        flag = "" if 0.75 <= p["ratio"] <= 1.33 else "  *"
        print(f"{p['kind']:<15} {p['ranks']:>5} {int(p['bytes']):>10} {p['measured_us']:>12.1f} "
              f"{p['predicted_us']:>13.1f} {p['ratio']:>6.2f}{flag}")
    total = sum(w["points"] for w in data["within"])
    ok = sum(w["within"] for w in data["within"])
    for w in data["within"]:
        print(f"within 0.75-1.33 at {w['ranks']} ranks: {w['within']} of {w['points']} "
              f"({100 * w['within'] / max(w['points'], 1):.0f}%)")
    print(f"within 0.75-1.33 overall: {ok} of {total} ({100 * ok / max(total, 1):.0f}%)")
    dgx = data["dgx_h100"]
    print(f"dgx_h100(1) all_reduce busbw at 8 GiB: ring {dgx['ring_busbw']:.0f} GB/s "
          f"(/ 370 = {dgx['ring_busbw'] / 370:.2f}), NVLS {dgx['nvls_busbw']:.0f} GB/s "
          f"(/ 480 = {dgx['nvls_busbw'] / 480:.2f})")
    print(f"({PREDICT_TARGETS})")
