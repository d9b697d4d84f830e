#!/usr/bin/env bash
# The two engines on the same layouts: for each tp and ZeRO stage asked, a model scenario's
# step at that layout priced by the closed form (`symmesh layouts`, strategies/
# training_step_estimate.hpp) and planned by the dataflow planner, simulated and priced
# through its schedule (`symmesh simulate --json`: total_time_s and step.priced_step_s).
# The planner's two readings are one planned step; the closed form is the second model
# that `layouts` still searches with (issue "One engine for whole training steps"): where
# it and the planned step part, this table says by how much.
#
#   tools/bench/engines_bench.sh [--symmesh PATH] [--scenario FILE] [--tp "4 8"]
#                                [--zero "0 1 3"]
#
# The scenario (default scenarios/llama3-8b-train.yaml) gives the model, the cluster and the
# global batch; each row takes its whole cluster as [dp, tp], pp 1, one micro-batch of
# global_batch / dp sequences per replica (as the planner takes it when the model gives
# none), recomputation none.
# Prints one row per layout: the closed form, the simulated and priced planned step (ms),
# the closed form's and the price's difference from the simulated step, and the seconds
# the planner took.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
symmesh="$root/build/symmesh"
scenario="$root/scenarios/llama3-8b-train.yaml"
tps="4 8"
zeros="0 1 3"
while [ $# -gt 0 ]; do
  case "$1" in
    --symmesh) symmesh="$(realpath "$2")"; shift 2 ;;
    --scenario) scenario="$(realpath "$2")"; shift 2 ;;
    --tp) tps="$2"; shift 2 ;;
    --zero) zeros="$2"; shift 2 ;;
    *) echo "engines_bench: unknown argument '$1' (see the comment at the top)" >&2; exit 2 ;;
  esac
done
[ -x "$symmesh" ] || { echo "engines_bench: no symmesh at $symmesh (build it, or pass --symmesh)" >&2; exit 2; }

# The scenario's relative paths (cluster base, hf_config) resolve beside it: the copies live
# there, removed on exit.
dir="$(dirname "$scenario")"
copy="$(mktemp "$dir/.engines_bench.XXXXXX.yaml")"
trap 'rm -f "$copy"' EXIT

printf '%-32s %12s %14s %12s %10s %8s %10s\n' layout "closed (ms)" "simulated (ms)" "priced (ms)" closed "priced" "plan (s)"
for tp in $tps; do
  for zero in $zeros; do
    micro_batch=$(python3 - "$scenario" "$copy" "$tp" "$zero" <<'EOF'
import re, sys
src, dst, tp, zero = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
text = open(src).read()
text = re.sub(r"(?ms)^sweep:.*?(?=^\S|\Z)", "", text)      # no sweep
text = re.sub(r"(?m)^objective:.*\n", "", text)
nodes = int(re.search(r"nodes:\s*(\d+)", text).group(1))
gpus = nodes * 8
dp = gpus // tp
text = re.sub(r"(?m)^mesh:.*$", f"mesh: {{shape: [{dp}, {tp}], names: [dp, tp]}}", text)
text = re.sub(r"(?m)^training:.*$", f"training: {{optimizer: adam, zero: {zero}}}", text)
open(dst, "w").write(text)
batch = int(re.search(r"global_batch:\s*(\d+)", text).group(1))
print(max(1, batch // dp))
EOF
)
    closed=$("$symmesh" layouts "$copy" --json --recompute none --virtual-stages 1 --zero "$zero" \
      --micro-batch "$micro_batch" 2>/dev/null |
      python3 -c 'import json,sys; d=json.load(sys.stdin); b=d["sizes"][0]["best"]; print(b[0]["step_s"] if b else "nan")')
    start=$(date +%s.%N)
    read -r simulated priced < <("$symmesh" simulate --json "$copy" 2>/dev/null |
      python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["total_time_s"], d["step"]["priced_step_s"])')
    took=$(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$start" "$(date +%s.%N)")
    python3 - "$tp" "$zero" "$closed" "$simulated" "$priced" "$took" <<'EOF'
import sys
tp, zero, closed, sim, priced, took = sys.argv[1:]
closed, sim, priced = float(closed), float(sim), float(priced)
print(f"{'tp ' + tp + ' zero ' + zero:<32} {closed*1e3:12.1f} {sim*1e3:14.1f} {priced*1e3:12.1f} "
      f"{closed/sim-1:+10.1%} {priced/sim-1:+8.1%} {took:>10}")
EOF
  done
done
