#!/usr/bin/env python3
"""symmesh's strategy choice against torch 2.13's own sharding propagation, case by case,
and the agreement table of docs/torch-strategy-agreement.md.

For every case of cases.py (mm, bmm, addmm, baddbmm, linear; every input-placement
combination on 1-D and 2-D meshes, size-1 mesh dims included; on 3-D meshes all of mm's and
a fixed sample of the others) it asks torch (torch_oracle.py: the propagator on a fake
process group) and symmesh (`symmesh.plan`) and compares the output placements, the
placements each input is redistributed to, and the summed redistribute cost (relative
1e-9). Three runs: the full expansion (what torch 2.13 dispatches), and the priority-queue
search (PR 177799) under each iteration order of {Partial(sum), Partial(avg)}, which the
process's PYTHONHASHSEED decides (symmesh iterates sum first). A disagreement counts as
explained only where explanations.py names its cause and the torch source line.

    .venv/bin/python tools/torch_peer/strategy_agreement.py            # every case
    .venv/bin/python tools/torch_peer/strategy_agreement.py --sample   # CI's sample
    .venv/bin/python tools/torch_peer/strategy_agreement.py --op mm --mesh 2x2 --show 5

Exit status 1 when a disagreement is unexplained, 2 on bad arguments."""

import argparse
import math
import multiprocessing
import os
import signal
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import cases as case_list  # noqa: E402
import explanations  # noqa: E402

RUNS = (("full-expansion", None), ("priority-queue", "sum-first"),
        ("priority-queue", "avg-first"))


def run_name(key):
    """'full-expansion', 'priority-queue (sum-first)', … for a (mode, order) of RUNS."""
    mode, order = key
    return mode + (f" ({order})" if order else "")


def same_cost(torch_cost, symmesh_cost):
    if torch_cost is None:
        return True  # torch exposed none
    if math.isinf(torch_cost) or math.isinf(symmesh_cost):
        return torch_cost == symmesh_cost
    return abs(torch_cost - symmesh_cost) <= 1e-9 * max(1.0, abs(torch_cost))


def compare(case, mode):
    """One case in this process: {'torch': Answer, 'symmesh': (...), 'differs': [fields]}."""
    import symmesh_peer
    import torch_oracle
    if case["aten"] == "linear":
        got = torch_oracle.linear(case["shapes"], case["placements"], case["mesh"], mode=mode,
                                  host_devices=case["host_devices"])
    else:
        got = torch_oracle.matmul_op(case["aten"], case["shapes"], case["placements"],
                                     case["mesh"], mode=mode, host_devices=case["host_devices"])
    ours = symmesh_peer.answer(case, mode)
    differs = []
    if got.output != ours[0]:
        differs.append("output")
    if got.inputs and [tuple(p) for p in got.inputs] != ours[1]:
        differs.append("inputs")
    if not same_cost(got.cost_us, ours[2]):
        differs.append("cost")
    return {"torch": got, "symmesh": ours, "differs": differs}


def _worker_start(order):
    import logging
    # The fake process group warns on every all-to-all it fakes; the answers are what count.
    logging.disable(logging.WARNING)
    import torch_oracle
    torch_oracle.start()
    if order and torch_oracle.partial_order() != order:
        raise RuntimeError(f"worker iterates Partials {torch_oracle.partial_order()}, "
                           f"not {order}: PYTHONHASHSEED did not reach it")


def _work(item):
    index, case, mode = item
    try:
        return index, compare(case, mode), None
    except Exception as e:  # a case torch or symmesh cannot run is a result, not a crash
        return index, None, f"{type(e).__name__}: {e}"


def run(cases, mode, order, jobs):
    """Results of `cases` in `mode`, in worker processes whose Partial order is `order`."""
    import torch_oracle
    env_seed = os.environ.get("PYTHONHASHSEED")
    if order:
        os.environ["PYTHONHASHSEED"] = str(torch_oracle.hash_seed_for(order))
    try:
        ctx = multiprocessing.get_context("spawn")
        with ctx.Pool(jobs, initializer=_worker_start, initargs=(order,)) as pool:
            results = [None] * len(cases)
            items = ((i, c, mode) for i, c in enumerate(cases))
            for index, result, error in pool.imap_unordered(_work, items, chunksize=8):
                results[index] = result if error is None else {"error": error}
            return results
    finally:
        if env_seed is None:
            os.environ.pop("PYTHONHASHSEED", None)
        else:
            os.environ["PYTHONHASHSEED"] = env_seed


def describe(case, result):
    if "error" in result:
        return f"{case['name']}: {result['error']}"
    got, ours = result["torch"], result["symmesh"]
    return (f"{case['name']}\n    differs in {', '.join(result['differs'])}\n"
            f"    torch:   out {','.join(got.output)}  in "
            f"{' '.join('[' + ','.join(p) + ']' for p in got.inputs) or '(not compared)'}  "
            f"cost {got.cost_us}\n"
            f"    symmesh: out {','.join(ours[0])}  in "
            f"{' '.join('[' + ','.join(p) + ']' for p in ours[1])}  cost {ours[2]}"
            + ("".join(f"\n    torch ran {op}: {args} -> {used} -> {out}"
                       for op, args, used, out in got.ops) if got.ops else ""))


def judge(cases, raw):
    """Each run's verdicts (explanations.verdict), by (mode, order) as `raw` holds results."""
    return {key: [explanations.verdict(case, key, result, raw, index)
                  for index, (case, result) in enumerate(zip(cases, results))]
            for key, results in raw.items()}


def tabulate(cases, outcomes):
    """Rows (run, op, mesh, cases, agreed, explained by key, unexplained)."""
    rows = {}
    for key, results in outcomes.items():
        name = run_name(key)
        for case, verdict in zip(cases, results):
            mesh = "x".join(map(str, case["mesh"])) + (
                f" ({case['host_devices']}/host)" if case["host_devices"] else "")
            row = rows.setdefault((name, case["op"], len(case["mesh"]), mesh),
                                  {"cases": 0, "agreed": 0, "explained": {}, "unexplained": 0})
            row["cases"] += 1
            kind = verdict[0]
            if kind == "agreed":
                row["agreed"] += 1
            elif kind == "explained":
                row["explained"][verdict[1]] = row["explained"].get(verdict[1], 0) + 1
            else:
                row["unexplained"] += 1
    return rows


def main(argv=None):
    # SIGTERM unwinds like Ctrl-C, so the pool's `with` terminates its workers: none is left
    # running after the tool.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sample", action="store_true", help="CI's fixed sample only")
    parser.add_argument("--op", choices=sorted(case_list.OPS), help="one op only")
    parser.add_argument("--mesh", help="one mesh only, e.g. 2x2")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--show", type=int, default=10,
                        help="unexplained disagreements to print per run (default 10)")
    parser.add_argument("--show-explained", type=int, default=0,
                        help="explained disagreements to print per run")
    args = parser.parse_args(argv)
    if args.jobs < 1:
        parser.error("--jobs must be at least 1")
    cases = list(case_list.sample_cases() if args.sample else case_list.all_cases())
    if args.op:
        cases = [c for c in cases if c["op"] == args.op]
    if args.mesh:
        cases = [c for c in cases if "x".join(map(str, c["mesh"])) == args.mesh]
    if not cases:
        parser.error("no case matches --op/--mesh")

    raw = {}
    for key in RUNS:
        started = time.monotonic()
        raw[key] = run(cases, key[0], key[1], args.jobs)
        print(f"# {run_name(key)}: {len(cases)} cases in "
              f"{time.monotonic() - started:.0f} s", flush=True)
    outcomes = judge(cases, raw)

    rows = tabulate(cases, outcomes)
    print("\n| run | op | mesh | cases | agreed | explained | unexplained |")
    print("|---|---|---|---:|---:|---|---:|")
    totals = {}
    run_order = [run_name(key) for key in RUNS]
    for (name, op, _, mesh), row in sorted(rows.items(), key=lambda kv: (
            run_order.index(kv[0][0]), kv[0][1], kv[0][2], kv[0][3])):
        explained = ", ".join(f"{n} {k}" for k, n in sorted(row["explained"].items())) or "0"
        print(f"| {name} | {op} | {mesh} | {row['cases']} | {row['agreed']} | "
              f"{explained} | {row['unexplained']} |")
        t = totals.setdefault(name, [0, 0, 0, 0])
        t[0] += row["cases"]
        t[1] += row["agreed"]
        t[2] += sum(row["explained"].values())
        t[3] += row["unexplained"]
    print("\n| run | cases | agreed | explained | unexplained |")
    print("|---|---:|---:|---:|---:|")
    for name, (n, agreed, explained, unexplained) in totals.items():
        print(f"| {name} | {n} | {agreed} | {explained} | {unexplained} |")

    unexplained_total = 0
    for key, verdicts in outcomes.items():
        shown_u = shown_e = 0
        for case, verdict, result in zip(cases, verdicts, raw[key]):
            if verdict[0] == "unexplained":
                unexplained_total += 1
                if shown_u < args.show:
                    shown_u += 1
                    print(f"\nUNEXPLAINED ({run_name(key)}): " + describe(case, result))
            elif verdict[0] == "explained" and shown_e < args.show_explained:
                shown_e += 1
                print(f"\nexplained by {verdict[1]} ({run_name(key)}): "
                      + describe(case, result))
    return 1 if unexplained_total else 0


if __name__ == "__main__":
    sys.exit(main())
