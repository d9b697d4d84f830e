#pragma once
// A version-2 training step with as many parameters as Llama 3 70B, for the memory tests:
// 8 layers of x · a[8192, 537600] · b[537600, 8192] = 8 x 2 x 4,404,019,200 =
// 70,464,307,200 parameters, trained with Adam, over a 1-D dp mesh of 8 whose input x0
// [8192, 8192] is split by rows. The caller gives the scenario's head (version, name,
// cluster, mesh, cost model) and the weights' placements key (", placements: [R]", or ""
// to leave them to the planner); what follows `workload:` (a sweep) is appended after.
#include <string>

namespace symmesh::testing {

inline std::string llama70b_sized_step(const std::string& head,
                                       const std::string& weight_placements) {
  std::string yaml = head + "tensors:\n  x0: {shape: [8192, 8192], placements: [\"S(0)\"]}\n";
  for (int l = 0; l < 8; ++l) {
    const std::string n = std::to_string(l);
    yaml += "  a" + n + ": {shape: [8192, 537600], parameter: true" + weight_placements + "}\n";
    yaml += "  b" + n + ": {shape: [537600, 8192], parameter: true" + weight_placements + "}\n";
  }
  yaml += "training: {optimizer: adam}\nworkload:\n";
  for (int l = 0; l < 8; ++l) {
    const std::string n = std::to_string(l), next = std::to_string(l + 1);
    yaml += "  - {name: up" + n + ", op: mm, a: x" + n + ", b: a" + n + ", output: h" + n + "}\n";
    yaml +=
        "  - {name: down" + n + ", op: mm, a: h" + n + ", b: b" + n + ", output: x" + next + "}\n";
  }
  return yaml;
}

}  // namespace symmesh::testing
