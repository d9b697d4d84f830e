#pragma once
// Collectives written once over the one-sided primitives (put_signal / wait_signal) plus
// local compute, over one group (for plans: the ranks along one mesh dim). Every backend
// runs exactly these algorithms. `bytes` follows nccl-tests: the whole buffer on each
// rank (all-gather: the gathered output; reduce-scatter: the input; all-reduce and
// all-to-all: the buffer). With p ranks the chunk is c = ceil(bytes / p): uneven
// buffers are padded to equal chunks, as NCCL requires and DTensor does.
//
// Data layout, for callers that carry bytes: each collective works in a symmetric
// `data` buffer of p·c bytes per rank (allocated here unless given):
//   all-gather:     before, rank i's chunk sits at data[i·c, (i+1)·c); after, all chunks.
//   reduce-scatter: before, the whole partial buffer; after, rank i's slot i is reduced.
//   all-reduce:     before, the partial buffer; after, the reduced buffer everywhere.
//   all-to-all:     before, slot j holds what goes to peer j; after, `result` slot j
//                   (j != i) holds what peer j sent. Rank i's own chunk is not copied:
//                   it stays in data slot i, which the caller reads from there.
// Closed forms on uncontended links of latency α and bandwidth β (what the tests check):
//   ring all-gather / reduce-scatter: (p-1)(α + c/β); all-reduce: 2(p-1)(α + c/β);
//   all-to-all (pairwise exchange, one peer per step): (p-1)(α + c/β).
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/collective_record.hpp"
#include "core/op_kind.hpp"
#include "core/placement.hpp"
#include "core/program.hpp"
#include "core/redistribution.hpp"

namespace symmesh {

struct CollectiveSpec {
  GroupId group = -1;
  int64_t bytes = 0;
  DType dtype = DType::fp32;        // element type, for reductions
  ReduceOp op = ReduceOp::sum;      // avg divides by p at the end
  std::string stream = "comm";      // the stream (by name) on every member
  std::string name = "collective";  // label name of every op (e.g. the workload op)
  // The signal index of its puts and waits. A group's counters are shared by all its
  // buffers (core/program.hpp): collectives that may run at once on one group — on two
  // streams — must use different indices, or one's signals satisfy the other's waits.
  int signal = 0;

  // ceil(bytes / p), rounded up to whole elements.
  int64_t chunk_bytes(int group_size) const;
};

struct CollectiveBuffers {
  SymmetricHandle data;     // see the layout above
  SymmetricHandle staging;  // reduce-scatter receive slots; all-to-all receive slots
  SymmetricHandle result;   // where the result lives (data, or staging for all-to-all)
  int64_t chunk_bytes = 0;
};

// Each returns the buffers it used and records the collective in the Program
// (core/collective_record.hpp: its kind, group, bytes, algorithm, buffers and every
// member's span of ops). Passing `data` (of at least p·c bytes, over the same group) lets
// the caller fill it first; otherwise one is allocated.
CollectiveBuffers ring_all_gather(Program& program, const CollectiveSpec& spec,
                                  SymmetricHandle data = {});
CollectiveBuffers ring_reduce_scatter(Program& program, const CollectiveSpec& spec,
                                      SymmetricHandle data = {});
CollectiveBuffers ring_all_reduce(Program& program, const CollectiveSpec& spec,
                                  SymmetricHandle data = {});
CollectiveBuffers pairwise_all_to_all(Program& program, const CollectiveSpec& spec,
                                      SymmetricHandle data = {});

// The collective `op` (not a fused one) by its algorithm: ring all-gather, reduce-scatter
// and all-reduce, pairwise all-to-all.
CollectiveBuffers run_collective(Program& program, CollectiveOp op, const CollectiveSpec& spec,
                                 SymmetricHandle data = {});

// The collective a workload op kind names (all_gather, …); throws InvalidArgument for a
// kind that is not a collective.
CollectiveOp collective_op_of(OpKind kind);
// The collective a redistribution step runs; nullopt for the local steps (a rank keeps its
// chunk, or zeros for a partial): nothing moves.
std::optional<CollectiveOp> collective_op_of(CollectiveKind kind);
// The one-sided algorithm the core writes a collective with.
CollectiveAlgorithm algorithm_of(CollectiveOp op);

// What the collective library's call (NCCL's) leaves in a group's buffers, for a
// simulation that runs a recorded collective as NCCL would and still carries real bytes
// (sim/library_collectives.cpp): the data lands where the one-sided steps above put it.
struct LibrarySlots {
  enum class Buffer { data, result };
  int members = 0;
  int64_t chunk_bytes = 0;
  // Slot i (chunk_bytes long) of member m's data or result buffer.
  std::function<unsigned char*(Buffer, int m, int i)> slot;
  // The reduction over every member of its data slot i (sum, or avg), in the dtype.
  std::function<std::vector<unsigned char>(int i)> reduced;
};
void library_all_gather(const LibrarySlots& s);
void library_reduce_scatter(const LibrarySlots& s);
void library_all_reduce(const LibrarySlots& s);
void library_all_to_all(const LibrarySlots& s);

// Releases what a collective allocated (appended to every member's stream).
void free_collective_buffers(Program& program, const CollectiveBuffers& buffers,
                             const std::string& stream);

}  // namespace symmesh
