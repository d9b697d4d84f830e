#pragma once
// The check every emulated-step test makes of its report.
#include <gtest/gtest.h>

#include "evaluation/simulation_report.hpp"

namespace symmesh::evaluation::testing {

// Each emulated op's output, gathered from the simulated ranks by its placements, against
// the op computed unsharded on the same (whole) inputs (strategies/sharded_result.hpp): in
// fp64 only the summation order differs. Returns how many ops were checked.
inline int expect_emulated_ops_exact(const SimulationReport& report) {
  int checked = 0;
  for (const OpReport& op : report.ops) {
    if (!op.max_abs_error) continue;
    EXPECT_LT(*op.max_abs_error, 1e-9) << op.name;
    ++checked;
  }
  return checked;
}

}  // namespace symmesh::evaluation::testing
