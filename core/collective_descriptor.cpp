#include "core/collective_descriptor.hpp"

#include <algorithm>

#include "core/collectives.hpp"
#include "core/errors.hpp"

namespace symmesh {
namespace {

using LA = LibraryAlgorithm;
using PC = PlacementClass;

// One row per collective. Sources: the bus-bandwidth factors are nccl-tests'
// (doc/PERFORMANCE.md, "Summary"); the ring steps NCCL's tuner's (src/graph/tuning.cc:
// a ring all-reduce 2(p-1), other ring collectives p-1); the algorithms NCCL 2.28's (tree
// and NVLS all-reduce, NVLS all-gather and reduce-scatter since 2.19, all-to-all as
// pairwise send/recv, send/recv direct); the transitions DTensor's (S→R all-gather,
// P→S reduce-scatter, P→R all-reduce, S(i)→S(j) all-to-all).
std::vector<CollectiveDescriptor> make_table() {
  std::vector<CollectiveDescriptor> t;
  {
    CollectiveDescriptor d;
    d.name = "all_gather";
    d.record = CollectiveOp::all_gather;
    d.bandwidth = BandwidthCollective::all_gather;
    d.transition = CollectiveKind::all_gather;
    d.op_kind = OpKind::all_gather;
    d.ring_passes = 1;
    d.steps_per_peer = 1;
    d.from = PC::shard;
    d.to = PC::replicate;
    d.algorithm = CollectiveAlgorithm::ring;
    d.emit = &ring_all_gather;
    d.library_algorithms = {LA::ring, LA::nvls};
    d.native_call = "ncclAllGather";
    d.library_move = &library_all_gather;
    t.push_back(d);
  }
  {
    CollectiveDescriptor d;
    d.name = "reduce_scatter";
    d.record = CollectiveOp::reduce_scatter;
    d.bandwidth = BandwidthCollective::reduce_scatter;
    d.transition = CollectiveKind::reduce_scatter;
    d.op_kind = OpKind::reduce_scatter;
    d.ring_passes = 1;
    d.steps_per_peer = 1;
    d.from = PC::partial;
    d.to = PC::shard;
    d.reduces = true;
    d.algorithm = CollectiveAlgorithm::ring;
    d.emit = &ring_reduce_scatter;
    d.library_algorithms = {LA::ring, LA::nvls};
    d.native_call = "ncclReduceScatter";
    d.library_move = &library_reduce_scatter;
    t.push_back(d);
  }
  {
    CollectiveDescriptor d;
    d.name = "all_reduce";
    d.record = CollectiveOp::all_reduce;
    d.bandwidth = BandwidthCollective::all_reduce;
    d.transition = CollectiveKind::all_reduce;
    d.op_kind = OpKind::all_reduce;
    d.ring_passes = 2;
    d.steps_per_peer = 2;  // a reduce-scatter, then an all-gather of the reduced chunks
    d.from = PC::partial;
    d.to = PC::replicate;
    d.reduces = true;
    d.algorithm = CollectiveAlgorithm::ring;
    d.emit = &ring_all_reduce;
    d.library_algorithms = {LA::ring, LA::tree, LA::nvls};
    d.native_call = "ncclAllReduce";
    d.library_move = &library_all_reduce;
    t.push_back(d);
  }
  {
    CollectiveDescriptor d;
    d.name = "all_to_all";
    d.aliases = {"alltoall", ""};
    d.record = CollectiveOp::all_to_all;
    d.bandwidth = BandwidthCollective::all_to_all;
    d.transition = CollectiveKind::all_to_all;
    d.op_kind = OpKind::all_to_all;
    d.ring_passes = 1;
    d.steps_per_peer = 1;
    d.from = PC::shard;
    d.to = PC::shard;
    d.algorithm = CollectiveAlgorithm::pairwise;
    d.emit = &pairwise_all_to_all;
    d.library_algorithms = {LA::pairwise};
    d.native_call = "ncclAlltoAll";
    d.library_move = &library_all_to_all;
    t.push_back(d);
  }
  // nccl-tests measures these three; the core writes none of them (no record, no emitter).
  {
    CollectiveDescriptor d;
    d.name = "broadcast";
    d.bandwidth = BandwidthCollective::broadcast;
    d.bus_constant = 1;
    d.steps_per_peer = 1;  // a chain from the root: p-1 hops, each carrying the buffer
    d.step_moves_whole_buffer = true;
    d.library_algorithms = {LA::ring};
    d.native_call = "ncclBroadcast";
    t.push_back(d);
  }
  {
    CollectiveDescriptor d;
    d.name = "reduce";
    d.bandwidth = BandwidthCollective::reduce;
    d.bus_constant = 1;
    d.steps_per_peer = 1;  // a chain to the root
    d.step_moves_whole_buffer = true;
    d.reduces = true;
    d.library_algorithms = {LA::ring};
    d.native_call = "ncclReduce";
    t.push_back(d);
  }
  {
    CollectiveDescriptor d;
    d.name = "sendrecv";
    d.bandwidth = BandwidthCollective::sendrecv;
    d.bus_constant = 1;
    d.extra_steps = 1;  // one transfer
    d.step_moves_whole_buffer = true;
    d.library_algorithms = {LA::direct};
    d.native_call = "ncclSend/ncclRecv";
    t.push_back(d);
  }
  // Collectives overlapped with the matmul that consumes or produces them
  // (strategies/collective_matmul): one-sided only, no library equivalent, no
  // bus-bandwidth figure (their time is not the collective's).
  {
    CollectiveDescriptor d;
    d.name = "allgather_matmul";
    d.record = CollectiveOp::allgather_matmul;
    d.steps_per_peer = 1;
    d.algorithm = CollectiveAlgorithm::fused_ring;
    t.push_back(d);
  }
  {
    CollectiveDescriptor d;
    d.name = "matmul_reducescatter";
    d.record = CollectiveOp::matmul_reducescatter;
    d.steps_per_peer = 1;
    d.reduces = true;
    d.algorithm = CollectiveAlgorithm::fused_ring;
    t.push_back(d);
  }
  return t;
}

// The row index of each enumerator, built once from the table: index[enumerator] → row,
// -1 for none; sized by the largest enumerator a row names, so no enum's last value is
// written here.
template <typename Enum>
std::vector<int> index_by(std::optional<Enum> CollectiveDescriptor::*field) {
  std::vector<int> out;
  const auto& rows = collective_descriptors();
  for (size_t r = 0; r < rows.size(); ++r)
    if (const auto& e = rows[r].*field) {
      const auto i = static_cast<size_t>(*e);
      if (i >= out.size()) out.resize(i + 1, -1);
      out[i] = static_cast<int>(r);
    }
  return out;
}

const CollectiveDescriptor* row(int index) {
  return index < 0 ? nullptr : &collective_descriptors()[static_cast<size_t>(index)];
}

template <typename Enum>
const CollectiveDescriptor* find_row(const std::vector<int>& index, Enum e) {
  const auto i = static_cast<size_t>(e);
  return i < index.size() ? row(index[i]) : nullptr;
}

}  // namespace

const std::vector<CollectiveDescriptor>& collective_descriptors() {
  static const std::vector<CollectiveDescriptor> table = make_table();
  return table;
}

const CollectiveDescriptor* find_collective(std::string_view text) {
  for (const CollectiveDescriptor& d : collective_descriptors()) {
    if (text == d.name) return &d;
    for (std::string_view alias : d.aliases)
      if (!alias.empty() && text == alias) return &d;
  }
  return nullptr;
}

const CollectiveDescriptor& descriptor_of(CollectiveOp op) {
  static const std::vector<int> index = index_by(&CollectiveDescriptor::record);
  if (const CollectiveDescriptor* d = find_row(index, op)) return *d;
  throw InvalidArgument("collective op " + std::to_string(static_cast<int>(op)) +
                            " has no descriptor",
                        "collectives");
}

const CollectiveDescriptor& descriptor_of(BandwidthCollective op) {
  static const std::vector<int> index = index_by(&CollectiveDescriptor::bandwidth);
  if (const CollectiveDescriptor* d = find_row(index, op)) return *d;
  throw InvalidArgument(
      "bandwidth collective " + std::to_string(static_cast<int>(op)) + " has no descriptor",
      "collectives");
}

const CollectiveDescriptor* descriptor_of(CollectiveKind kind) {
  static const std::vector<int> index = index_by(&CollectiveDescriptor::transition);
  return find_row(index, kind);
}

const CollectiveDescriptor* descriptor_of(OpKind kind) {
  static const std::vector<int> index = index_by(&CollectiveDescriptor::op_kind);
  return find_row(index, kind);
}

double bus_bandwidth_factor(const CollectiveDescriptor& d, int ranks) {
  const double n = ranks < 1 ? 1 : ranks;
  // NVIDIA/nccl-tests doc/PERFORMANCE.md: an all-reduce needs 2(n-1) transfers per element
  // over n links, t = (S/B)·2(n-1)/n, so B = algbw·2(n-1)/n; a reduce-scatter or all-gather
  // is half of it, (n-1)/n, as is an all-to-all; a broadcast or reduce is bound by the
  // root's one link, B = S/t; a send/receive moves S once.
  return d.ring_passes * (n - 1) / n + d.bus_constant;
}

int ring_steps(const CollectiveDescriptor& d, int ranks) {
  const int p = std::max(ranks, 1);
  return d.steps_per_peer * (p - 1) + d.extra_steps;
}

int64_t ring_step_bytes(const CollectiveDescriptor& d, int64_t bytes, int ranks) {
  if (d.step_moves_whole_buffer) return bytes;
  const int64_t p = std::max(ranks, 1);
  return (bytes + p - 1) / p;
}

bool collective_may_use(const CollectiveDescriptor& d, LibraryAlgorithm algorithm,
                        bool intra_node) {
  if (algorithm == LibraryAlgorithm::nvls && !intra_node) return false;  // NVSwitch only
  return std::find(d.library_algorithms.begin(), d.library_algorithms.end(), algorithm) !=
         d.library_algorithms.end();
}

}  // namespace symmesh
