#include "hw/native_collectives.hpp"

#include <cmath>
#include <cstdio>
#include <optional>

namespace symmesh::hw {
namespace {

// "ring all_gather step 3/7" → {3, 7} when the detail starts with `algorithm`.
std::optional<std::pair<int, int>> step_of(const StreamOp& op, const std::string& algorithm) {
  const std::string& d = op.label.detail;
  const std::string prefix = algorithm + " step ";
  if (d.compare(0, prefix.size(), prefix) != 0) return std::nullopt;
  int step = 0, steps = 0;
  char tail = 0;
  if (std::sscanf(d.c_str() + prefix.size(), "%d/%d%c", &step, &steps, &tail) != 2)
    return std::nullopt;
  if (step < 1 || steps < 1 || step > steps) return std::nullopt;
  return std::make_pair(step, steps);
}

struct Ring {
  int index = 0;
  int size = 0;
  int wrap(int i) const { return ((i % size) + size) % size; }
};

class Matcher {
 public:
  Matcher(const Program& program, int rank, const std::vector<StreamOp>& ops)
      : program_(program), rank_(rank), ops_(ops) {}

  // The segment starting at `begin`, if one does.
  std::optional<NativeSegment> at(int begin) const {
    if (auto s = all_gather(begin)) return s;
    if (auto s = reduce_scatter(begin)) {
      // ring_all_reduce: the reduce-scatter is followed by an all-gather of its chunks.
      if (auto g = all_gather(begin + s->count);
          g && g->data_handle == s->data_handle && g->chunk_bytes == s->chunk_bytes &&
          ops_[begin + s->count].label.name == ops_[begin].label.name) {
        s->kind = NativeCollective::Kind::all_reduce;
        s->count += g->count;
      }
      return s;
    }
    return all_to_all(begin);
  }

 private:
  bool in_range(int begin, int count) const {
    return begin >= 0 && begin + count <= static_cast<int>(ops_.size());
  }
  // The group of a handle and this rank's place in it; nullopt when the sizes disagree.
  std::optional<Ring> ring_of(int handle, int steps) const {
    const auto& all = program_.symmetric_allocations();
    if (handle < 0 || handle >= static_cast<int>(all.size())) return std::nullopt;
    const Group& g = program_.group(all[handle].group);
    Ring r{g.index_of(rank_), static_cast<int>(g.ranks.size())};
    if (r.index < 0 || r.size != steps + 1) return std::nullopt;
    return r;
  }
  // Every op of [begin, begin + per_step·steps) has `algorithm` step s/steps, in order, and
  // the first op's name.
  bool labelled(int begin, int per_step, int steps, const std::string& algorithm) const {
    for (int s = 0; s < steps; ++s)
      for (int k = 0; k < per_step; ++k) {
        const StreamOp& op = ops_[begin + s * per_step + k];
        const auto st = step_of(op, algorithm);
        if (!st || st->first != s + 1 || st->second != steps ||
            op.label.name != ops_[begin].label.name)
          return false;
      }
    return true;
  }
  static bool is_slice(const BufferRef& ref, int handle, int64_t offset, int64_t size) {
    return ref.space == BufferRef::Space::symmetric && ref.id == handle &&
           ref.offset_bytes == offset && ref.size_bytes == size;
  }

  std::optional<NativeSegment> all_gather(int begin) const {
    const std::string algorithm = "ring all_gather";
    if (!in_range(begin, 1)) return std::nullopt;
    const auto first = step_of(ops_[begin], algorithm);
    if (!first || first->first != 1) return std::nullopt;
    const int steps = first->second;
    if (!in_range(begin, 2 * steps) || !labelled(begin, 2, steps, algorithm)) return std::nullopt;
    const StreamOp& put0 = ops_[begin];
    if (put0.kind != StreamOp::Kind::put_signal) return std::nullopt;
    const int data = put0.handle.id;
    const int64_t c = put0.src.size_bytes;
    const auto ring = ring_of(data, steps);
    if (!ring) return std::nullopt;
    for (int s = 0; s < steps; ++s) {
      const StreamOp& put = ops_[begin + 2 * s];
      const StreamOp& wait = ops_[begin + 2 * s + 1];
      const int chunk = ring->wrap(ring->index - s);
      if (put.kind != StreamOp::Kind::put_signal || put.handle.id != data ||
          put.peer != ring->wrap(ring->index + 1) || !is_slice(put.src, data, chunk * c, c) ||
          !is_slice(put.dst, data, chunk * c, c))
        return std::nullopt;
      if (wait.kind != StreamOp::Kind::wait_signal || wait.handle.id != data ||
          wait.peer != ring->wrap(ring->index - 1))
        return std::nullopt;
    }
    if (program_.symmetric_allocations()[data].size_bytes < (steps + 1) * c) return std::nullopt;
    NativeSegment seg;
    seg.begin = begin;
    seg.count = 2 * steps;
    seg.kind = NativeCollective::Kind::all_gather;
    seg.group = put0.handle.group;
    seg.member_index = ring->index;
    seg.data_handle = seg.result_handle = data;
    seg.chunk_bytes = c;
    return seg;
  }

  std::optional<NativeSegment> reduce_scatter(int begin) const {
    const std::string algorithm = "ring reduce_scatter";
    if (!in_range(begin, 1)) return std::nullopt;
    const auto first = step_of(ops_[begin], algorithm);
    if (!first || first->first != 1) return std::nullopt;
    const int steps = first->second;
    if (!in_range(begin, 3 * steps) || !labelled(begin, 3, steps, algorithm)) return std::nullopt;
    const StreamOp& put0 = ops_[begin];
    const StreamOp& reduce0 = ops_[begin + 2];
    if (put0.kind != StreamOp::Kind::put_signal || reduce0.kind != StreamOp::Kind::reduce)
      return std::nullopt;
    const int staging = put0.handle.id;
    const int data = put0.src.id;
    const int64_t c = put0.src.size_bytes;
    const DType dtype = reduce0.reduce.dtype;
    const auto ring = ring_of(data, steps);
    const auto staging_ring = ring_of(staging, steps);
    if (!ring || !staging_ring || staging == data || c % element_size_bytes(dtype) != 0)
      return std::nullopt;
    if (program_.symmetric_allocations()[data].group !=
        program_.symmetric_allocations()[staging].group)
      return std::nullopt;
    bool average = false;
    for (int s = 0; s < steps; ++s) {
      const StreamOp& put = ops_[begin + 3 * s];
      const StreamOp& wait = ops_[begin + 3 * s + 1];
      const StreamOp& red = ops_[begin + 3 * s + 2];
      const int send = ring->wrap(ring->index - s - 1);
      const int recv = ring->wrap(ring->index - s - 2);
      if (put.kind != StreamOp::Kind::put_signal || put.handle.id != staging ||
          put.peer != ring->wrap(ring->index + 1) || !is_slice(put.src, data, send * c, c) ||
          !is_slice(put.dst, staging, s * c, c))
        return std::nullopt;
      if (wait.kind != StreamOp::Kind::wait_signal || wait.handle.id != staging ||
          wait.peer != ring->wrap(ring->index - 1))
        return std::nullopt;
      const ReduceWork& w = red.reduce;
      if (red.kind != StreamOp::Kind::reduce || w.dtype != dtype ||
          w.elements * element_size_bytes(dtype) != c || !is_slice(w.dst, data, recv * c, c) ||
          !is_slice(w.src, staging, s * c, c))
        return std::nullopt;
      const bool last = s == steps - 1;
      if (w.scale != 1.0) {
        if (!last || std::abs(w.scale * (steps + 1) - 1.0) > 1e-12) return std::nullopt;
        average = true;
      }
    }
    NativeSegment seg;
    seg.begin = begin;
    seg.count = 3 * steps;
    seg.kind = NativeCollective::Kind::reduce_scatter;
    seg.group = program_.symmetric_allocations()[data].group;
    seg.member_index = ring->index;
    seg.data_handle = seg.result_handle = data;
    seg.chunk_bytes = c;
    seg.dtype = dtype;
    seg.average = average;
    return seg;
  }

  std::optional<NativeSegment> all_to_all(int begin) const {
    const std::string algorithm = "pairwise all_to_all";
    if (!in_range(begin, 1)) return std::nullopt;
    const auto first = step_of(ops_[begin], algorithm);
    if (!first || first->first != 1) return std::nullopt;
    const int steps = first->second;
    if (!in_range(begin, 2 * steps) || !labelled(begin, 2, steps, algorithm)) return std::nullopt;
    const StreamOp& put0 = ops_[begin];
    if (put0.kind != StreamOp::Kind::put_signal) return std::nullopt;
    const int result = put0.handle.id;
    const int data = put0.src.id;
    const int64_t c = put0.src.size_bytes;
    const auto ring = ring_of(data, steps);
    if (!ring || !ring_of(result, steps) || result == data) return std::nullopt;
    for (int s = 1; s <= steps; ++s) {
      const StreamOp& put = ops_[begin + 2 * (s - 1)];
      const StreamOp& wait = ops_[begin + 2 * (s - 1) + 1];
      const int to = ring->wrap(ring->index + s);
      if (put.kind != StreamOp::Kind::put_signal || put.handle.id != result || put.peer != to ||
          !is_slice(put.src, data, to * c, c) || !is_slice(put.dst, result, ring->index * c, c))
        return std::nullopt;
      if (wait.kind != StreamOp::Kind::wait_signal || wait.handle.id != result ||
          wait.peer != ring->wrap(ring->index - s))
        return std::nullopt;
    }
    const auto& all = program_.symmetric_allocations();
    if (all[data].group != all[result].group || all[result].size_bytes < (steps + 1) * c)
      return std::nullopt;
    NativeSegment seg;
    seg.begin = begin;
    seg.count = 2 * steps;
    seg.kind = NativeCollective::Kind::all_to_all;
    seg.group = all[data].group;
    seg.member_index = ring->index;
    seg.data_handle = data;
    seg.result_handle = result;
    seg.chunk_bytes = c;
    return seg;
  }

  const Program& program_;
  int rank_;
  const std::vector<StreamOp>& ops_;
};

}  // namespace

std::vector<NativeSegment> find_native_segments(const Program& program, int rank, StreamId stream) {
  const auto& ops = program.streams(rank).at(stream).ops;
  Matcher matcher(program, rank, ops);
  std::vector<NativeSegment> out;
  for (int i = 0; i < static_cast<int>(ops.size());) {
    if (auto seg = matcher.at(i)) {
      seg->detail = "nccl " + to_string(seg->kind) + " (replaces " + std::to_string(seg->count) +
                    " one-sided ops)";
      i += seg->count;
      out.push_back(*seg);
    } else {
      ++i;
    }
  }
  return out;
}

}  // namespace symmesh::hw
