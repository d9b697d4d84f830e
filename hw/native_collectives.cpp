#include "hw/native_collectives.hpp"

#include <algorithm>
#include <optional>

#include "core/collective_descriptor.hpp"

namespace symmesh::hw {
namespace {

// The NCCL call of a record that has one (has_library_equivalent).
std::optional<NativeCollective::Kind> native_kind(const CollectiveRecord& r) {
  switch (r.op) {
    case CollectiveOp::all_gather:
      return NativeCollective::Kind::all_gather;
    case CollectiveOp::reduce_scatter:
      return NativeCollective::Kind::reduce_scatter;
    case CollectiveOp::all_reduce:
      return NativeCollective::Kind::all_reduce;
    case CollectiveOp::all_to_all:
      return NativeCollective::Kind::all_to_all;
    default:
      return std::nullopt;
  }
}

}  // namespace

std::vector<NativeSegment> native_segments(const Program& program, int rank,
                                           const CollectivesChoice& choice) {
  std::vector<NativeSegment> out;
  for (const CollectiveRecord& r : program.collectives()) {
    if (!choice.hands_to_library(r)) continue;
    const auto kind = native_kind(r);
    if (!kind) continue;
    for (const CollectiveSpan& span : r.spans) {
      if (span.rank != rank || span.op_count == 0) continue;
      NativeSegment seg;
      seg.stream = span.stream;
      seg.begin = span.first_op;
      seg.count = span.op_count;
      seg.kind = *kind;
      seg.group = r.group;
      seg.member_index = program.group(r.group).index_of(rank);
      seg.data_handle = r.data;
      seg.result_handle = r.result;
      seg.chunk_bytes = r.chunk_bytes;
      seg.dtype = r.dtype;
      seg.average = r.reduction == ReduceOp::avg && descriptor_of(r.op).reduces;
      seg.name = r.name;
      seg.detail = "nccl " + to_string(*kind) + " (replaces " + std::to_string(span.op_count) +
                   " one-sided ops)";
      out.push_back(std::move(seg));
    }
  }
  std::sort(out.begin(), out.end(), [](const NativeSegment& a, const NativeSegment& b) {
    return a.stream != b.stream ? a.stream < b.stream : a.begin < b.begin;
  });
  return out;
}

}  // namespace symmesh::hw
