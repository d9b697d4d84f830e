// describe(): an ExecutionPlan as text, one line per launch, for `symmesh run --dry-run`.
#include <algorithm>
#include <cstdio>

#include "core/text.hpp"
#include "hw/execution_plan.hpp"

namespace symmesh::hw {
namespace {

std::string ranks_text(const std::vector<int>& ranks) {
  std::string out = "[";
  for (size_t i = 0; i < ranks.size(); ++i) out += (i ? ", " : "") + std::to_string(ranks[i]);
  return out + "]";
}

std::string range_text(const DeviceRange& r) {
  return (r.arena == DeviceRange::Arena::local ? std::string("local")
                                               : "comm " + std::to_string(r.comm)) +
         "+" + std::to_string(r.offset_bytes);
}

std::string launch_text(const ExecutionPlan& plan, const Launch& l) {
  const auto world_of = [&](int peer) { return plan.comms[l.comm].ranks[peer]; };
  switch (l.kind) {
    case Launch::Kind::put:
      if (l.handle < 0)
        return "signal " + std::to_string(l.signal) + " -> rank " +
               std::to_string(world_of(l.peer)) + ", signal slot +" +
               std::to_string(l.signal_offset_bytes);
      return "put " + format_bytes(l.bytes) + " " + range_text(l.src) + " -> rank " +
             std::to_string(world_of(l.peer)) + " " + range_text(l.dst) + ", signal slot +" +
             std::to_string(l.signal_offset_bytes);
    case Launch::Kind::wait:
      return "wait for rank " + std::to_string(world_of(l.peer)) + " on comm " +
             std::to_string(l.comm) + " signal " + std::to_string(l.signal) +
             (l.handle >= 0 ? " (buffer " + std::to_string(l.handle) + ")" : "") +
             " until its count reaches " + std::to_string(l.expected);
    case Launch::Kind::barrier:
      return "barrier on comm " + std::to_string(l.comm) + " " +
             ranks_text(plan.comms[l.comm].ranks) + ", generation " + std::to_string(l.expected);
    case Launch::Kind::matmul: {
      const MatmulWork& w = l.matmul;
      return "matmul " + to_string(w.dtype) + " " + std::to_string(w.batch) + "x" +
             std::to_string(w.m) + "x" + std::to_string(w.n) + "x" + std::to_string(w.k) +
             (w.accumulate ? " accumulate" : "") + (w.bias.id >= 0 ? " bias" : "") + " (cuBLASLt)";
    }
    case Launch::Kind::reduce:
      return "reduce " + to_string(l.reduce.dtype) + " x" + std::to_string(l.reduce.elements) +
             (l.reduce.scale != 1.0 ? " scale " + std::to_string(l.reduce.scale) : "");
    case Launch::Kind::copy:
      return "copy " + std::to_string(l.copy.planes) + "x" + std::to_string(l.copy.rows) + "x" +
             std::to_string(l.copy.row_bytes) + " B " + range_text(l.src) + " -> " +
             range_text(l.dst);
    case Launch::Kind::record_event:
      return "record event " + std::to_string(l.event);
    case Launch::Kind::wait_event:
      return "wait event " + std::to_string(l.event);
    case Launch::Kind::free:
      return "free buffer " + std::to_string(l.handle) + " (kept until the run ends)";
    case Launch::Kind::native:
      return "nccl " + to_string(l.native.kind) + " on comm " + std::to_string(l.comm) + ", " +
             std::to_string(l.native.count) + " x " + to_string(l.native.dtype) +
             (l.native.average ? " avg" : "") + " (replaces " + std::to_string(l.op_count) +
             " ops)";
  }
  return "?";
}

}  // namespace

std::string describe(const ExecutionPlan& plan, const Program& program) {
  std::string out = "hardware plan: " + std::to_string(plan.world_size) + " rank" +
                    (plan.world_size == 1 ? "" : "s") + ", one GPU each, collectives " +
                    plan.options.collectives.kind() + "\n";
  out += "communicators:\n";
  for (size_t c = 0; c < plan.comms.size(); ++c) {
    const CommPlan& comm = plan.comms[c];
    const auto buffers =
        std::count_if(plan.symmetric.begin(), plan.symmetric.end(),
                      [&](const SymmetricPlacement& p) { return p.comm == int(c); });
    std::string uses = comm.one_sided ? "one-sided" : "";
    if (comm.barriers) uses += std::string(uses.empty() ? "" : ", ") + "barriers";
    if (comm.native) uses += std::string(uses.empty() ? "" : ", ") + "nccl collectives";
    out += "  comm " + std::to_string(c) + ": ranks " + ranks_text(comm.ranks) +
           (c == 0 ? " (world)" : "") + ", " + std::to_string(buffers) + " symmetric buffer" +
           (buffers == 1 ? "" : "s") + ", arena " + format_bytes(comm.arena_bytes) + " per member" +
           (uses.empty() ? "" : ", " + uses) + "\n";
  }
  for (const RankPlan& r : plan.ranks) {
    out += "rank " + std::to_string(r.rank) + " (GPU " + std::to_string(r.rank) +
           "): " + format_bytes(plan.device_bytes(r.rank)) + " of device memory, " +
           std::to_string(r.launches.size()) + " launches\n";
    for (const Launch& l : r.launches) {
      const StreamOp& op = program.streams(r.rank)[l.stream].ops[l.op_index];
      const OpLabel& label = program.label_of(op.label());
      out += "  [" + r.streams[l.stream].name + "] " + launch_text(plan, l) + "   # " + label.name +
             (label.detail.empty() ? "" : ": " + label.detail) + "\n";
    }
  }
  std::string counts;
  for (const auto& [kind, count] : launch_counts(plan))
    counts += (counts.empty() ? " " : ", ") + kind + " " + std::to_string(count);
  return out + "launches:" + (counts.empty() ? " none" : counts) + "\n";
}

}  // namespace symmesh::hw
