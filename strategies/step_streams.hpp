#pragma once
// The overlap rule of a planned step: the two streams of every rank as the lowering runs
// them (strategies/workload_lowering.hpp), in the layout search's objective and in the
// planned step's price (strategies/planned_step_price.hpp). One owner, so that what the
// search ranks by and what it reports are the same rule.
//
// Matrix ops run one after another on `main`; each gradient reduction on `comm` once its
// gradient is made (after its wgrad's main-stream time) and after the reductions before it.
// A reduction hides under main-stream compute, but not under main-stream communication
// over the same links (NVLink, or the NICs between nodes): there the two share the
// bandwidth, so while both run each goes at half speed (fair share) and the overlap is paid
// by both. What is shared is bounded by the comm stream's queued time on those links (a
// flow at half speed costs the other at most the time it runs): a queue of reductions over
// the NICs with one short step over NVLink (a norm weight's) costs the main stream's NVLink
// collectives that step, not the whole queue. The queue's order is not kept, so which of
// its time on a link overlaps which main-stream op is not known: the first ops to meet it
// pay it. Before this bound the Llama 3.1 405B step at [pp 16, dp 128, tp 8] was priced
// 5.1 % over its simulation (24 ms more per stage and backward); within 0.5 % after.
// The optimizer updates run after both, once every gradient is reduced (tail_us).
// With gradient accumulation the streams above are the last micro-batch's; the earlier ones
// run before it, each op once per micro-batch on the main stream alone (earlier_us).
// ZeRO-3 (weights sharded over dp, gathered for each use, as PyTorch's FSDP runs them): an
// op that reads weights waits for their gather on the comm stream. Ops gather by unit, as
// FSDP wraps a model: a decoder layer's ops in one pass are a unit, any other op one of
// its own (OpTiming::gather_unit). A unit's gathers start once the comm stream is free and
// the previous unit's first op has started (FSDP's prefetch of the next unit, so at most
// two units are gathered at once). Its gradient is reduce-scattered in every micro-batch,
// so every micro-batch runs both streams and the step is `repeats` of them (earlier_us
// stays 0).
#include <algorithm>
#include <cstdint>

#include "core/device_mesh.hpp"

namespace symmesh::strategies {

// What one op of a planned step costs on each stream, as the cost model priced it.
struct OpTiming {
  double main_us = 0;       // on the main stream: its compute and its redistributions
  double compute_us = 0;    // of which its local compute (the rest moves data)
  double reduction_us = 0;  // its parameter's gradient reduction (and ZeRO gather), on comm
  double update_us = 0;     // the optimizer update of the parameter it settles
  uint32_t net_links = 0;        // link classes its own redistributions use
  uint32_t reduction_links = 0;  // and its gradient reduction's
  // Of reduction_us, the time on each link class (bit 1: within a node, bit 2: between).
  double reduction_link_us[2] = {0, 0};
  // ZeRO-3: the gather of the weights it reads, before it, by link class, and its unit.
  double gather_link_us[2] = {0, 0};
  int gather_unit = -1;
  double gather_us() const { return gather_link_us[0] + gather_link_us[1]; }
};

// The index of link class `bit` (1 or 2) in OpTiming::reduction_link_us.
inline int link_class_index(uint32_t bit) { return bit == 2 ? 1 : 0; }

// The link class a collective over mesh dim `d` uses (the mesh laid row-major over
// node-major GPUs): 2 when its groups span nodes, else 1; 1 when the node size is not known
// (every dim's traffic then shares one network).
inline uint32_t mesh_dim_link_class(const DeviceMesh& mesh, int d, int gpus_per_node) {
  if (gpus_per_node <= 0) return 1;
  int64_t stride = 1;
  for (int e = d + 1; e < mesh.ndim(); ++e) stride *= mesh.shape()[e];
  return stride * mesh.shape()[d] > gpus_per_node ? 2 : 1;
}

struct Streams {
  double main_us = 0;
  double comm_us = 0;       // when the comm stream is free
  uint32_t comm_links = 0;  // link classes the comm stream's work in flight uses
  double tail_us = 0;       // the optimizer updates, after both streams
  double earlier_us = 0;    // the micro-batches before the last
  // The comm stream's queued time on each link class not yet shared with the main stream.
  double queued_link_us[2] = {0, 0};
  // ZeRO-3: the unit gathering now, when its first op started and when the unit before it
  // did (its gathers' earliest start); how many times both streams run (the micro-batches).
  // start_units(t) begins a task at t: its first unit gathers from t on.
  int unit = kNoUnit;
  double unit_start_us = 0;
  double previous_unit_start_us = 0;
  int64_t repeats = 1;
  static constexpr int kNoUnit = -1 << 30;
  void start_units(double at_us) {
    unit = kNoUnit;
    unit_start_us = previous_unit_start_us = at_us;
  }
  double busy_us() const { return std::max(main_us, comm_us); }
  double step_us() const {
    return earlier_us + static_cast<double>(repeats) * busy_us() + tail_us;
  }
  // The comm stream's work of `us`, `link_us` of it by link class, queued from `start_us` on.
  void queue_comm(double start_us, double us, const double link_us[2], uint32_t links) {
    if (comm_us <= start_us) {  // idle until then: nothing of it is still in flight
      comm_links = 0;
      queued_link_us[0] = queued_link_us[1] = 0;
    }
    comm_us = std::max(comm_us, start_us) + us;
    comm_links |= links;
    queued_link_us[0] += link_us[0];
    queued_link_us[1] += link_us[1];
  }
  Streams after(const OpTiming& op, int64_t micro_batches) const {
    Streams n = *this;
    if (op.gather_us() > 0) {  // ZeRO-3: its weights first
      const bool first = op.gather_unit != unit;
      if (first) {
        n.unit = op.gather_unit;
        n.previous_unit_start_us = unit_start_us;
      }
      const uint32_t links = (op.gather_link_us[0] > 0 ? 1u : 0u) |
                             (op.gather_link_us[1] > 0 ? 2u : 0u);
      n.queue_comm(n.previous_unit_start_us, op.gather_us(), op.gather_link_us, links);
      n.main_us = std::max(main_us, n.comm_us);
      if (first) n.unit_start_us = n.main_us;
    }
    return n.run(op, micro_batches);
  }

 private:
  Streams run(const OpTiming& op, int64_t micro_batches) const {
    const double net_us = std::max(0.0, op.main_us - op.compute_us);
    const double in_flight_us = std::max(0.0, comm_us - main_us);
    Streams n = *this;
    double shared_us = 0;
    if ((op.net_links & comm_links) && in_flight_us > 0) {
      shared_us = std::min(net_us, in_flight_us);
      double queued_us = 0;
      for (uint32_t bit : {1u, 2u})
        if (op.net_links & comm_links & bit) queued_us += queued_link_us[link_class_index(bit)];
      shared_us = std::min(shared_us, queued_us);
      double left_us = shared_us;  // taken from the classes in turn
      for (uint32_t bit : {1u, 2u})
        if (op.net_links & comm_links & bit) {
          double& queued = n.queued_link_us[link_class_index(bit)];
          const double taken = std::min(queued, left_us);
          queued -= taken;
          left_us -= taken;
        }
    }
    n.main_us = main_us + op.main_us + shared_us;
    n.comm_us = comm_us + shared_us;
    n.tail_us = tail_us + op.update_us;
    n.earlier_us = earlier_us + static_cast<double>(micro_batches - 1) * op.main_us;
    if (op.reduction_us > 0) {
      n.queue_comm(n.main_us, op.reduction_us, op.reduction_link_us, op.reduction_links);
    }
    return n;
  }
};

}  // namespace symmesh::strategies
