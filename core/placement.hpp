#pragma once
// How one tensor is laid out along one mesh dim, as in PyTorch DTensor:
// Shard(d) splits tensor dim d with torch.chunk, Replicate keeps a full copy,
// Partial(sum|avg) keeps a partial value that a reduction turns into the real one.
// One canonical text form everywhere: S(0), R, P(sum), P(avg); lists "S(0),R".
#include <string>
#include <string_view>
#include <vector>

namespace symmesh {

enum class ReduceOp { sum, avg };

class Placement {
 public:
  enum class Kind { shard, replicate, partial };

  static Placement shard(int dim);
  static Placement replicate() { return Placement(Kind::replicate, 0, ReduceOp::sum); }
  static Placement partial(ReduceOp op = ReduceOp::sum) { return Placement(Kind::partial, 0, op); }

  Kind kind() const { return kind_; }
  bool is_shard() const { return kind_ == Kind::shard; }
  bool is_shard(int dim) const { return kind_ == Kind::shard && dim_ == dim; }
  bool is_replicate() const { return kind_ == Kind::replicate; }
  bool is_partial() const { return kind_ == Kind::partial; }
  int shard_dim() const;       // only for shards
  ReduceOp reduce_op() const;  // only for partials

  bool operator==(const Placement& other) const;
  bool operator!=(const Placement& other) const { return !(*this == other); }

 private:
  Placement(Kind kind, int dim, ReduceOp op) : kind_(kind), dim_(dim), op_(op) {}
  Kind kind_;
  int dim_;
  ReduceOp op_;
};

using Placements = std::vector<Placement>;

std::string to_string(ReduceOp op);
std::string to_string(const Placement& placement);
std::string to_string(const Placements& placements);  // "S(0),R"

// Accepts S(0), Shard(0), R, Replicate, Replicate(), P, Partial, P(sum), P(avg),
// Partial(sum), with any spaces. Throws InvalidArgument (malformed) or Unsupported
// (a reduce op other than sum/avg); the message names `where`.
Placement parse_placement(std::string_view text, std::string_view where = "placement");
// "S(0),R" or "[S(0), R]"; never empty.
Placements parse_placements(std::string_view text, std::string_view where = "placements");

}  // namespace symmesh
