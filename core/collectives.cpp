#include "core/collectives.hpp"

#include <cstring>

#include "core/collective_descriptor.hpp"
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
  // Every collective here takes p - 1 steps of at least one op per member: refused now if
  // even that is past the Program's bound, not after writing up to it.
  program.check_room_for(int64_t{p} * (p - 1), spec.name);
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

// The label of each step, interned once per collective: "ring all_gather step 3/7".
std::vector<LabelId> step_labels(Program& program, const CollectiveSpec& spec,
                                 const std::string& algorithm, int steps) {
  std::vector<LabelId> out;
  for (int s = 0; s < steps; ++s)
    out.push_back(program.label(
        {spec.name, OpCategory::comm,
         algorithm + " step " + std::to_string(s + 1) + "/" + std::to_string(steps)}));
  return out;
}

void check(const CollectiveSpec& spec) {
  if (spec.bytes < 0) throw InvalidArgument("negative byte count", spec.name);
}

// Every member's ops appended by `emit(member)`, as spans (each member's ops are
// contiguous in its stream).
template <typename Emit>
std::vector<CollectiveSpan> emit_each(Program& program, const std::vector<Member>& ring,
                                      Emit&& emit) {
  std::vector<CollectiveSpan> spans;
  for (const Member& m : ring) {
    const int first = program.op_count(m.rank, m.stream);
    if (program.holds(m.rank)) emit(m);  // a folded rank's ops would be dropped
    spans.push_back({m.rank, m.stream, first, program.op_count(m.rank, m.stream) - first});
  }
  return spans;
}

// Step s: forward chunk (i - s) to the right; it lands in its own slot, written once, so
// no credits are needed. The wait then makes chunk (i - 1 - s) ours to forward.
std::vector<CollectiveSpan> emit_all_gather(Program& program, const CollectiveSpec& spec,
                                            const std::vector<Member>& ring,
                                            const SymmetricHandle& data, int64_t c) {
  const int p = static_cast<int>(ring.size());
  const auto labels = step_labels(program, spec, "ring all_gather", p - 1);
  return emit_each(program, ring, [&](const Member& m) {
    for (int s = 0; s < p - 1; ++s) {
      const int chunk = m.wrap(m.index - s);
      program.put_signal(m.rank, m.stream, data.whole().slice(chunk * c, c), data, chunk * c,
                         m.right(), labels[s], spec.signal);
      program.wait_signal(m.rank, m.stream, data, m.left(), labels[s], spec.signal);
    }
  });
}

// Step s: send partial chunk (i - s - 1) right; receive chunk (i - s - 2) from the left
// into staging slot s (one per step, so a fast sender never overwrites an unread slot) and
// fold it into ours — the chunk we forward next. After p-1 steps chunk i is complete on
// rank i.
std::vector<CollectiveSpan> emit_reduce_scatter(Program& program, const CollectiveSpec& spec,
                                                const std::vector<Member>& ring,
                                                const SymmetricHandle& data,
                                                const SymmetricHandle& staging, int64_t c) {
  const int p = static_cast<int>(ring.size());
  const int64_t elements = c / element_size_bytes(spec.dtype);
  const auto labels = step_labels(program, spec, "ring reduce_scatter", p - 1);
  return emit_each(program, ring, [&](const Member& m) {
    for (int s = 0; s < p - 1; ++s) {
      const int send = m.wrap(m.index - s - 1);
      const int recv = m.wrap(m.index - s - 2);
      program.put_signal(m.rank, m.stream, data.whole().slice(send * c, c), staging, s * c,
                         m.right(), labels[s], spec.signal);
      program.wait_signal(m.rank, m.stream, staging, m.left(), labels[s], spec.signal);
      ReduceWork work;
      work.dtype = spec.dtype;
      work.elements = elements;
      work.dst = data.whole().slice(recv * c, c);
      work.src = staging.whole().slice(s * c, c);
      work.scale = (spec.op == ReduceOp::avg && s == p - 2) ? 1.0 / p : 1.0;
      work.fused_with_transfer = true;
      program.reduce(m.rank, m.stream, work, labels[s]);
    }
  });
}

// Step s: send slot (i + s) to that peer, into our slot of its result; wait for the chunk
// from peer (i - s). Each result slot is written once.
std::vector<CollectiveSpan> emit_all_to_all(Program& program, const CollectiveSpec& spec,
                                            const std::vector<Member>& ring,
                                            const SymmetricHandle& data,
                                            const SymmetricHandle& result, int64_t c) {
  const int p = static_cast<int>(ring.size());
  const auto labels = step_labels(program, spec, "pairwise all_to_all", p - 1);
  return emit_each(program, ring, [&](const Member& m) {
    for (int s = 1; s < p; ++s) {
      const int to = m.wrap(m.index + s);
      const int from = m.wrap(m.index - s);
      program.put_signal(m.rank, m.stream, data.whole().slice(to * c, c), result, m.index * c, to,
                         labels[s - 1], spec.signal);
      program.wait_signal(m.rank, m.stream, result, from, labels[s - 1], spec.signal);
    }
  });
}

void record(Program& program, CollectiveOp op, const CollectiveSpec& spec,
            const CollectiveBuffers& buffers, std::vector<CollectiveSpan> spans) {
  CollectiveRecord r;
  r.op = op;
  r.algorithm = algorithm_of(op);
  r.group = spec.group;
  r.bytes = spec.bytes;
  r.chunk_bytes = buffers.chunk_bytes;
  r.dtype = spec.dtype;
  r.reduction = spec.op;
  r.name = spec.name;
  r.data = buffers.data.id;
  r.staging = buffers.staging.id;
  r.result = buffers.result.id;
  r.spans = std::move(spans);
  program.record_collective(std::move(r));
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
  out.data = out.result =
      ensure_buffer(program, spec, data, p * out.chunk_bytes, "all-gather data");
  auto spans = emit_all_gather(program, spec, ring, out.data, out.chunk_bytes);
  record(program, CollectiveOp::all_gather, spec, out, std::move(spans));
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
  out.data = out.result = ensure_buffer(program, spec, data, p * c, "reduce-scatter data");
  if (p == 1) return out;  // one rank: its buffer is already the (sum or average) result
  out.staging = program.symm_alloc(spec.group, (p - 1) * c);
  auto spans = emit_reduce_scatter(program, spec, ring, out.data, out.staging, c);
  record(program, CollectiveOp::reduce_scatter, spec, out, std::move(spans));
  return out;
}

CollectiveBuffers ring_all_reduce(Program& program, const CollectiveSpec& spec,
                                  SymmetricHandle data) {
  check(spec);
  const auto ring = members(program, spec);
  const int p = static_cast<int>(ring.size());
  CollectiveBuffers out;
  out.chunk_bytes = spec.chunk_bytes(p);
  const int64_t c = out.chunk_bytes;
  out.data = out.result = ensure_buffer(program, spec, data, p * c, "all-reduce data");
  if (p == 1) return out;
  // Reduce-scatter, then all-gather the reduced chunks in place: each member's ops stay
  // contiguous in its stream, one span per member.
  out.staging = program.symm_alloc(spec.group, (p - 1) * c);
  auto spans = emit_reduce_scatter(program, spec, ring, out.data, out.staging, c);
  CollectiveSpec gather = spec;
  gather.bytes = c * p;
  const auto gathered = emit_all_gather(program, gather, ring, out.data, c);
  for (size_t i = 0; i < spans.size(); ++i) spans[i].op_count += gathered[i].op_count;
  record(program, CollectiveOp::all_reduce, spec, out, std::move(spans));
  return out;
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
  auto spans = emit_all_to_all(program, spec, ring, out.data, out.result, c);
  record(program, CollectiveOp::all_to_all, spec, out, std::move(spans));
  return out;
}

// Emitters, algorithms and the kinds that name each collective are the rows of
// core/collective_descriptor.cpp.
CollectiveBuffers run_collective(Program& program, CollectiveOp op, const CollectiveSpec& spec,
                                 SymmetricHandle data) {
  const CollectiveDescriptor& d = descriptor_of(op);
  if (d.emit) return d.emit(program, spec, data);
  throw InvalidArgument(
      to_string(op) + " is written with its matmul (strategies/collective_matmul)", spec.name);
}

CollectiveOp collective_op_of(OpKind kind) {
  if (const CollectiveDescriptor* d = descriptor_of(kind))
    if (d->record) return *d->record;
  throw InvalidArgument("not a collective: " + to_string(kind), "collectives");
}

std::optional<CollectiveOp> collective_op_of(CollectiveKind kind) {
  const CollectiveDescriptor* d = descriptor_of(kind);
  return d ? d->record : std::nullopt;
}

CollectiveAlgorithm algorithm_of(CollectiveOp op) {
  return descriptor_of(op).algorithm;
}

void library_all_gather(const LibrarySlots& s) {
  using B = LibrarySlots::Buffer;
  for (int i = 0; i < s.members; ++i)
    for (int j = 0; j < s.members; ++j)
      if (j != i) std::memcpy(s.slot(B::data, j, i), s.slot(B::data, i, i), s.chunk_bytes);
}

void library_reduce_scatter(const LibrarySlots& s) {
  using B = LibrarySlots::Buffer;
  std::vector<std::vector<unsigned char>> sums;
  for (int i = 0; i < s.members; ++i) sums.push_back(s.reduced(i));
  for (int i = 0; i < s.members; ++i)
    std::memcpy(s.slot(B::data, i, i), sums[i].data(), s.chunk_bytes);
}

void library_all_reduce(const LibrarySlots& s) {
  using B = LibrarySlots::Buffer;
  for (int i = 0; i < s.members; ++i) {
    const std::vector<unsigned char> sum = s.reduced(i);
    for (int j = 0; j < s.members; ++j)
      std::memcpy(s.slot(B::data, j, i), sum.data(), s.chunk_bytes);
  }
}

void library_all_to_all(const LibrarySlots& s) {
  using B = LibrarySlots::Buffer;
  for (int i = 0; i < s.members; ++i)
    for (int j = 0; j < s.members; ++j)
      if (j != i) std::memcpy(s.slot(B::result, i, j), s.slot(B::data, j, i), s.chunk_bytes);
}

void free_collective_buffers(Program& program, const CollectiveBuffers& buffers,
                             const std::string& stream) {
  if (buffers.staging.id >= 0) program.symm_free(buffers.staging, stream);
  if (buffers.data.id >= 0) program.symm_free(buffers.data, stream);
}

}  // namespace symmesh
