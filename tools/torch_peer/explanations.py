"""Why symmesh and torch disagree on a case, where the cause is known. Each cause names the
torch 2.13 source line that produces it (paths under torch/distributed/tensor/ unless
stated) and is claimed only by a checkable condition on the case and torch's own answer;
a disagreement no cause claims is unexplained and fails the agreement run.
docs/torch-strategy-agreement.md shows a worked case of each."""

CAUSES = {
    "linear-strided-view": (
        "torch registers no strategy for aten.linear, so DTensor runs ATen's "
        "CompositeImplicitAutograd decomposition (aten/src/ATen/native/Linear.cpp: a 3-D "
        "input is flattened to 2-D for mm/addmm and the result viewed back). Flattening a "
        "tensor sharded on its second dim gives _StridedShard(0, sf=...) "
        "(_ops/_view_ops.py:1265), which the mm rules then fill their shard placeholders "
        "with (_ops/single_dim_strategy.py:140) and which redistribute_cost does not price "
        "as a Shard (_collective_utils.py:556, 'TODO: Support _StridedShard redistribution'). "
        "symmesh plans linear as one einsum '...k,nk->...n': a's dims before k are batch "
        "dims, so S(1) of a passes to the output without a collective."),
    "linear-strided-unflatten": (
        "torch cannot run this linear at all: the flattened input's _StridedShard cannot be "
        "viewed back to 3-D, and the view raises 'Cannot unflatten tensor with "
        "_StridedShard placement' (_ops/_view_ops.py:1343). symmesh plans the op; torch's "
        "user would have to redistribute a first."),
    "linear-flattened-tie": (
        "equal cost, another goal: torch searches the decomposed mm, whose `a` is the "
        "flattened 2-D view (rows, k), where symmesh searches '...k,nk->...n' on the 3-D a "
        "(batch, seq, k). The two have different hops and rules, so goals of equal cost are "
        "pushed in a different order (_ops/single_dim_strategy.py:1146, mesh dim outer, "
        "input inner) and the first popped differs."),
    "partial-set-order": (
        "the priority-queue search pushes R's neighbours 'neighbors.extend(allowed_partial)' "
        "(_ops/single_dim_strategy.py:900), iterating a Python set of Partial placements "
        "whose order follows the string hash of 'sum' and 'avg', i.e. PYTHONHASHSEED. "
        "symmesh pushes P(sum) before P(avg), the order of the rules; under that order "
        "(the sum-first run) torch agrees on this case, so only an equal-cost tie broken by "
        "push order differs."),
}


def _torch_ran_strided_view(result):
    return any("_StridedShard" in str(step) for step in result["torch"].ops)


def _torch_ran_view(result):
    return any(step[0] in ("aten.view.default", "aten._unsafe_view.default")
               for step in result["torch"].ops)


def verdict(case, run_key, result, raw, index):
    """('agreed',), ('explained', cause) or ('unexplained',) for one case of one run.
    raw: every run's results, by (mode, order), index: this case's position in them."""
    if result is None:
        return ("unexplained",)
    if "error" in result:
        if case["op"] == "linear 3d" and \
                "Cannot unflatten tensor with _StridedShard placement" in result["error"]:
            return ("explained", "linear-strided-unflatten")
        return ("unexplained",)
    if not result["differs"]:
        return ("agreed",)
    if case["op"] == "linear 3d" and _torch_ran_strided_view(result):
        return ("explained", "linear-strided-view")
    mode, order = run_key
    if case["op"] == "linear 3d" and mode == "priority-queue" and \
            "cost" not in result["differs"] and _torch_ran_view(result):
        return ("explained", "linear-flattened-tie")
    if mode == "priority-queue" and order == "avg-first":
        twin = raw.get(("priority-queue", "sum-first"))
        if twin and twin[index] and "error" not in twin[index] and not twin[index]["differs"]:
            return ("explained", "partial-set-order")
    return ("unexplained",)
