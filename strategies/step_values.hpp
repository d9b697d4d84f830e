#pragma once
// The values a dataflow step computes, for emulation (strategies/workload_lowering.hpp):
// every planned op's global inputs — its producers' unsharded results on inputs rounded to
// their dtype, seeded values for step inputs, parameters and loss gradients — worked out in
// the planned order (producers first) before anything is lowered, since a pipeline lowers
// its stages one after the other.
#include <cstddef>
#include <functional>
#include <random>
#include <vector>

#include "strategies/workload_lowering.hpp"

namespace symmesh::strategies {

// By planned op: its inputs' global values in ATen order (none for an op without a plan).
// `before_op(i)` runs before op i's values are made: the caller's size check.
std::vector<std::vector<std::vector<double>>> dataflow_step_inputs(
    const PlannedWorkload& planned, const WorkloadOptions& options, std::mt19937_64& rng,
    const std::function<void(size_t)>& before_op);

}  // namespace symmesh::strategies
