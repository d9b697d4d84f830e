"""symmesh from Python: load scenarios, plan one matmul, simulate and sweep a scenario,
search a model's training layouts, turn a model scenario's layout (its own mesh's, or one
`layouts` chose) into PyTorch's parallelize_module plan, and write one-sided programs in
torch.distributed._symmetric_memory's terms (symmesh.symm_mem).

Every function runs symmesh's C++ library in this process (the compiled module _symmesh),
with the same checks and messages as the CLI, and returns plain Python data: the JSON the
CLI prints (`symmesh plan --json`, `symmesh simulate --json`, a sweep's results.json,
`symmesh layouts --json`) as dicts, lists, floats and strings.

Errors are exceptions whose str() is the text the CLI prints after "symmesh: error: ",
e.g. "scenario.yaml:4:7: unknown key 'meshh' - did you mean 'mesh'?"; each also has
.message, .where (a file:line:col, an argument or a file) and .rank (None or an int):

    Error                      every symmesh error
      ScenarioError            bad input (also a ValueError); the CLI exits 2
        DoesNotFitError        a step that needs more than the GPU's memory
      UnsupportedError         well-formed but not supported (also a ValueError); exit 2
      UnavailableError         cannot run here, e.g. a backend not built (a RuntimeError)
      SimulationError          a failed run: timeout, backend failure (a RuntimeError)
"""

import json as _json
import math as _math
import operator as _operator
import os as _os
import re as _re

# The simulator is a module the library opens when it first simulates
# (evaluation/backends.cpp): $SYMMESH_SIM_MODULE, else next to the executable (python3's
# folder here), else the build folder compiled in. One beside this package wins over the
# compiled-in folder, so a copied package finds its own.
_here = _os.path.dirname(_os.path.abspath(__file__))
if not _os.environ.get("SYMMESH_SIM_MODULE") and _os.path.exists(
        _os.path.join(_here, "libsymmesh_sim.so")):
    _os.environ["SYMMESH_SIM_MODULE"] = _os.path.join(_here, "libsymmesh_sim.so")

from . import _symmesh  # noqa: E402
from ._symmesh import (  # noqa: E402,F401
    DoesNotFitError, Error, Scenario, ScenarioError, SimulationError, UnavailableError,
    UnsupportedError)

__all__ = [
    "Scenario", "load_scenario", "scenario_text", "plan", "simulate", "sweep", "layouts",
    "torch_plan", "torch_plan_source", "Error", "ScenarioError", "DoesNotFitError",
    "UnsupportedError", "UnavailableError", "SimulationError", "SHIPPED_SCENARIOS_DIR",
    "symm_mem",
]

from . import symm_mem  # noqa: E402  (pure Python over _symmesh; needs no torch)

# The scenarios/ folder of the source tree: relative cluster and model paths fall back to it.
SHIPPED_SCENARIOS_DIR = _symmesh.shipped_scenarios_dir


def scenario_text(data):
    """The YAML text a scenario dict is loaded from: JSON, which is YAML, one key a line,
    so that an error's line:col points at the key or value at fault."""
    return _json.dumps(data, indent=2, allow_nan=False) + "\n"


def _non_finite(data, path=""):
    """The key path of the first NaN or infinity in `data`, in the order json.dumps writes
    it ("workload[0].bytes"), or None."""
    if isinstance(data, float) and not _math.isfinite(data):
        return path
    if isinstance(data, dict):
        items = ((f"{path}.{k}" if path else str(k), v) for k, v in data.items())
    elif isinstance(data, (list, tuple)):
        items = ((f"{path}[{i}]", v) for i, v in enumerate(data))
    else:
        return None
    for where, value in items:
        found = _non_finite(value, where)
        if found is not None:
            return found
    return None


def _first_bare_token(text, tokens):
    """The 1-based (line, column) of the first of `tokens` outside a JSON string."""
    line, column, in_string, escaped = 1, 1, False, False
    for i, c in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
        elif any(text.startswith(t, i) for t in tokens):
            return line, column
        line, column = (line + 1, 1) if c == "\n" else (line, column + 1)
    return 1, 1


def _dict_text(data, file):
    """scenario_text(data), or ScenarioError (with .where, as the loader's) at the first
    NaN or infinity: JSON has none, and no scenario value may be one."""
    path = _non_finite(data)
    if path is None:
        return scenario_text(data)
    text = _json.dumps(data, indent=2, allow_nan=True)
    line, column = _first_bare_token(text, ("NaN", "Infinity", "-Infinity"))
    raise _error(ScenarioError, f"{path}: expected a finite number, got "
                 f"{_non_finite_value(data, path)}", f"{file}:{line}:{column}")


def _non_finite_value(data, path):
    """The value at the path _non_finite found, as Python writes it (nan, inf, -inf)."""
    for part in _re.findall(r"[^.\[\]]+|\[\d+\]", path):
        data = data[int(part[1:-1])] if part.startswith("[") else data[part]
    return repr(data)


def _path_text(source):
    """A file path as the library takes it (UTF-8 text); ScenarioError for one whose bytes
    are not UTF-8 (os.fsdecode would carry them as surrogates no message can print)."""
    path = _os.fsdecode(source)
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        raise _error(ScenarioError, "the path is not valid UTF-8 text; symmesh names its "
                     "files in messages and outputs as UTF-8: rename the file",
                     repr(_os.fsencode(source))) from None
    return path


def load_scenario(source, name=None):
    """A validated Scenario from a file path (str or os.PathLike) or a dict holding what the
    file would (version, name, cluster, mesh, workload, ...).

    A dict's errors name `name` (default "<dict>") and the line:col of scenario_text(source);
    its relative cluster/model paths are looked up under the current folder, then under the
    shipped scenarios folder, as a file's are under its own folder. Raises ScenarioError.
    """
    if isinstance(source, Scenario):
        return source
    if isinstance(source, dict):
        file = name or "<dict>"
        return _symmesh.load_scenario_text(_dict_text(source, file), file)
    if isinstance(source, (str, bytes, _os.PathLike)):
        return _symmesh.load_scenario_file(_path_text(source))
    raise TypeError("load_scenario takes a file path, a dict or a Scenario, not "
                    + type(source).__name__)


def _error(cls, message, where):
    """An error raised here, shaped as the library's are: str() 'where: message'."""
    e = cls(f"{where}: {message}")
    e.message, e.where, e.rank = message, where, None
    return e


def _dim_text(d):
    """A dim as plan's text takes it: a whole number (64, 64.0, a numpy integer) as such;
    anything else (nan, inf, 1.5) as written, which the library refuses naming the option
    (--a: shape '64xnan' is not of the form 64x32), as the CLI does."""
    if isinstance(d, float):
        return str(int(d)) if d.is_integer() else str(d)
    try:
        return str(_operator.index(d))
    except TypeError:
        return str(d)


def _shape(shape):
    if shape is None:
        return ""
    if isinstance(shape, str):
        return shape
    return "x".join(_dim_text(d) for d in shape)


def _placements(p):
    if p is None:
        return ""
    if isinstance(p, str):
        return p
    return ",".join(p)


def plan(op, a, b, mesh, inputs, *, bias=None, bias_in=None, out=None, dtype="fp32",
         cluster=None, gpus_per_host=None, cost_model="dtensor", rerank=4, fuse=True,
         placement_search="full-expansion"):
    """Plans one mm/bmm/addmm/baddbmm/linear as `symmesh plan --json` does and returns that
    JSON as a dict (strategy, cost_us, redistributions, candidates, ...).

    Shapes and the mesh are "64x32" or (64, 32); inputs is the placements of a and b, each
    "S(0),R", ("S(0)", "R") or "auto"; out is --out-in; cluster a cluster file (needed by
    the analytic and simulated cost models). Raises ScenarioError naming the option.
    """
    if isinstance(inputs, str) or len(inputs) != 2:
        raise _error(ScenarioError, "expected the placements of a and b, e.g. "
                     "['S(0),R', 'R,R']", "--in")
    text = _symmesh.plan_json(
        op=op, a=_shape(a), b=_shape(b), mesh=_shape(mesh),
        inputs=[_placements(p) for p in inputs], bias=_shape(bias),
        bias_in=_placements(bias_in), out_in=_placements(out), dtype=dtype,
        gpus_per_host=gpus_per_host, cluster=_path_text(cluster) if cluster else "",
        rerank=rerank, cost_model=cost_model, fuse=fuse, placement_search=placement_search)
    return _json.loads(text)


def simulate(scenario, *, emulate=False, time_limit_s=0.0, fuse=True, folded=False,
             fold_replicas=False):
    """Plans and simulates a scenario (a path, dict or Scenario) as `symmesh simulate --json`
    does and returns that report as a dict (total_time_s, ops, ...). A model's step on more
    than 256 GPUs (or any, with fold_replicas=True) is simulated with its data-parallel
    replicas folded into one: one replica's ranks run op by op, the report is the same
    ("folded_replicas" and "simulated_ranks" say so). folded=True simulates the closed
    form's step instead (one replica and one stage's data-parallel rings), and the dict is
    `symmesh layouts --json`'s for that one layout (sizes[0]["best"][0], with its
    "simulated" step)."""
    s = load_scenario(scenario)
    return _json.loads(_symmesh.simulate_json(s, emulate, float(time_limit_s), fuse,
                                              bool(folded), bool(fold_replicas)))


def sweep(scenario, *, jobs=1, time_limit_s=0.0, fuse=True):
    """Evaluates the scenario over its `sweep:` (node counts x mesh shapes) as `symmesh
    sweep` does, without an output folder, and returns what it writes to results.json
    (per point its report or skip reason, and the answer). jobs: points at once (0: one per
    core); time_limit_s: per point."""
    s = load_scenario(scenario)
    return _json.loads(_symmesh.sweep_json(s, int(jobs), float(time_limit_s), fuse))


def _whole_numbers(values, keyword):
    """A keyword's list of whole numbers (one number alone is a list of one)."""
    if values is None:
        return []
    if isinstance(values, int) and not isinstance(values, bool):
        return [values]
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        raise TypeError(f"{keyword} takes a whole number or a list of them, not "
                        + type(values).__name__)
    values = list(values)
    for v in values:
        if isinstance(v, bool) or not isinstance(v, int):
            raise TypeError(f"{keyword} takes whole numbers, not {v!r}")
    return values


def layouts(scenario, gpus=None, top=1, simulate=0, tp=None, pp=None, micro_batch=None,
            virtual_stages=None, recompute=None, zero=None):
    """Prices a model scenario's whole training step for every parallel layout at each GPU
    count, as `symmesh layouts FILE --json` does, and returns that JSON as a dict:
    {"scenario", "model", "parameters", "global_batch", "seq", "wall_s", "sizes": [per GPU
    count {"gpus", "best": [the fastest `top` layouts, each {"tp", "pp", "dp", "micro_batch",
    "virtual_stages", "recompute", "zero_stage", "step_s", "mfu", ...}], ...}],
    "answer_gpus"}.

    gpus: the GPU counts (default: the sweep's node counts x GPUs per node, else the
    scenario's own); simulate: also simulate the best K of each count (each then has a
    "simulated" entry). tp, pp, micro_batch, virtual_stages, recompute ("none"/"full") and
    zero: the values to try, each a value or a list, replacing what the scenario says for
    that dimension (--tp, --pp, ...). Raises ScenarioError when no layout can be priced,
    with the reasons."""
    s = load_scenario(scenario)
    if isinstance(recompute, str):
        recompute = [recompute]
    recomputes = [] if recompute is None else list(recompute)
    for how in recomputes:
        if not isinstance(how, str):
            raise TypeError(f"recompute takes 'none' or 'full' (or a list of them), not {how!r}")
    for name, value in (("top", top), ("simulate", simulate)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"{name} takes a whole number, not {value!r}")
    return _json.loads(_symmesh.layouts_json(
        s, gpus=_whole_numbers(gpus, "gpus"), top=top, simulate=simulate,
        tp=_whole_numbers(tp, "tp"), pp=_whole_numbers(pp, "pp"),
        micro_batch=_whole_numbers(micro_batch, "micro_batch"),
        virtual_stages=_whole_numbers(virtual_stages, "virtual_stages"),
        recompute=recomputes, zero=_whole_numbers(zero, "zero")))


# A layout as torch_plan takes it: these keys (tp, pp and dp required), and the figures
# of a `layouts` entry beside them, which it ignores.
_LAYOUT_KEYS = ("tp", "pp", "dp", "micro_batch", "virtual_stages", "recompute", "zero_stage")
_LAYOUT_RESULT_KEYS = frozenset((
    "micro_batches", "step_s", "tokens_per_s", "tokens_per_s_per_gpu", "mfu",
    "bubble_fraction", "bubble_s", "exposed_comm_s", "dp_comm_s", "dp_exposed_s",
    "optimizer_s", "memory_bytes", "simulated"))


def _layout_keywords(layout):
    """torch_plan's `layout` as the compiled module's keywords (empty for None)."""
    if layout is None:
        return {}
    if not isinstance(layout, dict):
        raise TypeError("layout takes a dict (an entry of layouts()['sizes'][i]['best']), not "
                        + type(layout).__name__)
    unknown = sorted(str(k) for k in layout
                     if k not in _LAYOUT_KEYS and k not in _LAYOUT_RESULT_KEYS)
    if unknown:
        raise _error(ScenarioError, f"unknown key '{unknown[0]}': a layout has "
                     + ", ".join(_LAYOUT_KEYS), "layout")
    missing = [k for k in ("tp", "pp", "dp") if k not in layout]
    if missing:
        raise _error(ScenarioError, f"a layout needs tp, pp and dp; {missing[0]} is missing",
                     "layout")
    keywords = {}
    for key in _LAYOUT_KEYS:
        if key not in layout:
            continue
        value = layout[key]
        if key == "recompute":
            if value not in ("none", "full"):
                raise _error(ScenarioError, f"recompute is 'none' or 'full', got {value!r}",
                             "layout")
        elif isinstance(value, bool) or not isinstance(value, int):
            raise _error(ScenarioError, f"{key} must be a whole number, got {value!r}",
                         "layout")
        keywords[key] = value
    return keywords


def torch_plan(scenario, layout=None):
    """The PyTorch tensor-parallel plan of a model scenario's layout (its `tp` mesh dim), in
    torchtitan's Llama module names:

        {"tp_size": 8,
         "model": {"tok_embeddings": {"style": "RowwiseParallel",
                                      "kwargs": {"input_layouts": "Replicate()", ...}}, ...},
         "layers": [{"attention.wq": {"style": "ColwiseParallel", "kwargs": {}}, ...}, ...],
         "replicated": [modules left whole on every tp rank],
         "notes": [choices no ParallelStyle expresses: torch cannot run the plan as written],
         "other_dims": [what the planner splits over dp other than as data parallelism]}

    kwargs values are Python source ("Shard(1)", "(Shard(1), None)", "False"). A module that
    takes two styles (SequenceParallel behind a PrepareModuleInput/Output) has the second as
    its entry's "then", applied by a second parallelize_module call after the first.
    evaluation/torch_parallel_plan.hpp says how placements map to styles;
    docs/torch-plan-check.md how the plans are run by real DTensor.

    The layout is the scenario file's mesh, or `layout`: a dict of tp, pp and dp (and
    optionally micro_batch, virtual_stages, recompute, zero_stage; else the scenario's),
    such as an entry of layouts(): torch_plan(s, layout=layouts(s)["sizes"][0]["best"][0])
    plans the step on a [pp, dp, tp] mesh ([dp, tp] when pp is 1) on as many of the
    scenario's nodes as it fills. A layout that cannot be planned (ZeRO-3, GPUs that fill
    no whole number of nodes, tp not dividing the heads, ...) raises ScenarioError."""
    return _json.loads(_symmesh.torch_plan_json(load_scenario(scenario),
                                                **_layout_keywords(layout)))


def torch_plan_source(scenario, layout=None):
    """The Python source of `def apply_tp(model, tp_mesh)`, which applies torch_plan's plan
    (of the same `layout`) with torch.distributed.tensor.parallel.parallelize_module, as
    torchtitan's apply_tp."""
    return _symmesh.torch_plan_python(load_scenario(scenario), **_layout_keywords(layout))
