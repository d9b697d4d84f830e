#pragma once
// The roofline model that turns a local compute op into a duration on one GPU, as the
// simulator uses it. The formulas, constants and their rationale live in core/roofline.hpp
// (shared with the analytic cost model); this header keeps sim's names for them.
#include "core/roofline.hpp"

namespace symmesh::sim {

using roofline::kHalfDim;
using roofline::kLaunchOverhead_s;
using roofline::kPeakEfficiency;

using roofline::copy_duration_s;
using roofline::gemm_efficiency;
using roofline::local_copy_duration_s;
using roofline::matmul_bytes_moved;
using roofline::matmul_duration_s;
using roofline::peak_flops_per_s;
using roofline::reduce_duration_s;
using roofline::tensor_op_duration_s;

}  // namespace symmesh::sim
