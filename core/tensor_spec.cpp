#include "core/tensor_spec.hpp"

#include <charconv>
#include <limits>

#include "core/errors.hpp"
#include "core/text.hpp"

namespace symmesh {

int64_t numel(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string to_string(const Shape& shape) {
  if (shape.empty()) return "[]";  // a 0-d tensor, as torch.Size([]) prints
  return join(shape, "x", [](int64_t n) { return std::to_string(n); });
}

Shape parse_shape(std::string_view text, std::string_view where) {
  const std::string s(text);
  if (s.empty())
    throw InvalidArgument("empty shape (expected e.g. 64x32, or [] for a 0-d tensor)",
                          std::string(where));
  Shape shape;
  if (s == "[]") return shape;
  size_t start = 0;
  // Total bytes must stay representable even for 8-byte dtypes.
  const int64_t limit = std::numeric_limits<int64_t>::max() / 8;
  int64_t total = 1;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || s[i] == 'x' || s[i] == 'X' || s[i] == ',') {
      const std::string item = s.substr(start, i - start);
      int64_t value = 0;
      auto [ptr, ec] = std::from_chars(item.data(), item.data() + item.size(), value);
      if (item.empty() || ec != std::errc() || ptr != item.data() + item.size())
        throw InvalidArgument("shape '" + s + "' is not of the form 64x32", std::string(where));
      if (value < 0)
        throw InvalidArgument("shape '" + s + "' has a negative dim", std::string(where));
      if (value > 0 && total > limit / value)
        throw InvalidArgument("shape '" + s + "' is too large: its byte count overflows 64 bits",
                              std::string(where));
      total *= value;
      shape.push_back(value);
      start = i + 1;
    }
  }
  return shape;
}

Chunk chunk_of(int64_t dim_size, int64_t num_chunks, int64_t index) {
  const int64_t full = (dim_size + num_chunks - 1) / num_chunks;
  const int64_t start = full * index;
  if (start >= dim_size) return {0, dim_size};
  return {std::min(dim_size, start + full) - start, start};
}

void TensorSpec::validate(const DeviceMesh& mesh, std::string_view where) const {
  // Zero-size dims and 0-d tensors are tensors, as in PyTorch: a 0x64 activation, a 0-d
  // bias. Only a negative size is not.
  for (int64_t d : shape)
    if (d < 0)
      throw InvalidArgument("shape " + to_string(shape) + " has a negative dim",
                            std::string(where));
  if (static_cast<int>(placements.size()) != mesh.ndim())
    throw InvalidArgument(std::to_string(placements.size()) + " placements (" +
                              symmesh::to_string(placements) + ") for a " +
                              std::to_string(mesh.ndim()) + "-D mesh; give one per mesh dim",
                          std::string(where));
  for (const auto& p : placements)
    if (p.is_shard() && p.shard_dim() >= static_cast<int>(shape.size()))
      throw InvalidArgument(symmesh::to_string(p) + " is beyond the rank of a " +
                                std::to_string(shape.size()) + "-D tensor (" + to_string(shape) +
                                ")",
                            std::string(where));
}

std::vector<int64_t> TensorSpec::shards_per_dim(const DeviceMesh& mesh) const {
  std::vector<int64_t> out(shape.size(), 1);
  for (int d = 0; d < mesh.ndim(); ++d)
    if (placements[d].is_shard()) out[placements[d].shard_dim()] *= mesh.size(d);
  return out;
}

int64_t TensorSpec::num_shards(const DeviceMesh& mesh) const {
  int64_t n = 1;
  for (int d = 0; d < mesh.ndim(); ++d)
    if (placements[d].is_shard()) n *= mesh.size(d);
  return n;
}

LocalView local_view(const TensorSpec& spec, const DeviceMesh& mesh, int rank) {
  spec.validate(mesh);
  const auto coords = mesh.coordinates(rank);
  LocalView view{spec.shape, Shape(spec.shape.size(), 0)};
  for (int d = 0; d < mesh.ndim(); ++d) {
    const Placement& p = spec.placements[d];
    if (!p.is_shard()) continue;
    const int t = p.shard_dim();
    const Chunk c = chunk_of(view.shape[t], mesh.size(d), coords[d]);
    view.offset[t] += c.offset;
    view.shape[t] = c.size;
  }
  return view;
}

int64_t max_local_bytes(const TensorSpec& spec, const DeviceMesh& mesh) {
  return local_view(spec, mesh, 0).numel() * element_size_bytes(spec.dtype);
}

}  // namespace symmesh
