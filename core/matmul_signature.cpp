#include "core/matmul_signature.hpp"

#include "core/errors.hpp"

namespace symmesh {
namespace {

constexpr std::string_view kEllipsis = "...";

// The names "..." takes for a's leading dims, by how many there are.
std::string ellipsis_letters(int count) {
  return count == 1 ? "m" : "bm";
}

// How many dims `dims` has once "..." is expanded to between 1 and 2 letters.
struct RankRange {
  int lo = 0;
  int hi = 0;
};
RankRange rank_range(std::string_view dims) {
  const int explicit_dims = static_cast<int>(dims.size());
  if (dims.find(kEllipsis) == std::string_view::npos) return {explicit_dims, explicit_dims};
  const int rest = explicit_dims - static_cast<int>(kEllipsis.size());
  return {rest + 1, rest + 2};
}

std::string rank_text(RankRange r) {
  if (r.lo == r.hi) return std::to_string(r.lo) + "-D";
  return std::to_string(r.lo) + "-D or " + std::to_string(r.hi) + "-D";
}

std::string expand(std::string_view dims, int letters) {
  std::string out(dims);
  const auto at = out.find(kEllipsis);
  if (at != std::string::npos) out.replace(at, kEllipsis.size(), ellipsis_letters(letters));
  return out;
}

// Splits a table equation "lhs,rhs->out" into its three parts, unexpanded.
struct Parts {
  std::string_view lhs, rhs, out;
};
Parts parts_of(std::string_view equation) {
  const auto comma = equation.find(',');
  const auto arrow = equation.find("->");
  return {equation.substr(0, comma), equation.substr(comma + 1, arrow - comma - 1),
          equation.substr(arrow + 2)};
}

const char* ordinal(int index) {
  static const char* names[] = {"first", "second", "third", "fourth"};
  return index >= 0 && index < 4 ? names[index] : "?";
}

}  // namespace

const MatmulSignature& matmul_signature(OpKind op) {
  static const MatmulSignature table[] = {
      {OpKind::mm, "mk,kn->mn", BiasUse::none, false},
      {OpKind::bmm, "bmk,bkn->bmn", BiasUse::none, false},
      {OpKind::addmm, "mk,kn->mn", BiasUse::required, true},
      {OpKind::baddbmm, "bmk,bkn->bmn", BiasUse::required, true},
      {OpKind::linear, "...k,nk->...n", BiasUse::optional, false},
  };
  for (const MatmulSignature& s : table)
    if (s.op == op) return s;
  throw InvalidArgument("'" + to_string(op) + "' is not a matrix op", "matmul signature");
}

std::vector<TensorSpec> MatmulSignature::inputs_in_order(TensorSpec a, TensorSpec b,
                                                         std::optional<TensorSpec> bias) const {
  std::vector<TensorSpec> out{std::move(a), std::move(b)};
  if (bias) out.insert(bias_first ? out.begin() : out.end(), std::move(*bias));
  return out;
}

MatmulEquation::MatmulEquation(OpKind op, int a_rank, bool with_bias)
    : op_(op), with_bias_(with_bias), sig_(&matmul_signature(op)) {
  const MatmulSignature& sig = *sig_;
  if (with_bias && sig.bias == BiasUse::none)
    throw InvalidArgument(to_string(op) + " takes no bias", "matmul signature");
  if (!with_bias && sig.bias == BiasUse::required)
    throw InvalidArgument(to_string(op) + " needs a bias", "matmul signature");
  const Parts parts = parts_of(sig.equation);
  const RankRange range = rank_range(parts.lhs);
  if (a_rank < range.lo || a_rank > range.hi)
    throw InvalidArgument(
        to_string(op) + " needs a " + rank_text(range) + " a, not " + std::to_string(a_rank) + "-D",
        "matmul signature");
  const int leading = a_rank - (range.lo - 1);
  eq_ = parse_einsum(expand(parts.lhs, leading) + "," + expand(parts.rhs, leading) + "->" +
                     expand(parts.out, leading));
}

MatmulEquation MatmulEquation::of(OpKind op, const Shape& a, bool with_bias) {
  return MatmulEquation(op, static_cast<int>(a.size()), with_bias);
}

MatmulEquation::Role MatmulEquation::role(char letter) const {
  const bool in_lhs = letter_index(eq_.lhs, letter) >= 0;
  const bool in_rhs = letter_index(eq_.rhs, letter) >= 0;
  const bool in_out = letter_index(eq_.out, letter) >= 0;
  if (in_lhs && in_rhs) return in_out ? Role::batch : Role::k;
  return in_lhs ? Role::m : Role::n;
}

int64_t MatmulEquation::product(const Shape& shape, const std::string& dims, Role r) const {
  int64_t out = 1;
  for (size_t i = 0; i < dims.size(); ++i)
    if (role(dims[i]) == r) out *= shape.at(i);
  return out;
}

int MatmulEquation::lhs_index() const {
  return sig_->lhs_index(with_bias_);
}
int MatmulEquation::rhs_index() const {
  return lhs_index() + 1;
}
int MatmulEquation::bias_index() const {
  return sig_->bias_index(with_bias_);
}

std::vector<std::string> MatmulEquation::input_names() const {
  std::vector<std::string> names{"a", "b"};
  if (with_bias_) names.insert(names.begin() + bias_index(), "bias");
  return names;
}

Shape MatmulEquation::output_shape(const Shape& a, const Shape& b) const {
  Shape out;
  for (char c : eq_.out) {
    const int i = letter_index(eq_.lhs, c);
    out.push_back(i >= 0 ? a.at(i) : b.at(letter_index(eq_.rhs, c)));
  }
  return out;
}

LocalGemm MatmulEquation::local_gemm(const Shape& a, const Shape& b) const {
  LocalGemm g;
  g.batch = product(a, eq_.lhs, Role::batch);
  g.m = product(a, eq_.lhs, Role::m);
  g.k = product(a, eq_.lhs, Role::k);
  g.n = product(b, eq_.rhs, Role::n);
  // b is [batch…, n…, k…] rather than [batch…, k…, n…]: its first non-batch dim is an n.
  for (char c : eq_.rhs) {
    if (role(c) == Role::batch) continue;
    g.transpose_b = role(c) == Role::n;
    break;
  }
  return g;
}

BiasStrides MatmulEquation::bias_strides(const Shape& bias, const Shape& out) const {
  // Per output letter: the bias dim it meets from the right, and that dim's element stride
  // (0 where the bias is broadcast). A GEMM dim that flattens several letters takes the
  // innermost letter's stride; check() rejects biases for which that is not exact.
  const int shift = static_cast<int>(out.size()) - static_cast<int>(bias.size());
  BiasStrides s;
  for (int j = static_cast<int>(eq_.out.size()) - 1; j >= 0; --j) {
    const int i = j - shift;
    if (i < 0 || bias.at(i) == 1) continue;
    int64_t stride = 1;
    for (size_t t = static_cast<size_t>(i) + 1; t < bias.size(); ++t) stride *= bias[t];
    int64_t* group = nullptr;
    switch (role(eq_.out[j])) {
      case Role::batch:
        group = &s.batch;
        break;
      case Role::m:
        group = &s.row;
        break;
      default:
        group = &s.col;
        break;
    }
    if (*group == 0) *group = stride;  // innermost first (j runs backwards)
  }
  return s;
}

bool MatmulEquation::leading_is_batch() const {
  return role(eq_.lhs[0]) == Role::batch;
}

int64_t MatmulEquation::gemm_extent_per_leading(const Shape& a) const {
  const Role lead = role(eq_.lhs[0]);
  int64_t out = 1;
  for (size_t i = 1; i < eq_.lhs.size(); ++i)
    if (role(eq_.lhs[i]) == lead) out *= a.at(i);
  return out;
}

std::optional<ShapeProblem> MatmulEquation::check(OpKind op, const Shape& a, const Shape& b,
                                                  const Shape* bias) {
  const MatmulSignature& sig = matmul_signature(op);
  const std::string name = to_string(op);
  const Parts parts = parts_of(sig.equation);
  const RankRange a_range = rank_range(parts.lhs);
  const int a_rank = static_cast<int>(a.size());
  if (a_rank < a_range.lo || a_rank > a_range.hi)
    return ShapeProblem{"a",
                        name + " needs a " + rank_text(a_range) + " tensor, got " + to_string(a),
                        a_range.lo == a_range.hi ? std::vector<int>{a_range.lo}
                                                 : std::vector<int>{a_range.lo, a_range.hi}};
  if (sig.bias == BiasUse::none && bias)
    return ShapeProblem{"bias", name + " takes no bias (use addmm or baddbmm)", {}};
  if (sig.bias == BiasUse::required && !bias)
    return ShapeProblem{"bias", name + " needs a bias", {}};
  const MatmulEquation eq(op, a_rank, bias != nullptr);
  const EinsumEquation& e = eq.einsum();
  if (b.size() != e.rhs.size())
    return ShapeProblem{
        "b",
        name + " needs a " + std::to_string(e.rhs.size()) + "-D tensor, got " + to_string(b),
        {static_cast<int>(e.rhs.size())}};
  // The contracted dims first: a wrong inner size is the commoner slip.
  for (const Role shared : {Role::k, Role::batch})
    for (size_t i = 0; i < e.lhs.size(); ++i) {
      const int j = letter_index(e.rhs, e.lhs[i]);
      if (j < 0 || eq.role(e.lhs[i]) != shared || a[i] == b[j]) continue;
      const std::string shapes = "a is " + to_string(a) + ", b is " + to_string(b);
      if (shared == Role::batch) return ShapeProblem{"b", "batch dims differ: " + shapes, {}};
      return ShapeProblem{
          "b",
          "inner dims differ: " + shapes + " (a's last dim must equal b's " + ordinal(j) + ")",
          {}};
    }
  if (!bias) return std::nullopt;
  const Shape out = eq.output_shape(a, b);
  if (bias->size() > out.size())
    return ShapeProblem{
        "bias",
        "bias " + to_string(*bias) + " has more dims than the output " + to_string(out),
        {}};
  const size_t shift = out.size() - bias->size();
  for (size_t i = 0; i < bias->size(); ++i)
    if ((*bias)[i] != 1 && (*bias)[i] != out[shift + i])
      return ShapeProblem{"bias",
                          "bias " + to_string(*bias) + " does not broadcast to the output " +
                              to_string(out) +
                              " (each of its trailing dims must be 1 or the output's)",
                          {}};
  // Several output dims flattened into one GEMM dim (a [batch, sequence, hidden] linear's
  // rows) are one stride only when the bias is broadcast along all of them or none.
  for (const Role group : {Role::batch, Role::m, Role::n}) {
    int broadcast = 0, held = 0;
    for (size_t j = 0; j < out.size(); ++j) {
      if (eq.role(e.out[j]) != group || out[j] == 1) continue;
      const bool along = j < shift || (*bias)[j - shift] == 1;
      (along ? broadcast : held) += 1;
    }
    if (broadcast > 0 && held > 0)
      return ShapeProblem{"bias",
                          "bias " + to_string(*bias) + " is broadcast along some of the " +
                              "output dims " + name + " multiplies as one (output " +
                              to_string(out) + "); give it the output's last dim only, " +
                              "e.g. [" + std::to_string(out.back()) + "]",
                          {}};
  }
  return std::nullopt;
}

}  // namespace symmesh
