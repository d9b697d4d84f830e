// Megatron-LM's 1F1B and interleaved pipeline orders (pipeline_schedule.hpp).
#include "strategies/pipeline_schedule.hpp"

#include <algorithm>
#include <string>

#include "core/errors.hpp"

namespace symmesh::strategies {
namespace {

constexpr const char* kWhere = "pipeline schedule";

// Virtual micro-batch k of the interleaved order: its micro-batch and chunk.
PipelineTask virtual_task(int64_t k, int p, int v, bool forward) {
  const int64_t group = k / (int64_t{p} * v);
  const int64_t in_group = k % (int64_t{p} * v);
  int chunk = static_cast<int>(in_group / p);
  if (!forward) chunk = v - 1 - chunk;
  return {forward, group * p + in_group % p, chunk};
}

}  // namespace

int64_t warmup_forwards(int p, int64_t m, int v, int stage) {
  if (p < 1 || m < 1 || v < 1)
    throw InvalidArgument("stages, micro-batches and virtual stages must be >= 1", kWhere);
  if (stage < 0 || stage >= p)
    throw InvalidArgument(
        "stage " + std::to_string(stage) + " is outside 0.." + std::to_string(p - 1), kWhere);
  if (v > 1 && m % p != 0)
    throw InvalidArgument("the interleaved schedule needs the " + std::to_string(m) +
                              " micro-batches to be a multiple of the " + std::to_string(p) +
                              " stages (as Megatron-LM requires)",
                          kWhere);
  const int64_t total = m * v;
  if (v == 1) return std::min<int64_t>(p - stage - 1, m);
  if (m == p) return total;  // Megatron: every forward first when there are as many as stages
  return std::min<int64_t>(int64_t{p - stage - 1} * 2 + int64_t{v - 1} * p, total);
}

int64_t chunks_in_flight(int p, int64_t m, int v, int stage) {
  return std::min(warmup_forwards(p, m, v, stage) + 1, m * v);
}

std::vector<PipelineTask> stage_schedule(int p, int64_t m, int v, int stage) {
  const int64_t warmup = warmup_forwards(p, m, v, stage);
  const int64_t total = m * v;
  std::vector<PipelineTask> order;
  order.reserve(static_cast<size_t>(2 * total));
  auto task = [&](int64_t k, bool forward) {
    return v == 1 ? PipelineTask{forward, k, 0} : virtual_task(k, p, v, forward);
  };
  for (int64_t k = 0; k < warmup; ++k) order.push_back(task(k, true));
  for (int64_t k = 0; k < total - warmup; ++k) {
    order.push_back(task(warmup + k, true));
    order.push_back(task(k, false));
  }
  for (int64_t k = total - warmup; k < total; ++k) order.push_back(task(k, false));
  return order;
}

}  // namespace symmesh::strategies
