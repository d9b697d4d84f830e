#pragma once
// Ground truth for sharding rules: run the op sharded and unsharded with real numbers and
// compare. Nothing here calls the strategy engine; sharding follows torch.chunk and DTensor's
// documented semantics, written out again on purpose:
//   Shard(d)      rank r holds torch.chunk(x, n, d)[r] (ceil-sized chunks, trailing ones
//                 smaller or empty); nested over mesh dims, outer mesh dim first.
//   Replicate     every rank holds x.
//   Partial(sum)  rank r holds a piece; the pieces sum to x.
//   Partial(avg)  rank r holds a piece; the pieces' mean is x.
// Pieces are w_r * x + e_r with asymmetric weights (sum 1, or mean 1 for avg) plus random
// noise e_r whose sum is 0, which is stricter than scaled copies alone.
// A sharded run is correct when the output reassembled from the output placement equals the
// unsharded result to 1e-9 (double precision), and every local shape matches.
#include <Eigen/Dense>

#include <cmath>
#include <optional>
#include <random>
#include <vector>

#include "core/device_mesh.hpp"
#include "core/placement.hpp"
#include "core/tensor_spec.hpp"
#include "strategies/op_problem.hpp"

namespace symmesh::strategies::testing {

constexpr double kTolerance = 1e-9;

// addmm and baddbmm: the ops these ground truths cover that take a bias (it comes first).
inline bool takes_bias(OpKind op) {
  return matmul_signature(op).bias == BiasUse::required;
}

struct Dense {
  Shape shape;
  std::vector<double> data;  // row-major

  int64_t numel() const { return static_cast<int64_t>(data.size()); }
};

inline Dense zeros(const Shape& shape) {
  return Dense{shape, std::vector<double>(numel(shape), 0.0)};
}

inline Dense random_dense(const Shape& shape, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  Dense x = zeros(shape);
  for (double& v : x.data) v = dist(rng);
  return x;
}

inline std::vector<int64_t> strides_of(const Shape& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (int i = static_cast<int>(shape.size()) - 2; i >= 0; --i) s[i] = s[i + 1] * shape[i + 1];
  return s;
}

// Calls f(index vector, flat position) for every element of `shape`.
template <typename F>
void for_each_index(const Shape& shape, F f) {
  const int64_t total = numel(shape);
  std::vector<int64_t> idx(shape.size(), 0);
  for (int64_t flat = 0; flat < total; ++flat) {
    f(idx, flat);
    for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
}

inline Dense block(const Dense& x, const Shape& offset, const Shape& size) {
  Dense out = zeros(size);
  const auto xs = strides_of(x.shape);
  for_each_index(size, [&](const std::vector<int64_t>& idx, int64_t flat) {
    int64_t src = 0;
    for (size_t d = 0; d < idx.size(); ++d) src += (idx[d] + offset[d]) * xs[d];
    out.data[flat] = x.data[src];
  });
  return out;
}

inline Dense axpy(double a, const Dense& x, const Dense& y) {  // a*x + y
  Dense out = y;
  for (size_t i = 0; i < out.data.size(); ++i) out.data[i] += a * x.data[i];
  return out;
}

inline Dense scaled(double a, const Dense& x) {
  return axpy(a - 1.0, x, x);
}

inline bool all_close(const Dense& a, const Dense& b, double tol = kTolerance) {
  if (a.shape != b.shape) return false;
  for (size_t i = 0; i < a.data.size(); ++i)
    if (!(std::abs(a.data[i] - b.data[i]) <= tol)) return false;
  return true;
}

// torch.chunk(dim_size, n)[i]: chunks of ceil(dim_size/n); trailing chunks smaller or empty.
struct Piece {
  int64_t offset = 0;
  int64_t size = 0;
};
inline Piece torch_chunk(int64_t dim_size, int64_t n, int64_t i) {
  const int64_t chunk = (dim_size + n - 1) / n;
  const int64_t begin = std::min(dim_size, chunk * i);
  const int64_t end = std::min(dim_size, chunk * (i + 1));
  return {begin, end - begin};
}

// mm on 2-D or bmm on 3-D tensors with Eigen; nullopt when the shapes do not multiply.
inline std::optional<Dense> matmul(const Dense& a, const Dense& b) {
  using RowMajor = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  if (a.shape.size() != b.shape.size() || a.shape.size() < 2 || a.shape.size() > 3)
    return std::nullopt;
  const bool batched = a.shape.size() == 3;
  const int64_t batch = batched ? a.shape[0] : 1;
  if (batched && b.shape[0] != batch) return std::nullopt;
  const int64_t m = a.shape[batched], k = a.shape[batched + 1];
  const int64_t kb = b.shape[batched], n = b.shape[batched + 1];
  if (k != kb) return std::nullopt;
  Dense out = zeros(batched ? Shape{batch, m, n} : Shape{m, n});
  for (int64_t i = 0; i < batch; ++i) {
    Eigen::Map<const RowMajor> am(a.data.data() + i * m * k, m, k);
    Eigen::Map<const RowMajor> bm(b.data.data() + i * k * n, k, n);
    Eigen::Map<RowMajor> cm(out.data.data() + i * m * n, m, n);
    if (m > 0 && n > 0 && k > 0) cm.noalias() = am * bm;  // else it stays zero
  }
  return out;
}

// bias + x with numpy/torch broadcasting of bias to x's shape (bias never grows x);
// nullopt when bias does not broadcast.
inline std::optional<Dense> add_broadcast(const Dense& bias, const Dense& x) {
  const size_t nx = x.shape.size(), nb = bias.shape.size();
  if (nb > nx) return std::nullopt;
  for (size_t i = 1; i <= nb; ++i) {
    const int64_t bd = bias.shape[nb - i], xd = x.shape[nx - i];
    if (bd != 1 && bd != xd) return std::nullopt;
  }
  const auto bs = strides_of(bias.shape);
  Dense out = x;
  for_each_index(x.shape, [&](const std::vector<int64_t>& idx, int64_t flat) {
    int64_t src = 0;
    for (size_t i = 0; i < nb; ++i) {
      const size_t xdim = nx - nb + i;
      src += (bias.shape[i] == 1 ? 0 : idx[xdim]) * bs[i];
    }
    out.data[flat] += bias.data[src];
  });
  return out;
}

// The op itself, unsharded or on one rank's pieces: inputs in ATen order.
inline std::optional<Dense> run_op(OpKind op, const std::vector<Dense>& inputs) {
  if (!takes_bias(op)) return matmul(inputs[0], inputs[1]);
  auto product = matmul(inputs[1], inputs[2]);
  if (!product) return std::nullopt;
  return add_broadcast(inputs[0], *product);
}

// Asymmetric per-rank weights for a Partial over n ranks: they sum to 1 (sum) or average
// to 1 (avg). `salt` varies them between mesh dims, e.g. n=2: 0.6/0.4 and 0.7/0.3.
inline std::vector<double> partial_weights(ReduceOp op, int n, int salt = 0) {
  std::vector<double> w(n);
  double total = 0;
  for (int r = 0; r < n; ++r) total += (w[r] = 1.0 + 0.5 * ((r + salt) % n) + 0.1 * r);
  for (double& v : w) v *= (op == ReduceOp::sum ? 1.0 : n) / total;
  return w;
}

// The pieces of x held by n ranks under a Partial: w_r*x + e_r with sum(e_r) = 0.
inline std::vector<Dense> partial_pieces(const Dense& x, ReduceOp op, int n, std::mt19937_64& rng) {
  const auto w = partial_weights(op, n);
  std::vector<Dense> pieces;
  Dense noise_total = zeros(x.shape);
  for (int r = 0; r < n; ++r) {
    Dense noise = r + 1 < n ? random_dense(x.shape, rng) : axpy(-1.0, noise_total, zeros(x.shape));
    noise_total = axpy(1.0, noise, noise_total);
    pieces.push_back(axpy(w[r], x, noise));
  }
  return pieces;
}

// ---- 1-D meshes: does one single-dim placement combination compute the op? ----

// Per-rank pieces of x under one placement on a 1-D mesh of n ranks.
inline std::vector<Dense> shard_1d(const Dense& x, const Placement& p, int n,
                                   std::mt19937_64& rng) {
  if (p.is_partial()) return partial_pieces(x, p.reduce_op(), n, rng);
  std::vector<Dense> out;
  for (int r = 0; r < n; ++r) {
    if (p.is_replicate()) {
      out.push_back(x);
      continue;
    }
    const int d = p.shard_dim();
    Shape offset(x.shape.size(), 0), size = x.shape;
    const Piece c = torch_chunk(x.shape[d], n, r);
    offset[d] = c.offset;
    size[d] = c.size;
    out.push_back(block(x, offset, size));
  }
  return out;
}

// Whether the per-rank outputs represent `expected` under placement `p`.
inline bool output_matches_1d(const std::vector<Dense>& local, const Placement& p,
                              const Dense& expected) {
  const int n = static_cast<int>(local.size());
  if (p.is_replicate()) {
    for (const auto& l : local)
      if (!all_close(l, expected)) return false;
    return true;
  }
  if (p.is_shard()) {
    const int d = p.shard_dim();
    for (int r = 0; r < n; ++r) {
      Shape offset(expected.shape.size(), 0), size = expected.shape;
      const Piece c = torch_chunk(expected.shape[d], n, r);
      offset[d] = c.offset;
      size[d] = c.size;
      if (!all_close(local[r], block(expected, offset, size))) return false;
    }
    return true;
  }
  Dense total = zeros(expected.shape);
  for (const auto& l : local) {
    if (l.shape != expected.shape) return false;
    total = axpy(1.0, l, total);
  }
  const double scale = p.reduce_op() == ReduceOp::sum ? 1.0 : 1.0 / n;
  return all_close(scaled(scale, total), expected);
}

// rule = [out, inputs...] on one mesh dim of n ranks, checked on the given global inputs.
inline bool placements_compute_op_1d(OpKind op, const std::vector<Dense>& inputs,
                                     const std::vector<Placement>& rule, int n,
                                     std::mt19937_64& rng) {
  const auto expected = run_op(op, inputs);
  std::vector<std::vector<Dense>> pieces;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Placement& p = rule[i + 1];
    if (p.is_shard() && p.shard_dim() >= static_cast<int>(inputs[i].shape.size())) return false;
    pieces.push_back(shard_1d(inputs[i], p, n, rng));
  }
  if (rule[0].is_shard() && rule[0].shard_dim() >= static_cast<int>(expected->shape.size()))
    return false;
  std::vector<Dense> local_out;
  for (int r = 0; r < n; ++r) {
    std::vector<Dense> local_in;
    for (const auto& p : pieces) local_in.push_back(p[r]);
    auto out = run_op(op, local_in);
    if (!out) return false;
    local_out.push_back(std::move(*out));
  }
  return output_matches_1d(local_out, rule[0], *expected);
}

// ---- N-D meshes ----

inline std::vector<int> coords_of(const std::vector<int>& mesh, int rank) {
  std::vector<int> c(mesh.size());
  for (int d = static_cast<int>(mesh.size()) - 1; d >= 0; --d) {
    c[d] = rank % mesh[d];
    rank /= mesh[d];
  }
  return c;
}

struct Region {
  Shape offset;
  Shape size;
};
// The block of the global tensor a rank holds: Shard dims chunked outer mesh dim first,
// each inner split cutting the piece the outer ones left (DTensor's nested sharding).
inline Region region_of(const Shape& shape, const Placements& placements,
                        const std::vector<int>& mesh, int rank) {
  const auto c = coords_of(mesh, rank);
  Region reg{Shape(shape.size(), 0), shape};
  for (size_t d = 0; d < mesh.size(); ++d) {
    if (!placements[d].is_shard()) continue;
    const int t = placements[d].shard_dim();
    const Piece p = torch_chunk(reg.size[t], mesh[d], c[d]);
    reg.offset[t] += p.offset;
    reg.size[t] = p.size;
  }
  return reg;
}

// One rank's input: its region, scaled by the Partial weight of every partial mesh dim.
inline Dense local_input(const Dense& x, const Placements& placements, const std::vector<int>& mesh,
                         int rank) {
  const Region reg = region_of(x.shape, placements, mesh, rank);
  Dense local = block(x, reg.offset, reg.size);
  const auto c = coords_of(mesh, rank);
  for (size_t d = 0; d < mesh.size(); ++d) {
    if (!placements[d].is_partial()) continue;
    const double w = partial_weights(placements[d].reduce_op(), mesh[d], static_cast<int>(d))[c[d]];
    for (double& v : local.data) v *= w;
  }
  return local;
}

// Turns per-rank outputs into the true values: every Partial mesh dim is reduced over its
// group (sum, or mean for avg), as an all-reduce would. Afterwards each rank must hold its
// region of the unsharded result.
inline bool output_matches_nd(std::vector<Dense> local, const Placements& placements,
                              const std::vector<int>& mesh, const Dense& expected) {
  const int size = static_cast<int>(local.size());
  for (size_t d = 0; d < mesh.size(); ++d) {
    if (!placements[d].is_partial()) continue;
    std::vector<Dense> reduced;
    for (int r = 0; r < size; ++r) {
      const auto c = coords_of(mesh, r);
      Dense total = zeros(local[r].shape);
      for (int other = 0; other < size; ++other) {
        const auto oc = coords_of(mesh, other);
        bool same_group = true;
        for (size_t e = 0; e < mesh.size(); ++e) same_group &= e == d || oc[e] == c[e];
        if (!same_group) continue;
        if (local[other].shape != total.shape) return false;
        total = axpy(1.0, local[other], total);
      }
      if (placements[d].reduce_op() == ReduceOp::avg)
        for (double& v : total.data) v /= mesh[d];
      reduced.push_back(std::move(total));
    }
    local = std::move(reduced);
  }
  for (int r = 0; r < size; ++r) {
    const Region reg = region_of(expected.shape, placements, mesh, r);
    if (!all_close(local[r], block(expected, reg.offset, reg.size))) return false;
  }
  return true;
}

}  // namespace symmesh::strategies::testing
