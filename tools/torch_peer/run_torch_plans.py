#!/usr/bin/env python3
"""Runs every torch plan of tests/python/torch_plan_run.py's cases with real DTensor and
prints the results table of docs/torch-plan-check.md.

Each case's plan comes from symmesh (symmesh.torch_plan / torch_plan_source of a shipped or
derived model scenario); it is applied with parallelize_module to a tiny torchtitan-style
Llama (tests/python/torch_llama.py) on tp simulated ranks (LocalTensorMode) and compared
with the same model run unsharded: logits, loss, every parameter's gradient. A plan whose
notes say torch cannot run it as written is run anyway, to show what happens, and reported
as noted. Needs torch 2.13 or later (.venv/ from tools/setup) and the built module:

    .venv/bin/python tools/torch_peer/run_torch_plans.py            # fp32 and bf16
    .venv/bin/python tools/torch_peer/run_torch_plans.py --dtype fp32 --case llama3-8b-pipeline

Exit status 1 when a plan without notes does not match."""

import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_DIR = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(SOURCE_DIR, "tests", "python"))
try:
    import symmesh
except ImportError:
    sys.path.insert(0, os.path.join(SOURCE_DIR, "build", "python"))
    import symmesh

import torch  # noqa: E402

import torch_plan_run as run  # noqa: E402

DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16}


def short(text, n=90):
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[:n - 1] + "…"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dtype", choices=[*DTYPES, "both"], default="both")
    parser.add_argument("--case", action="append", help="only this case (repeatable)")
    options = parser.parse_args()
    torch.set_num_threads(1)  # tiny tensors: threads only contend
    dtypes = list(DTYPES) if options.dtype == "both" else [options.dtype]
    chosen = [c for c in run.cases(SOURCE_DIR) if not options.case or c.name in options.case]
    if options.case and len(chosen) != len(options.case):
        parser.error(f"known cases: {', '.join(c.name for c in run.cases(SOURCE_DIR))}")

    print("| scenario | tp | dtype | applied from | styles applied | collectives (fwd+bwd) "
          "| max error logits (abs / rel) | loss (rel) | grads (abs / rel, worst parameter) "
          "| result |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    failed, details = 0, []
    for case in chosen:
        start = time.monotonic()
        try:
            plan, source, args = run.case_plan(symmesh, case)
        except Exception as e:  # noqa: BLE001  symmesh refuses the scenario: say why
            print(f"| {case.name} | | | | | | | | | symmesh refuses it: "
                  f"{type(e).__name__}: {short(e, 120)} |")
            continue
        plan_s = time.monotonic() - start
        noted = bool(plan["notes"])
        how = ("apply_tp" if source else "JSON") + f", {args.n_layers} blocks"
        for key in dtypes:
            try:
                r = run.run_plan(plan, args, source=source, name=case.name, dtype=DTYPES[key],
                                 allow_notes=noted)
            except Exception as e:  # noqa: BLE001
                status = ("noted; run anyway it fails: " if noted else "FAIL: ") + \
                    f"{type(e).__name__}: {short(e)}"
                failed += not noted
                print(f"| {case.name} | {plan['tp_size']} | {key} | {how} | | | | | | "
                      f"{status} |")
                continue
            la, lr, _ = r.worst("logits")
            _, loss_r, _ = r.worst("loss")
            ga, gr, gname = r.worst("grad")
            if r.passed:
                status = f"pass (≤ {r.tolerance:g})" + (" although noted" if noted else "")
            else:
                status = ("noted; run anyway it mismatches" if noted else "FAIL") + \
                    f": {short(', '.join(sorted(r.failures)), 80)}"
                failed += not noted
            print(f"| {case.name} | {r.tp} | {key} | {how} | {r.styles_text()} | "
                  f"{r.collectives_text()} | {la:.1e} / {lr:.1e} | {loss_r:.1e} | "
                  f"{ga:.1e} / {gr:.1e} ({gname[5:]}) | {status} |")
            sys.stdout.flush()
        details.append((case, plan, plan_s))
    print()
    for case, plan, plan_s in details:
        print(f"- {case.name}: {case.about}; planned in {plan_s:.1f} s; "
              f"{len(run.distinct_layer_plans(plan))} different block plan(s); "
              f"replicated: {', '.join(plan['replicated']) or 'none'}")
        for n in plan["notes"]:
            print(f"  - note: {n}")
        for n in plan.get("other_dims", []):
            print(f"  - other mesh dims: {n}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
