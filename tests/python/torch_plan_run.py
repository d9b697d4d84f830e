"""Runs a symmesh torch plan (symmesh.torch_plan / torch_plan_source) with real DTensor on
the tiny torchtitan-style Llama of torch_llama.py, and compares it with the same model run
whole by torch.

Shared by test_torch_plan_dtensor.py and tools/torch_peer/run_torch_plans.py; needs torch
(2.13 or later: torch.distributed._local_tensor). How it runs:

  - one process, no GPU: a "fake" process group of tp ranks (it only makes DeviceMesh and
    DTensor believe there are tp ranks) under LocalTensorMode, which keeps every rank's
    shard of every tensor and runs each collective DTensor issues (all-gather,
    reduce-scatter, all-reduce) on those shards for real, so the numbers are what tp GPUs
    would compute;
  - the plan is applied with torch.distributed.tensor.parallel.parallelize_module, either
    by executing torch_plan_source's apply_tp or from torch_plan's JSON; every module path
    must name a module of the model (parallelize_module itself only warns and skips a path
    it cannot resolve: here that is a failure), and every style must have left its mark:
    ColwiseParallel/RowwiseParallel a weight sharded on the right dim, SequenceParallel
    replicated DTensor parameters, PrepareModuleInput/Output a hook;
  - the reference is an identical copy of the model run unsharded by plain torch: its
    logits, mean cross-entropy loss and every parameter's gradient. The sharded run's
    logits (gathered when the plan leaves them split by vocabulary, as loss parallel does),
    loss (under torch's loss_parallel() when the plan keeps the logits a DTensor) and
    gradients (each gathered whole with full_tensor()) are compared rank by rank.
"""

import copy
import fnmatch
import time
import warnings
from collections import Counter
from dataclasses import dataclass, field

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn
from torch.distributed._local_tensor import LocalTensor, LocalTensorMode
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor import DTensor, Partial, Replicate, Shard
from torch.distributed.tensor.debug import CommDebugMode
from torch.distributed.tensor.parallel import (
    ColwiseParallel,
    PrepareModuleInput,
    PrepareModuleInputOutput,
    PrepareModuleOutput,
    RowwiseParallel,
    SequenceParallel,
    loss_parallel,
    parallelize_module,
)
import torch.testing._internal.distributed.fake_pg  # noqa: F401  registers the "fake" backend

import torch_llama

STYLES = {c.__name__: c for c in (ColwiseParallel, RowwiseParallel, SequenceParallel,
                                  PrepareModuleInput, PrepareModuleOutput,
                                  PrepareModuleInputOutput)}
# What a plan's kwargs source ("Shard(1)", "(Replicate(), None)", "False") may name.
PLACEMENT_NAMES = {"Shard": Shard, "Replicate": Replicate, "Partial": Partial,
                   "None": None, "True": True, "False": False}

# Largest error allowed, relative to the largest magnitude of the reference tensor
# (docs/torch-plan-check.md, "Tolerances", says why these).
TOLERANCE = {torch.float32: 1e-5, torch.bfloat16: 5e-2}


class PlanError(AssertionError):
    """The plan cannot be applied as written: a module path the model lacks, an unknown
    style, or a style that did not take effect."""


@dataclass
class Result:
    name: str
    tp: int
    dtype: torch.dtype
    styles: Counter = field(default_factory=Counter)  # style -> modules it was applied to
    replicated: list = field(default_factory=list)
    loss_parallel: bool = False
    errors: dict = field(default_factory=dict)  # "logits"/"loss"/"grad <param>" -> (abs, rel)
    collectives: Counter = field(default_factory=Counter)  # forward+backward, by collective
    seconds: float = 0.0

    @property
    def tolerance(self):
        return TOLERANCE[self.dtype]

    def worst(self, prefix):
        """(abs, rel, name) of the largest relative error among entries starting with prefix."""
        items = [(rel, a, k) for k, (a, rel) in self.errors.items() if k.startswith(prefix)]
        if not items:
            return (0.0, 0.0, "")
        rel, a, k = max(items)
        return (a, rel, k)

    @property
    def failures(self):
        return {k: v for k, v in self.errors.items() if not v[1] <= self.tolerance}

    @property
    def passed(self):
        return not self.failures

    def styles_text(self):
        return ", ".join(f"{s} x{n}" for s, n in sorted(self.styles.items()))

    def collectives_text(self):
        return ", ".join(f"{c} x{n}" for c, n in sorted(self.collectives.items()))


# ---------------------------------------------------------------------------------------------
# Process group and model


def fake_world(size):
    """A fake process group of `size` ranks (rank 0 is this process), remade when the size
    changes; LocalTensorMode then runs every rank."""
    if dist.is_initialized():
        if dist.get_world_size() == size:
            return
        dist.destroy_process_group()
    dist.init_process_group("fake", rank=0, world_size=size, store=dist.HashStore())


def build_model(args, dtype, seed):
    torch.manual_seed(seed)
    model = torch_llama.Transformer(args)
    model.init_weights(torch.Generator().manual_seed(seed))
    if dtype != torch.float32:
        for p in model.parameters():  # the rotary table stays complex64, as in torchtitan
            p.data = p.data.to(dtype)
    return model


# ---------------------------------------------------------------------------------------------
# Plans


def make_style(entry):
    """The ParallelStyle of one plan entry {"style": ..., "kwargs": {name: source}}."""
    if entry["style"] not in STYLES:
        raise PlanError(f"unknown ParallelStyle {entry['style']!r}")
    kwargs = {k: eval(v, {"__builtins__": {}}, PLACEMENT_NAMES)  # noqa: S307 plan source
              for k, v in entry["kwargs"].items()}
    return STYLES[entry["style"]](**kwargs)


def uniform_layers(plan):
    return all(layer == plan["layers"][0] for layer in plan["layers"])


def distinct_layer_plans(plan):
    """The plan's different block plans, in the order of the first block having each, with
    the blocks that have it: [(block plan, [block numbers])]."""
    out = []
    for i, layer in enumerate(plan["layers"]):
        for known, blocks in out:
            if known == layer:
                blocks.append(i)
                break
        else:
            out.append((layer, [i]))
    return out


def tiny_layer_plans(plan, n_layers):
    """The block plans for a tiny model of n_layers blocks. A plan whose blocks are all
    alike gives each tiny block that plan. Otherwise tiny block i takes the i-th distinct
    block plan (a model of as many blocks as the plan has distinct ones runs each once, in
    the order the real model meets them)."""
    distinct = [layer for layer, _ in distinct_layer_plans(plan)]
    if not distinct:
        return [{}] * n_layers
    if len(distinct) == 1:
        return distinct * n_layers
    if len(distinct) != n_layers:
        raise PlanError(f"the plan has {len(distinct)} different block plans; the tiny model "
                        f"needs as many blocks, not {n_layers}")
    return distinct


def resolve(root, path):
    """The submodules `path` names under root, token by token with parallelize_module's
    fnmatch; PlanError when it names none."""
    found = [root]
    for token in path.split("."):
        found = [child for m in found for name, child in m.named_children()
                 if fnmatch.fnmatch(name, token)]
        if not found:
            raise PlanError(f"plan entry '{path}' names no module of {type(root).__name__} "
                            f"(no submodule '{token}')")
    return found


def check_applied(module, style, path):
    """That `style` took effect on `module` (after parallelize_module)."""
    def placements(p):
        return tuple(p.placements) if isinstance(p, DTensor) else None

    name = type(style).__name__
    if isinstance(style, (ColwiseParallel, RowwiseParallel)):
        colwise = isinstance(style, ColwiseParallel)
        if isinstance(module, nn.Linear):  # weight [out, in]
            want = Shard(0) if colwise else Shard(1)
        elif isinstance(module, nn.Embedding):  # weight [vocab, dim]
            want = Shard(1) if colwise else Shard(0)
        else:
            raise PlanError(f"{path}: {name} on a {type(module).__name__}")
        if placements(module.weight) != (want,):
            raise PlanError(f"{path}: {name} left its weight at {placements(module.weight)}")
    elif isinstance(style, SequenceParallel):
        for pname, p in module.named_parameters():
            if placements(p) != (Replicate(),):
                raise PlanError(f"{path}.{pname}: SequenceParallel left it at {placements(p)}")
    elif isinstance(style, PrepareModuleInput):
        if not module._forward_pre_hooks:
            raise PlanError(f"{path}: PrepareModuleInput registered no forward pre-hook")
    elif isinstance(style, PrepareModuleOutput):
        if not module._forward_hooks:
            raise PlanError(f"{path}: PrepareModuleOutput registered no forward hook")
    elif isinstance(style, PrepareModuleInputOutput):
        if not module._forward_pre_hooks or not module._forward_hooks:
            raise PlanError(f"{path}: PrepareModuleInputOutput registered no hooks")


class Applier:
    """parallelize_module as a plan calls it, checking every entry (its module exists, its
    style takes effect) and counting the styles; warnings of an unresolved path are errors."""

    def __init__(self, model):
        self.model = model
        self.styles = Counter()
        self.applied = []  # (full path, style)

    def full_path(self, root, path):
        for name, m in self.model.named_modules():
            if m is root:
                return f"{name}.{path}" if name else path
        raise PlanError(f"parallelize_module was given a module outside the model: {root}")

    def __call__(self, module, device_mesh, parallelize_plan, **kwargs):
        if not isinstance(parallelize_plan, dict):
            raise PlanError("expected a dict plan")
        targets = []
        for path, style in parallelize_plan.items():
            if type(style).__name__ not in STYLES:
                raise PlanError(f"{path}: {style!r} is not one of {sorted(STYLES)}")
            targets.append((path, style, resolve(module, path)))
        with warnings.catch_warnings():
            warnings.filterwarnings("error", message=".*could not be resolved.*")
            parallelize_module(module, device_mesh, parallelize_plan, **kwargs)
        for path, style, mods in targets:
            for m in mods:
                check_applied(m, style, path)
                self.styles[type(style).__name__] += 1
                self.applied.append((self.full_path(module, path), style))
        return module


def apply_json(plan, model, mesh, applier):
    """Applies torch_plan's JSON the way torchtitan's apply_tp does: the model's entries on
    the model, then each block's on that block; an entry's second style ("then", a module
    that takes two) by a second parallelize_module call on the same scope, after the first."""
    scopes = [(model, plan["model"])]
    scopes += list(zip(model.layers.values(), tiny_layer_plans(plan, len(model.layers))))
    for scope, entries in scopes:
        applier(scope, mesh, {k: make_style(v) for k, v in entries.items()})
        then = {k: make_style(v["then"]) for k, v in entries.items() if "then" in v}
        if then:
            applier(scope, mesh, then)


def apply_source(source, model, mesh, applier):
    """Executes torch_plan_source's `apply_tp(model, tp_mesh)` with real torch, its
    parallelize_module calls going through `applier`."""
    namespace = {}
    exec(compile(source, "<symmesh apply_tp>", "exec"), namespace)  # noqa: S102
    namespace["parallelize_module"] = applier
    namespace["apply_tp"](model, mesh)


# ---------------------------------------------------------------------------------------------
# Running and comparing


def per_rank(mode, t, ranks):
    """{rank: plain tensor} of a LocalTensor, or of a DTensor gathered whole."""
    if isinstance(t, DTensor):
        t = t.full_tensor()
    if isinstance(t, LocalTensor):
        out = {}

        def keep(r, x):
            out[r] = x.detach().clone()
            return x

        mode.tensor_map(t, keep)
        return out
    return {r: t.detach() for r in ranks}


def compare(result, name, ranks_values, ref, ranks):
    """Records the worst error over ranks of `name` against the reference `ref`: absolute,
    and relative to ref's largest magnitude. A missing rank or a wrong shape is infinite."""
    ref = ref.detach().float()
    scale = ref.abs().max().item() or 1.0
    worst = 0.0
    for r in ranks:
        got = ranks_values.get(r)
        if got is None or tuple(got.shape) != tuple(ref.shape):
            worst = float("inf")
            break
        worst = max(worst, (got.float() - ref).abs().max().item())
    result.errors[name] = (worst, worst / scale)


def loss_of(logits, labels):
    return F.cross_entropy(logits.flatten(0, 1).float(), labels.flatten())


def run_plan(plan, args, *, source=None, name="", dtype=torch.float32, batch=2, seq=16,
             seed=0, tamper=None, allow_notes=False):
    """Applies `plan` (torch_plan's dict; with `source`, torch_plan_source's text is what
    gets executed) to a tiny model of `args` on plan["tp_size"] ranks and returns a Result
    holding the errors against the unsharded model. Raises PlanError for a plan that cannot
    be applied as written, and whatever torch raises for one that cannot run.

    tamper(model): called after the plan is applied, before the run. allow_notes: run a plan
    whose notes say torch cannot run it as written (to see what happens)."""
    start = time.monotonic()
    tp = plan["tp_size"]
    ranks = list(range(tp))
    result = Result(name=name, tp=tp, dtype=dtype, replicated=list(plan["replicated"]))
    if plan["notes"] and not allow_notes:
        raise PlanError("the plan has notes (choices no ParallelStyle expresses): "
                        + "; ".join(plan["notes"]))
    out = plan["model"].get("output", {})
    result.loss_parallel = out.get("kwargs", {}).get("use_local_output") == "False"
    fake_world(tp)

    reference = build_model(args, dtype, seed)
    sharded = copy.deepcopy(reference)
    g = torch.Generator().manual_seed(seed + 1)
    tokens = torch.randint(0, args.vocab_size, (batch, seq), generator=g)
    labels = torch.randint(0, args.vocab_size, (batch, seq), generator=g)

    ref_logits = reference(tokens)
    ref_loss = loss_of(ref_logits, labels)
    ref_loss.backward()

    with LocalTensorMode(tp) as mode, warnings.catch_warnings():
        # SequenceParallel's hooks on a module whose inputs need no gradient (the tokens'
        # embedding) make torch say its full backward hooks fire on outputs: as intended.
        warnings.filterwarnings("ignore", message="Full backward hook is firing")
        mesh = init_device_mesh("cpu", (tp,))
        applier = Applier(sharded)
        if source is not None:
            apply_source(source, sharded, mesh, applier)
        else:
            apply_json(plan, sharded, mesh, applier)
        result.styles = applier.styles
        check_untouched(sharded, applier.applied, result.replicated,
                        tiny_block_of(plan, len(sharded.layers), source is not None))
        if tamper:
            tamper(sharded)
        # Every rank reads the same batch, as every tp rank of a data-parallel group does.
        local_tokens = mode.rank_map(lambda r: tokens.clone())
        local_labels = mode.rank_map(lambda r: labels.clone())
        with CommDebugMode() as comms:
            if result.loss_parallel:
                with loss_parallel():
                    logits = sharded(local_tokens)
                    if not isinstance(logits, DTensor):
                        raise PlanError("the output keeps a DTensor (use_local_output=False) "
                                        f"but the model returned {type(logits).__name__}")
                    loss = loss_of(logits, local_labels)
                    loss.backward()
            else:
                logits = sharded(local_tokens)
                loss = loss_of(logits, local_labels)
                loss.backward()
        result.collectives = Counter({getattr(op, "__name__", str(op)).split(".")[0]: n
                                      for op, n in comms.get_comm_counts().items()})
        compare(result, "logits", per_rank(mode, logits, ranks), ref_logits, ranks)
        compare(result, "loss", per_rank(mode, loss, ranks), ref_loss, ranks)
        params = dict(sharded.named_parameters())
        for pname, ref_p in reference.named_parameters():
            grad = params[pname].grad
            got = {} if grad is None else per_rank(mode, grad, ranks)
            compare(result, "grad " + pname, got, ref_p.grad, ranks)
    result.seconds = time.monotonic() - start
    return result


def tiny_block_of(plan, n_layers, from_source):
    """{real block number: the tiny block that ran its plan}."""
    if from_source and not uniform_layers(plan):
        return {i: i for i in range(n_layers)}  # the source names every block itself
    if uniform_layers(plan):
        return {i: i % n_layers for i in range(len(plan["layers"]))}
    return {b: k for k, (_, blocks) in enumerate(distinct_layer_plans(plan)) for b in blocks}


def check_untouched(model, applied, replicated, block_of):
    """Parameters of modules the plan gave no sharding style stay whole, plain tensors on
    every rank; the modules the plan calls replicated exist (a real block's path read as
    the tiny block that ran its plan, `block_of`) and keep their weights whole."""
    sharding = {p for p, s in applied
                if isinstance(s, (ColwiseParallel, RowwiseParallel, SequenceParallel))}
    modules = dict(model.named_modules())
    for name, p in model.named_parameters():
        owner = name.rsplit(".", 1)[0]
        if owner not in sharding and isinstance(p, DTensor):
            raise PlanError(f"{name} became a DTensor though no style names {owner}")
    for path in replicated:
        parts = path.split(".")
        if parts[0] == "layers" and len(parts) > 2:
            if int(parts[1]) not in block_of:
                raise PlanError(f"replicated module '{path}' is in no block of the plan")
            path = ".".join(["layers", str(block_of[int(parts[1])]), *parts[2:]])
        if path not in modules:
            raise PlanError(f"replicated module '{path}' is not in the model")
        for pname, p in modules[path].named_parameters():
            if isinstance(p, DTensor) and any(not pl.is_replicate() for pl in p.placements):
                raise PlanError(f"{path}.{pname} is listed replicated but is {p.placements}")


# ---------------------------------------------------------------------------------------------
# The plans checked: symmesh's, for the shipped model scenarios and small copies of them


def one_node(name, hf_config, tp, *, layers=2, dp=1, global_batch=1):
    """A model scenario on one node of dp x tp H100s (the node cut to that many GPUs), as
    tests/python/llama3-8b-2layer-tp8.yaml is for tp 8: Llama cut to `layers` layers, one
    8192-token sequence per replica, trained with Adam."""
    return {"version": 2, "name": name,
            "cluster": {"base": "clusters/dgx-h100.yaml", "nodes": 1, "gpus_per_node": dp * tp},
            "mesh": {"shape": [dp, tp], "names": ["dp", "tp"]}, "dtype": "bf16",
            "cost_model": "analytic",
            "model": {"hf_config": f"models/{hf_config}.json", "layers": layers, "seq": 8192,
                      "global_batch": global_batch},
            "training": {"optimizer": "adam"}}


def pipeline_copy(layers):
    """scenarios/llama3-8b-pipeline.yaml (pp 2 x dp 2 x tp 4) cut to `layers` layers."""
    return {"version": 2, "name": f"llama3-8b-pipeline-{layers}l",
            "cluster": {"base": "clusters/dgx-h100.yaml", "nodes": 2},
            "mesh": {"shape": [2, 2, 4], "names": ["pp", "dp", "tp"]}, "dtype": "bf16",
            "cost_model": "analytic",
            "model": {"hf_config": "models/llama3.1-8b.json", "layers": layers, "seq": 8192,
                      "global_batch": 16, "micro_batch": 1},
            "training": {"optimizer": "adam"}}


@dataclass
class Case:
    name: str
    scenario: object  # a path under the source tree, or a scenario dict
    about: str  # where the scenario comes from
    apply: str = "source"  # "source": torch_plan_source's apply_tp; "json": torch_plan's dict


def cases(source_dir):
    """Every plan the full check runs, in the order of the table."""
    def path(p):
        return f"{source_dir}/{p}"
    return [
        Case("llama3-8b-2layer-tp8", path("tests/python/llama3-8b-2layer-tp8.yaml"),
             "test scenario: Megatron + sequence parallelism, table whole"),
        Case("llama3-8b-train", path("scenarios/llama3-8b-train.yaml"),
             "shipped, dp 2 x tp 8, 32 layers"),
        Case("llama3-8b-pipeline", path("scenarios/llama3-8b-pipeline.yaml"),
             "shipped, pp 2 x dp 2 x tp 4: whole weights on token rows", apply="json"),
        Case("llama3-8b-pipeline-4l", pipeline_copy(4),
             "the pipeline scenario cut to 4 layers (both block plans)"),
        Case("llama3-8b-2layer-tp4", one_node("llama3-8b-2layer-tp4", "llama3.1-8b", 4),
             "the test scenario at tp 4"),
        Case("llama3-8b-2layer-tp2", one_node("llama3-8b-2layer-tp2", "llama3.1-8b", 2),
             "the test scenario at tp 2"),
        Case("llama3.2-1b-2layer-tp2", one_node("llama3.2-1b-2layer-tp2", "llama3.2-1b", 2),
             "Llama 3.2 1B at tp 2: table split by vocabulary"),
        Case("llama3.1-70b-2layer-tp8", one_node("llama3.1-70b-2layer-tp8", "llama3.1-70b", 8),
             "70B's shapes at tp 8 (its shipped scenario is folded, not planned op by op)"),
        Case("llama3.1-70b-2layer-tp4", one_node("llama3.1-70b-2layer-tp4", "llama3.1-70b", 4),
             "70B's shapes at tp 4, the tp its layouts answer picks"),
        Case("llama3.1-405b-2layer-tp8",
             one_node("llama3.1-405b-2layer-tp8", "llama3.1-405b", 8),
             "405B's shapes at tp 8 (its shipped scenario is folded, not planned op by op)"),
        Case("llama3-8b-2layer-dp4-tp2",
             one_node("llama3-8b-2layer-dp4-tp2", "llama3.1-8b", 2, dp=4, global_batch=4),
             "dp 4 x tp 2 on one node: the planner splits features over dp too"),
        # The shipped scenarios/training/llama3-{70b,405b}-train.yaml declare pipelined
        # meshes of 1,024 and 16,384 GPUs, which simulate folds and the op planner does not
        # plan: their shapes are the 2-layer copies above.
    ]


def case_plan(symmesh, case):
    """(plan dict, source text or None, tiny ModelArgs) for a case. From the JSON the tiny
    model has one block per different block plan (at least 2), so every block plan runs;
    from the source, as many blocks as the source names when its blocks differ."""
    plan = symmesh.torch_plan(case.scenario)
    n = max(2, len(distinct_layer_plans(plan)))
    source = None
    if case.apply == "source":
        if not uniform_layers(plan):
            # Its source names every block by path: the tiny model has them all.
            if len(plan["layers"]) > 8:
                raise PlanError(f"{case.name}: its source names {len(plan['layers'])} "
                                "different blocks; apply its JSON instead")
            n = len(plan["layers"])
        source = symmesh.torch_plan_source(case.scenario)
    model = symmesh.load_scenario(case.scenario).model
    return plan, source, torch_llama.tiny_args(model, plan["tp_size"], layers=n)
