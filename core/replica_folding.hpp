#pragma once
// Identical replicas folded into one: a Program (core/program.hpp) that stands for a mesh
// whose replicas along one dim (data parallelism) run the same ops at the same times holds
// the ops of replica 0 only. World rank w lies in replica (w / stride) % replicas; ranks of
// replica 0 are represented, the others folded: their ops are never written, and a backend
// reads what they would do off replica 0 by translation along the folded dim.
//
// The symmetry is the translation τ_c that adds c (mod replicas) to a rank's replica and
// keeps its other coordinates: every op of rank w is, moved by τ_c, an op of τ_c(w) at the
// same time. So a folded rank p's put to a represented rank r is, moved by τ_(-c) with c =
// replica_of(p), the put of mirror(p) (represented) to shifted(r, -c) (folded), with the
// same group, signal index and order; a backend counts that put's deliveries as those of
// p → r (sim/stream_ops.cpp). A put from a represented rank to a folded one is a real
// transfer on the links between them: the links a folded rank uses alone (its NIC's other
// direction, its own node's) are not simulated, and neither are its flows through links it
// shares with other replicas (a leaf's uplink); docs/commands.md says so where it describes
// `simulate` of a model's step.
//
// It holds for what the collectives write (core/collectives.hpp: rings and the pairwise
// exchange step from group index i to i + k, mod the group's size) over groups that a
// translation maps onto themselves: the ranks along a mesh dim, or along several of them.
#include <string>

#include "core/errors.hpp"

namespace symmesh {

struct ReplicaFolding {
  int replicas = 1;  // the folded dim's size; 1 folds nothing
  int stride = 1;    // world ranks between a rank and its copy in the next replica

  bool folds() const { return replicas > 1; }
  int replica_of(int rank) const { return (rank / stride) % replicas; }
  bool represented(int rank) const { return replica_of(rank) == 0; }
  // The represented rank whose ops `rank`'s ops copy: `rank` with its replica set to 0.
  int mirror(int rank) const { return rank - replica_of(rank) * stride; }
  // τ_by(rank): its replica moved by `by` (any sign), its other coordinates kept.
  int shifted(int rank, int by) const {
    const int now = replica_of(rank);
    const int to = ((now + by) % replicas + replicas) % replicas;
    return rank + (to - now) * stride;
  }
  // Throws InvalidArgument unless `world_size` ranks hold whole replicas of this shape.
  void check(int world_size) const {
    if (replicas < 1 || stride < 1 || world_size % (replicas * stride) != 0)
      throw InvalidArgument("a folding of " + std::to_string(replicas) + " replicas " +
                                std::to_string(stride) + " ranks apart does not tile " +
                                std::to_string(world_size) + " ranks",
                            "ReplicaFolding");
  }
};

}  // namespace symmesh
