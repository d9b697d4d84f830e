#!/usr/bin/env bash
# The CMake package, end to end, from a built build folder:
#   tests/package/run.sh BUILD_DIR
# installs BUILD_DIR to a temporary prefix, moves the tree elsewhere, then checks that the
# moved symmesh finds its shipped scenarios and clusters and its simulation module in the
# moved tree (not in the source or build tree), and that tests/package/consumer builds
# against it with find_package(symmesh) and loads a shipped scenario. The installed headers
# are namespaced: the consumer includes <symmesh/core/placement.hpp> (and every installed
# header, in one translation unit), and "core/placement.hpp" must not compile through the
# package (the exported include directory is <prefix>/include). Expected values come
# from the YAML files themselves (grep) and the hand computation in scenarios/pingpong.yaml.
# CTest runs it as package.install_move_consume; CI as its own section (.ci/run).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
[ $# -eq 1 ] || { echo "usage: tests/package/run.sh BUILD_DIR" >&2; exit 2; }
build="$(realpath "$1")"
[ -f "$build/CMakeCache.txt" ] || { echo "tests/package/run.sh: $build is not a configured build folder" >&2; exit 2; }
work="$(mktemp -d /tmp/symmesh_package_XXXXXX)"
trap 'rm -rf "$work"' EXIT
unset SYMMESH_SCENARIOS_DIR SYMMESH_SIM_MODULE SYMMESH_HW_MODULE
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
expect_in() {  # expect_in WHAT NEEDLE HAYSTACK
  if ! grep -qF -- "$2" <<<"$3"; then fail "$1: expected '$2' in:"; echo "$3" >&2; fi
}

echo "-- install $build to a temporary prefix, then move it"
cmake --install "$build" --prefix "$work/prefix" >"$work/install.log"
mv "$work/prefix" "$work/moved"
prefix="$work/moved"
exe="$prefix/bin/symmesh"
shipped="$prefix/share/symmesh/scenarios"
for f in bin/symmesh lib/symmesh/libsymmesh_sim.so share/symmesh/scenarios/quickstart.yaml \
    share/symmesh/scenarios/clusters/dgx-h100.yaml include/symmesh/core/placement.hpp \
    include/symmesh/scenario/scenario_loader.hpp include/symmesh/strategies/plan.hpp \
    include/symmesh/sim/sim_backend.hpp include/symmesh/evaluation/scenario_evaluation.hpp \
    lib/cmake/symmesh/symmeshConfig.cmake \
    lib/cmake/symmesh/symmeshConfigVersion.cmake lib/libsymmesh_core.a; do
  [ -e "$prefix/$f" ] || fail "the install tree has no $f"
done

# reports/ (the report writers) is installed too once the source tree has it.
if [ -n "$(find "$here/../../reports" -name '*.hpp' 2>/dev/null | head -1)" ] \
    && [ ! -d "$prefix/include/symmesh/reports" ]; then
  fail "the source tree has reports/*.hpp, the install tree no include/symmesh/reports"
fi
# The headers' includes of each other were rewritten on install ("core/x.hpp" ->
# <symmesh/core/x.hpp>): a quoted include left would not resolve for a consumer.
if left="$(grep -rnE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$prefix/include/symmesh")"; then
  fail "installed headers still include repository-relative paths:"; echo "$left" >&2
fi
grep -qF '#include <symmesh/core/backend.hpp>' "$prefix/include/symmesh/evaluation/scenario_evaluation.hpp" \
  || fail "include/symmesh/evaluation/scenario_evaluation.hpp does not include <symmesh/core/backend.hpp>"
# Written by a script, the headers still belong in the install manifest (uninstalling, packaging).
grep -qxF "$work/prefix/include/symmesh/core/placement.hpp" "$build/install_manifest.txt" \
  || fail "install_manifest.txt does not list include/symmesh/core/placement.hpp"
# The exported include directory is <prefix>/include, not <prefix>/include/symmesh.
if grep -n 'INTERFACE_INCLUDE_DIRECTORIES.*include/symmesh' "$prefix"/lib/cmake/symmesh/symmeshTargets.cmake >&2; then
  fail "the package exports include/symmesh as an include directory"
fi

# Every library the installed modules need resolves (ldd says "not found" otherwise): the
# hardware module's CUDA and NCCL are outside the system folders.
for module in "$prefix"/lib/symmesh/*.so; do
  if ldd "$module" | grep -q "not found"; then fail "$module: $(ldd "$module" | grep "not found")"; fi
done

echo "-- the moved symmesh: shipped clusters by bare name, from the moved tree"
# A cluster that exists only in the moved tree: found there or nowhere.
cat >"$shipped/clusters/only-installed.yaml" <<'YAML'
base: dgx-h100.yaml
name: only-installed
gpus_per_node: 4
YAML
mkdir -p "$work/elsewhere"
# scenarios/pingpong.yaml with its cluster named bare (no clusters/ folder, no file beside it).
sed 's|^cluster: .*|cluster: dgx-h100.yaml|' "$shipped/pingpong.yaml" >"$work/elsewhere/ping.yaml"
sed -e 's|^cluster: .*|cluster: only-installed.yaml|' -e 's|shape: \[8\]|shape: [4]|' \
  "$shipped/pingpong.yaml" >"$work/elsewhere/ping4.yaml"
out="$("$exe" validate "$shipped/quickstart.yaml" "$work/elsewhere/ping.yaml" "$work/elsewhere/ping4.yaml" 2>&1)" \
  || fail "symmesh validate exited $?: $out"
# LD_DEBUG=files (glibc) names every object dlopen maps: the module must be the moved one.
out="$(LD_DEBUG=files "$exe" simulate "$work/elsewhere/ping.yaml" 2>&1)" || fail "simulate exited $?: $out"
# pingpong.yaml's hand computation: 2 x (1 us + 1,048,576 B / 450 GB/s) = 2 x 3.330 us = 6.660 us
# (simulate prints the total in the unit of its table: us below 1 ms).
expect_in "simulate ping.yaml" "total: 6.660 us" "$out"
expect_in "simulate ping.yaml" "on 1 node x 8 H100-SXM" "$out"
expect_in "the simulation module loaded" "file=$prefix/lib/symmesh/libsymmesh_sim.so" "$out"
out="$("$exe" simulate "$work/elsewhere/ping4.yaml" 2>&1)" || fail "simulate ping4.yaml exited $?: $out"
expect_in "simulate ping4.yaml (only-installed.yaml: 4 GPUs a node)" "on 1 node x 4 H100-SXM" "$out"
# A cluster that is nowhere: exit 2, and the message names the moved tree's folders.
sed 's|^cluster: .*|cluster: no-such-cluster.yaml|' "$shipped/pingpong.yaml" >"$work/elsewhere/bad.yaml"
set +e
out="$("$exe" validate "$work/elsewhere/bad.yaml" 2>&1)"
rc=$?
set -e
[ "$rc" = 2 ] || fail "validate of a missing cluster exited $rc, not 2: $out"
expect_in "the missing cluster's message" "$shipped/clusters/no-such-cluster.yaml" "$out"

echo "-- tests/package/consumer: find_package(symmesh) against the moved tree"
cache() { sed -n "s/^$1:[A-Z]*=//p" "$build/CMakeCache.txt"; }
cmake -S "$here/consumer" -B "$work/consumer-build" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER="$(cache CMAKE_CXX_COMPILER)" \
  -DCMAKE_CXX_COMPILER_LAUNCHER="$(cache CMAKE_CXX_COMPILER_LAUNCHER)" >"$work/consumer.log" 2>&1 \
  || { cat "$work/consumer.log" >&2; fail "the consumer did not configure"; exit 1; }
cmake --build "$work/consumer-build" >>"$work/consumer.log" 2>&1 \
  || { cat "$work/consumer.log" >&2; fail "the consumer did not build"; exit 1; }
out="$("$work/consumer-build/consumer")" || fail "the consumer exited $?: $out"
echo "$out"
# What it must print, read from the shipped YAML with grep, not through symmesh.
quickstart="$shipped/quickstart.yaml"
cluster_file="$shipped/$(sed -n 's/^cluster: //p' "$quickstart")"
expect_in consumer "scenario=$(sed -n 's/^name: //p' "$quickstart")" "$out"
expect_in consumer "cluster=$(sed -n 's/^name: //p' "$cluster_file")" "$out"
expect_in consumer "gpus_per_node=$(sed -n 's/^gpus_per_node: //p' "$cluster_file")" "$out"
expect_in consumer "gpu=$(sed -n 's/^  name: //p' "$cluster_file" | head -1)" "$out"
expect_in consumer "workload_ops=$(grep -c '^  - {name:' "$quickstart")" "$out"
expect_in consumer "cost_model=$(sed -n 's/^cost_model: //p' "$quickstart")" "$out"
expect_in consumer "placements=S(0),R" "$out"
expect_in consumer "command=$prefix/bin/symmesh" "$out"

echo "-- the old include style, #include \"core/placement.hpp\", does not compile through the package"
set +e
cmake --build "$work/consumer-build" --target old_include_style >"$work/old_include.log" 2>&1
rc=$?
set -e
if [ "$rc" = 0 ]; then
  fail "old_include_style.cpp (#include \"core/placement.hpp\") compiled against the package"
elif ! grep -qE 'core/placement\.hpp.*(No such file|not found)' "$work/old_include.log"; then
  cat "$work/old_include.log" >&2
  fail "old_include_style.cpp failed, but not for want of core/placement.hpp"
fi

if [ "$failures" -gt 0 ]; then echo "tests/package/run.sh: $failures check(s) failed" >&2; exit 1; fi
echo "tests/package/run.sh: the install tree works moved, and the consumer builds against it"
