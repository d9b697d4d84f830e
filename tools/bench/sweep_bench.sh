#!/usr/bin/env bash
# Wall time of `symmesh sweep` on a realistic capacity question: the GEMMs of one Llama 3
# 405B layer (scenarios/version1-by-hand/llama3-405b-layer-tp.yaml) swept over 1-64 nodes of 8 GPUs, every
# 2-D mesh (mesh: auto: 4+5+6+7+8+9+10 = 49 points), once per --jobs setting.
#
#   tools/bench/sweep_bench.sh [--symmesh PATH] [--nodes "1 2 4 8 16 32 64"] [--jobs "1 2"]
#                              [--cost-model NAME] [--scenario FILE] [--keep DIR]
#
# Prints one row per run: jobs, points (simulated / skipped), wall time, seconds per point,
# the peak resident memory of the largest process (the sweep or one of its forked
# simulations; GNU time's %M) and of the sweep process alone (its VmHWM, sampled every
# 0.2 s until it exits); then the sweep's answer. --cost-model overrides the
# scenario's (e.g. dtensor where analytic is not built). Simulation cost grows with the
# ranks in a collective: the meshes with one long dim (1x512) dominate the wall time.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
symmesh="$root/build/symmesh"
scenario="$root/scenarios/version1-by-hand/llama3-405b-layer-tp.yaml"
nodes="1 2 4 8 16 32 64"
jobs_list="1 $(nproc 2>/dev/null || echo 2)"
cost_model=""
keep=""
while [ $# -gt 0 ]; do
  case "$1" in
    --symmesh) symmesh="$(realpath "$2")"; shift 2 ;;
    --nodes) nodes="$2"; shift 2 ;;
    --jobs) jobs_list="$2"; shift 2 ;;
    --cost-model) cost_model="$2"; shift 2 ;;
    --scenario) scenario="$(realpath "$2")"; shift 2 ;;
    --keep) keep="$(realpath -m "$2")"; shift 2 ;;
    *) echo "sweep_bench: unknown argument '$1' (see the comment at the top)" >&2; exit 2 ;;
  esac
done
[ -x "$symmesh" ] || { echo "sweep_bench: no symmesh at $symmesh (build it, or pass --symmesh)" >&2; exit 2; }

work="$(mktemp -d /tmp/symmesh_sweep_bench.XXXXXX)"
trap 'rm -rf "$work"' EXIT
# The scenario with our sweep: its own `sweep:` block dropped, the node list replaced.
copy="$work/$(basename "$scenario")"
awk -v nodes="[${nodes// /, }]" -v model="$cost_model" '
  /^sweep:/ { skipping = 1; next }
  skipping && /^[ \t]/ { next }
  { skipping = 0 }
  model != "" && /^cost_model:/ { print "cost_model: " model; next }
  { print }
  END { print "sweep: {nodes: " nodes ", mesh: auto}" }
' "$scenario" >"$copy"
# Relative cluster paths resolve against the shipped scenarios folder as well.

timer=()
if [ -x /usr/bin/time ]; then timer=(/usr/bin/time -f "%e %M" -o "$work/time"); fi

echo "symmesh sweep benchmark: $(basename "$scenario"), nodes ${nodes// /,}, mesh auto$([ -n "$cost_model" ] && echo ", cost model $cost_model"), $(nproc 2>/dev/null || echo '?') cores"
printf '%5s  %6s  %9s  %7s  %9s  %11s  %13s  %15s\n' jobs points simulated skipped "wall (s)" "s per point" "peak RSS (MB)" "sweep proc (MB)"
answer=""
for jobs in $jobs_list; do
  out="$work/out-$jobs"
  start=$(date +%s.%N)
  "${timer[@]}" "$symmesh" sweep "$copy" --out "$out" --jobs "$jobs" >"$work/stdout" 2>"$work/stderr" &
  runner=$!
  sweep_hwm_kb=0
  while kill -0 "$runner" 2>/dev/null; do
    # The sweep process: the runner itself, or its child when GNU time runs it.
    pid=$(pgrep -P "$runner" -x symmesh || echo "$runner")
    kb=$(awk '/^VmHWM:/ { print $2 }' "/proc/$pid/status" 2>/dev/null || true)
    [ -n "$kb" ] && [ "$kb" -gt "$sweep_hwm_kb" ] && sweep_hwm_kb=$kb
    sleep 0.2
  done
  if ! wait "$runner"; then
    echo "sweep_bench: symmesh sweep failed (jobs $jobs):" >&2
    cat "$work/stderr" >&2
    exit 1
  fi
  end=$(date +%s.%N)
  wall=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')
  simulated=$(grep -c '"status": "ok"' "$out/results.json" || true)
  skipped=$(grep -c '"status": "skipped"' "$out/results.json" || true)
  points=$((simulated + skipped))
  rss="-"
  [ -f "$work/time" ] && rss=$(awk '{ printf "%.0f", $2 / 1024 }' "$work/time")
  per_point=$(awk -v w="$wall" -v p="$points" 'BEGIN { printf "%.2f", p ? w / p : 0 }')
  printf '%5s  %6s  %9s  %7s  %9s  %11s  %13s  %15s\n' "$jobs" "$points" "$simulated" "$skipped" "$wall" \
    "$per_point" "$rss" "$((sweep_hwm_kb / 1024))"
  answer="$(head -2 "$work/stdout")"
  [ -n "$keep" ] && { rm -rf "$keep"; cp -r "$out" "$keep"; }
done
echo "$answer"
