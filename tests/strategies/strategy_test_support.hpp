#pragma once
// Small builders shared by the strategies tests: placements from their canonical text,
// tensors and problems in one line, rules printed for failure messages, and the DTensor
// formulas of docs/dtensor-strategies.md §3 written out once, independently of
// strategies/dtensor_cost_model.cpp, so that tests can state expected costs.
#include <string>
#include <string_view>
#include <vector>

#include "core/device_mesh.hpp"
#include "core/placement.hpp"
#include "core/tensor_spec.hpp"
#include "strategies/einsum_rules.hpp"
#include "strategies/op_problem.hpp"

namespace symmesh::strategies::testing {

inline Placements pl(std::string_view text) {
  return parse_placements(text);
}

inline TensorSpec tensor(Shape shape, std::string_view placements, DType dtype = DType::fp32) {
  return TensorSpec{std::move(shape), dtype, pl(placements)};
}

inline OpProblem problem(OpKind op, std::vector<int> mesh, std::vector<TensorSpec> inputs) {
  return OpProblem{op, DeviceMesh(std::move(mesh)), std::move(inputs), std::nullopt};
}

// "[S(0) | S(0) | R]": a rule or any list of placements, for messages and set comparisons.
inline std::string rule_text(const Rule& rule) {
  std::string out = "[";
  for (size_t i = 0; i < rule.size(); ++i) out += (i ? " | " : "") + to_string(rule[i]);
  return out + "]";
}

inline std::vector<std::string> rule_texts(const std::vector<Rule>& rules) {
  std::vector<std::string> out;
  for (const auto& r : rules) out.push_back(rule_text(r));
  return out;
}

// Reference §3, with B in GiB, n devices on the mesh dim, bandwidth in GB/s, latency in µs.
// Intra-host: 87.7 GB/s and 0.6 µs per hop; inter-host: 0.22 * 87.7 = 19.294 GB/s, 2.7 µs.
constexpr double kIntraGbPerS = 87.7;
constexpr double kIntraHopUs = 0.6;
constexpr double kInterGbPerS = 0.22 * 87.7;
constexpr double kInterHopUs = 2.7;
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

inline double ref_allgather_us(double gib, int n, double gb_per_s, double hop_us) {
  return 6.6 + (n - 1) * hop_us + 1e6 * gib * (n - 1) / (n * gb_per_s);
}
inline double ref_reduce_scatter_us(double gib, int n, double gb_per_s, double hop_us) {
  return ref_allgather_us(gib, n, gb_per_s, hop_us);
}
inline double ref_allreduce_us(double gib, int n, double gb_per_s, double hop_us) {
  return 6.6 + 2 * (n - 1) * hop_us + 1e6 * 2 * gib * (n - 1) / (n * gb_per_s);
}
inline double gib(double bytes) {
  return bytes / kGiB;
}

}  // namespace symmesh::strategies::testing
