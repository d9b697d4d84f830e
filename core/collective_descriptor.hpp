#pragma once
// One descriptor per collective: everything symmesh knows about a collective, in one row
// of one table (core/collective_descriptor.cpp). The enums that name a collective in one
// context — CollectiveOp (the Program's record tag), BandwidthCollective (nccl-tests' set),
// CollectiveKind (a placement transition), OpKind (a workload op) — stay as they are, but
// their names, parsing, bus-bandwidth factors, NCCL algorithms, ring shapes, one-sided
// algorithms and emitters are read from the row, not from a switch per enum:
//
//   name, aliases         "all_to_all", nccl-tests' "alltoall"
//   bus-bandwidth factor  busbw = algbw × (ring_passes·(n-1)/n + bus_constant)
//                         (NVIDIA/nccl-tests doc/PERFORMANCE.md)
//   ring shape            steps = steps_per_peer·(p-1) + extra_steps, each moving
//                         ceil(S/p) (or S where step_moves_whole_buffer) over one link
//   NCCL algorithms       which LibraryAlgorithm may run it (NVLS only inside a node)
//   record tag            the CollectiveOp the Program records, when the core writes it
//   emitter               the put_signal / wait_signal writer (core/collectives.hpp)
//   native call           the NCCL function that replaces it (`--collectives nccl`), and
//                         where a simulation that runs that call puts the data
//
// Adding a collective: its enumerators, one row, and its emitter.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/bus_bandwidth.hpp"
#include "core/collective_record.hpp"
#include "core/collective_tuning.hpp"
#include "core/op_kind.hpp"
#include "core/redistribution.hpp"

namespace symmesh {

class Program;
struct CollectiveSpec;
struct CollectiveBuffers;
struct SymmetricHandle;
struct LibrarySlots;

// Writes the collective as put_signal / wait_signal steps and records it
// (core/collectives.hpp: ring_all_gather, …).
using CollectiveEmitter = CollectiveBuffers (*)(Program&, const CollectiveSpec&, SymmetricHandle);
// Moves the data as the NCCL call would, for an emulated simulation (core/collectives.hpp:
// library_all_gather, …).
using LibraryDataMove = void (*)(const LibrarySlots&);

// A placement class, for the transition a collective performs on one mesh dim.
enum class PlacementClass : uint8_t { shard, replicate, partial };

struct CollectiveDescriptor {
  std::string_view name;                    // "all_gather": every enum's text form
  std::array<std::string_view, 2> aliases;  // other spellings (nccl-tests' "alltoall"); "" unused

  // The enumerators naming it, where it has one.
  std::optional<CollectiveOp> record;             // the tag of its CollectiveRecord
  std::optional<BandwidthCollective> bandwidth;   // nccl-tests measures it
  std::optional<CollectiveKind> transition;       // a placement transition runs it
  std::optional<OpKind> op_kind;                  // scenario files write it as an op

  // nccl-tests' bus-bandwidth factor: ring_passes·(n-1)/n + bus_constant.
  int ring_passes = 0;
  int bus_constant = 0;

  // Its ring (NCCL's tuner counts these steps, src/graph/tuning.cc; the core's emitter
  // writes exactly them): steps_per_peer·(p-1) + extra_steps steps, each moving
  // ceil(S/p) bytes over one link, or S where step_moves_whole_buffer.
  int steps_per_peer = 0;
  int extra_steps = 0;
  bool step_moves_whole_buffer = false;

  // The placement transition on one mesh dim (from → to), where `transition` is set.
  PlacementClass from = PlacementClass::shard;
  PlacementClass to = PlacementClass::shard;

  bool reduces = false;  // combines values (sum or avg): reduce-scatter, all-reduce, reduce

  // How the core writes it over put_signal / wait_signal, and the emitter that does;
  // nullptr: written elsewhere (a fused collective matmul, strategies/collective_matmul)
  // or not written by the core at all.
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::ring;
  CollectiveEmitter emit = nullptr;

  // The NCCL algorithms that may run it (NCCL 2.28; NVLS only inside a node, which
  // collective_may_use checks). Empty: NCCL has no such collective.
  std::vector<LibraryAlgorithm> library_algorithms;
  // The NCCL call that replaces the core's steps ("ncclAllGather"); empty: none (fused),
  // and where its data lands when a simulation runs it as that call (nullptr where the
  // core writes no such record).
  std::string_view native_call;
  LibraryDataMove library_move = nullptr;
};

// Every row, in a fixed order: the plain collectives, then the ones only nccl-tests names,
// then the fused collective matmuls.
const std::vector<CollectiveDescriptor>& collective_descriptors();

// The row named `text` or one of its aliases; nullptr for anything else.
const CollectiveDescriptor* find_collective(std::string_view text);
// The row of each enumerator. Every CollectiveOp and BandwidthCollective has one; a
// CollectiveKind or OpKind that is not a collective (local steps, matmuls) has none.
const CollectiveDescriptor& descriptor_of(CollectiveOp op);
const CollectiveDescriptor& descriptor_of(BandwidthCollective op);
const CollectiveDescriptor* descriptor_of(CollectiveKind kind);
const CollectiveDescriptor* descriptor_of(OpKind kind);

// busbw / algbw over `ranks` (n >= 1; fewer is taken as 1).
double bus_bandwidth_factor(const CollectiveDescriptor& d, int ranks);
// Steps of its ring over `ranks`, and the bytes each step moves over one link for a
// collective of `bytes` (the nccl-tests size).
int ring_steps(const CollectiveDescriptor& d, int ranks);
int64_t ring_step_bytes(const CollectiveDescriptor& d, int64_t bytes, int ranks);
// Whether NCCL may run it with `algorithm` in a group inside one node (`intra_node`) or
// across nodes.
bool collective_may_use(const CollectiveDescriptor& d, LibraryAlgorithm algorithm,
                        bool intra_node);

}  // namespace symmesh
