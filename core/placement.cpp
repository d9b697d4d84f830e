#include "core/placement.hpp"

#include <cctype>
#include <charconv>

#include "core/errors.hpp"
#include "core/text.hpp"

namespace symmesh {
namespace {

std::string without_spaces(std::string_view text) {
  std::string out;
  for (char c : text)
    if (!std::isspace(static_cast<unsigned char>(c))) out += c;
  return out;
}

// Splits "Name(arg)" into name and arg; `has_parens` tells whether parentheses were there.
struct Call {
  std::string name;
  std::string arg;
  bool has_parens = false;
};

Call split_call(const std::string& text, const std::string& original, std::string_view where) {
  Call call;
  auto open = text.find('(');
  if (open == std::string::npos) {
    call.name = text;
    return call;
  }
  if (text.back() != ')' || text.find('(', open + 1) != std::string::npos)
    throw InvalidArgument("malformed placement '" + original + "'", std::string(where));
  call.name = text.substr(0, open);
  call.arg = text.substr(open + 1, text.size() - open - 2);
  call.has_parens = true;
  return call;
}

}  // namespace

Placement Placement::shard(int dim) {
  if (dim < 0) throw InvalidArgument("shard dim must be >= 0, got " + std::to_string(dim), "Shard");
  return Placement(Kind::shard, dim, ReduceOp::sum);
}

int Placement::shard_dim() const {
  if (!is_shard()) throw InvalidArgument("not a shard: " + to_string(*this), "shard_dim");
  return dim_;
}

ReduceOp Placement::reduce_op() const {
  if (!is_partial()) throw InvalidArgument("not a partial: " + to_string(*this), "reduce_op");
  return op_;
}

bool Placement::operator==(const Placement& other) const {
  if (kind_ != other.kind_) return false;
  if (kind_ == Kind::shard) return dim_ == other.dim_;
  if (kind_ == Kind::partial) return op_ == other.op_;
  return true;
}

std::string to_string(ReduceOp op) {
  return op == ReduceOp::sum ? "sum" : "avg";
}

std::string to_string(const Placement& placement) {
  switch (placement.kind()) {
    case Placement::Kind::shard:
      return "S(" + std::to_string(placement.shard_dim()) + ")";
    case Placement::Kind::replicate:
      return "R";
    case Placement::Kind::partial:
      return "P(" + to_string(placement.reduce_op()) + ")";
  }
  return "?";
}

std::string to_string(const Placements& placements) {
  return join(placements, ",", [](const Placement& p) { return to_string(p); });
}

Placement parse_placement(std::string_view text, std::string_view where) {
  const std::string original(text);
  const std::string compact = without_spaces(text);
  if (compact.empty()) throw InvalidArgument("empty placement", std::string(where));
  const Call call = split_call(compact, original, where);

  if (call.name == "S" || call.name == "Shard") {
    if (!call.has_parens || call.arg.empty())
      throw InvalidArgument("shard needs a tensor dim, e.g. S(0); got '" + original + "'",
                            std::string(where));
    int dim = 0;
    const char* first = call.arg.data();
    const char* last = first + call.arg.size();
    auto [ptr, ec] = std::from_chars(first, last, dim);
    if (ec == std::errc::result_out_of_range && ptr == last)
      throw InvalidArgument("shard dim in '" + original + "' is too large (a tensor has at most " +
                                "a few dims)",
                            std::string(where));
    if (ec != std::errc() || ptr != last)
      throw InvalidArgument("shard dim in '" + original + "' is not an integer",
                            std::string(where));
    if (dim < 0)
      throw InvalidArgument("shard dim in '" + original + "' must be >= 0", std::string(where));
    return Placement::shard(dim);
  }
  if (call.name == "R" || call.name == "Replicate") {
    if (!call.arg.empty())
      throw InvalidArgument("replicate takes no argument: '" + original + "'", std::string(where));
    return Placement::replicate();
  }
  if (call.name == "P" || call.name == "Partial") {
    if (call.arg.empty() || call.arg == "sum") return Placement::partial(ReduceOp::sum);
    if (call.arg == "avg") return Placement::partial(ReduceOp::avg);
    throw Unsupported(
        "partial reduce op '" + call.arg + "' in '" + original + "' is not supported (sum or avg)",
        std::string(where));
  }
  throw InvalidArgument("unknown placement '" + original + "' (expected S(d), R, P(sum) or P(avg))",
                        std::string(where));
}

Placements parse_placements(std::string_view text, std::string_view where) {
  std::string compact = without_spaces(text);
  if (compact.size() >= 2 && compact.front() == '[' && compact.back() == ']')
    compact = compact.substr(1, compact.size() - 2);
  if (compact.empty()) throw InvalidArgument("empty placement list", std::string(where));
  Placements out;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i <= compact.size(); ++i) {
    const char c = i < compact.size() ? compact[i] : ',';
    if (c == '(') ++depth;
    if (c == ')') --depth;
    // Unbalanced parentheses would hide items from the split: "R,S(0" must not read as "R".
    if (depth < 0 || (i == compact.size() && depth != 0))
      throw InvalidArgument("unbalanced parentheses in placement list '" + std::string(text) + "'",
                            std::string(where));
    if (c == ',' && depth == 0) {
      const std::string item = compact.substr(start, i - start);
      const std::string item_where = std::string(where) + "[" + std::to_string(out.size()) + "]";
      if (item.empty())
        throw InvalidArgument("empty placement in list '" + std::string(text) + "'", item_where);
      out.push_back(parse_placement(item, item_where));
      start = i + 1;
    }
  }
  return out;
}

}  // namespace symmesh
