#include "core/collectives.hpp"

#include "core/errors.hpp"

namespace symmesh {
namespace {

// One member's view of the ring.
struct Member {
  int rank;
  int index;
  int size;
  StreamId stream;
  int right() const { return (index + 1) % size; }
  int left() const { return (index + size - 1) % size; }
  int wrap(int i) const { return ((i % size) + size) % size; }
};

std::vector<Member> members(Program& program, const CollectiveSpec& spec) {
  const Group& group = program.group(spec.group);
  std::vector<Member> out;
  const int p = static_cast<int>(group.ranks.size());
  for (int i = 0; i < p; ++i)
    out.push_back({group.ranks[i], i, p, program.stream(group.ranks[i], spec.stream)});
  return out;
}

SymmetricHandle ensure_buffer(Program& program, const CollectiveSpec& spec, SymmetricHandle given,
                              int64_t bytes, const char* what) {
  if (given.id < 0) return program.symm_alloc(spec.group, bytes);
  if (given.group != spec.group || given.size_bytes < bytes)
    throw InvalidArgument(std::string(what) +
                              " buffer must belong to the collective's group and hold " +
                              std::to_string(bytes) + " bytes",
                          spec.name);
  return given;
}

OpLabel label(const CollectiveSpec& spec, const std::string& algorithm, int step, int steps) {
  return {spec.name, "comm",
          algorithm + " step " + std::to_string(step + 1) + "/" + std::to_string(steps)};
}

void check(const CollectiveSpec& spec) {
  if (spec.bytes < 0) throw InvalidArgument("negative byte count", spec.name);
}

}  // namespace

int64_t CollectiveSpec::chunk_bytes(int group_size) const {
  const int64_t e = element_size_bytes(dtype);
  const int64_t elements = (bytes + e - 1) / e;
  return (elements + group_size - 1) / group_size * e;
}

CollectiveBuffers ring_all_gather(Program& program, const CollectiveSpec& spec,
                                  SymmetricHandle data) {
  check(spec);
  const auto ring = members(program, spec);
  const int p = static_cast<int>(ring.size());
  CollectiveBuffers out;
  out.chunk_bytes = spec.chunk_bytes(p);
  const int64_t c = out.chunk_bytes;
  out.data = out.result = ensure_buffer(program, spec, data, p * c, "all-gather data");
  // Step s: forward chunk (i - s) to the right; it lands in its own slot, written once,
  // so no credits are needed. The wait then makes chunk (i - 1 - s) ours to forward.
  for (const Member& m : ring) {
    for (int s = 0; s < p - 1; ++s) {
      const int chunk = m.wrap(m.index - s);
      program.put_signal(m.rank, m.stream, out.data.whole().slice(chunk * c, c), out.data,
                         chunk * c, m.right(), label(spec, "ring all_gather", s, p - 1));
      program.wait_signal(m.rank, m.stream, out.data, m.left(),
                          label(spec, "ring all_gather", s, p - 1));
    }
  }
  return out;
}

CollectiveBuffers ring_reduce_scatter(Program& program, const CollectiveSpec& spec,
                                      SymmetricHandle data) {
  check(spec);
  const auto ring = members(program, spec);
  const int p = static_cast<int>(ring.size());
  CollectiveBuffers out;
  out.chunk_bytes = spec.chunk_bytes(p);
  const int64_t c = out.chunk_bytes;
  const int64_t elements = c / element_size_bytes(spec.dtype);
  out.data = out.result = ensure_buffer(program, spec, data, p * c, "reduce-scatter data");
  if (p == 1) return out;  // one rank: its buffer is already the (sum or average) result
  // One receive slot per step, so a fast sender never overwrites an unread slot.
  out.staging = program.symm_alloc(spec.group, (p - 1) * c);
  // Step s: send partial chunk (i - s - 1) right; receive chunk (i - s - 2) from the
  // left and fold it into ours — the chunk we forward next. After p-1 steps chunk i is
  // complete on rank i.
  for (const Member& m : ring) {
    for (int s = 0; s < p - 1; ++s) {
      const int send = m.wrap(m.index - s - 1);
      const int recv = m.wrap(m.index - s - 2);
      const auto step_label = label(spec, "ring reduce_scatter", s, p - 1);
      program.put_signal(m.rank, m.stream, out.data.whole().slice(send * c, c), out.staging, s * c,
                         m.right(), step_label);
      program.wait_signal(m.rank, m.stream, out.staging, m.left(), step_label);
      ReduceWork work;
      work.dtype = spec.dtype;
      work.elements = elements;
      work.dst = out.data.whole().slice(recv * c, c);
      work.src = out.staging.whole().slice(s * c, c);
      work.scale = (spec.op == ReduceOp::avg && s == p - 2) ? 1.0 / p : 1.0;
      work.fused_with_transfer = true;
      program.reduce(m.rank, m.stream, work, step_label);
    }
  }
  return out;
}

CollectiveBuffers ring_all_reduce(Program& program, const CollectiveSpec& spec,
                                  SymmetricHandle data) {
  CollectiveBuffers rs = ring_reduce_scatter(program, spec, data);
  CollectiveSpec gather = spec;
  gather.bytes = rs.chunk_bytes * static_cast<int64_t>(program.group(spec.group).ranks.size());
  CollectiveBuffers ag = ring_all_gather(program, gather, rs.data);
  rs.result = ag.data;
  return rs;
}

CollectiveBuffers pairwise_all_to_all(Program& program, const CollectiveSpec& spec,
                                      SymmetricHandle data) {
  check(spec);
  const auto ring = members(program, spec);
  const int p = static_cast<int>(ring.size());
  CollectiveBuffers out;
  out.chunk_bytes = spec.chunk_bytes(p);
  const int64_t c = out.chunk_bytes;
  out.data = ensure_buffer(program, spec, data, p * c, "all-to-all data");
  out.staging = out.result = program.symm_alloc(spec.group, p * c);
  // Step s: send slot (i + s) to that peer, into our slot of its result; wait for the
  // chunk from peer (i - s). Each result slot is written once.
  for (const Member& m : ring) {
    for (int s = 1; s < p; ++s) {
      const int to = m.wrap(m.index + s);
      const int from = m.wrap(m.index - s);
      const auto step_label = label(spec, "pairwise all_to_all", s - 1, p - 1);
      program.put_signal(m.rank, m.stream, out.data.whole().slice(to * c, c), out.staging,
                         m.index * c, to, step_label);
      program.wait_signal(m.rank, m.stream, out.staging, from, step_label);
    }
  }
  return out;
}

void free_collective_buffers(Program& program, const CollectiveBuffers& buffers,
                             const std::string& stream) {
  if (buffers.staging.id >= 0) program.symm_free(buffers.staging, stream);
  if (buffers.data.id >= 0) program.symm_free(buffers.data, stream);
}

}  // namespace symmesh
