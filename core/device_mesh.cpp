#include "core/device_mesh.hpp"

#include <charconv>
#include <limits>
#include <set>

#include "core/errors.hpp"
#include "core/text.hpp"

namespace symmesh {

DeviceMesh::DeviceMesh(std::vector<int> shape, std::vector<std::string> dim_names)
    : shape_(std::move(shape)), dim_names_(std::move(dim_names)) {
  if (shape_.empty()) throw InvalidArgument("mesh shape is empty", "DeviceMesh");
  if (!dim_names_.empty() && dim_names_.size() != shape_.size())
    throw InvalidArgument("mesh has " + std::to_string(shape_.size()) + " dims but " +
                              std::to_string(dim_names_.size()) + " names",
                          "DeviceMesh");
  std::set<std::string> seen;
  for (const auto& name : dim_names_)
    if (name.empty() || !seen.insert(name).second)
      throw InvalidArgument("mesh dim names must be non-empty and distinct", "DeviceMesh");
  int64_t total = 1;
  for (size_t d = 0; d < shape_.size(); ++d) {
    if (shape_[d] < 1)
      throw InvalidArgument("mesh dim " + std::to_string(d) + " has size " +
                                std::to_string(shape_[d]) + "; sizes must be >= 1",
                            "DeviceMesh");
    total *= shape_[d];
    if (total > std::numeric_limits<int>::max())
      throw InvalidArgument("mesh has too many ranks", "DeviceMesh");
  }
  size_ = static_cast<int>(total);
  strides_.assign(shape_.size(), 1);
  for (int d = ndim() - 2; d >= 0; --d) strides_[d] = strides_[d + 1] * shape_[d + 1];
}

void DeviceMesh::check_dim(int mesh_dim) const {
  if (mesh_dim < 0 || mesh_dim >= ndim())
    throw InvalidArgument("mesh dim " + std::to_string(mesh_dim) + " out of range for a " +
                              std::to_string(ndim()) + "-D mesh",
                          "DeviceMesh");
}

void DeviceMesh::check_rank(int rank) const {
  if (rank < 0 || rank >= size_)
    throw InvalidArgument(
        "rank " + std::to_string(rank) + " out of range [0, " + std::to_string(size_) + ")",
        "DeviceMesh");
}

int DeviceMesh::size(int mesh_dim) const {
  check_dim(mesh_dim);
  return shape_[mesh_dim];
}

int DeviceMesh::dim_index(std::string_view name) const {
  for (size_t d = 0; d < dim_names_.size(); ++d)
    if (dim_names_[d] == name) return static_cast<int>(d);
  int index = -1;
  auto [ptr, ec] = std::from_chars(name.data(), name.data() + name.size(), index);
  if (ec == std::errc() && ptr == name.data() + name.size() && index >= 0 && index < ndim())
    return index;
  throw InvalidArgument(
      "unknown mesh dim '" + std::string(name) + "' (mesh " + to_string(*this) + ")", "DeviceMesh");
}

std::vector<int> DeviceMesh::coordinates(int rank) const {
  check_rank(rank);
  std::vector<int> coords(shape_.size());
  for (size_t d = 0; d < shape_.size(); ++d) coords[d] = (rank / strides_[d]) % shape_[d];
  return coords;
}

int DeviceMesh::rank(const std::vector<int>& coordinates) const {
  if (coordinates.size() != shape_.size())
    throw InvalidArgument("expected " + std::to_string(shape_.size()) + " coordinates, got " +
                              std::to_string(coordinates.size()),
                          "DeviceMesh");
  int r = 0;
  for (size_t d = 0; d < shape_.size(); ++d) {
    if (coordinates[d] < 0 || coordinates[d] >= shape_[d])
      throw InvalidArgument("coordinate " + std::to_string(coordinates[d]) +
                                " out of range on dim " + std::to_string(d),
                            "DeviceMesh");
    r += coordinates[d] * strides_[d];
  }
  return r;
}

std::vector<int> DeviceMesh::group_ranks(int rank, int mesh_dim) const {
  check_dim(mesh_dim);
  auto coords = coordinates(rank);
  const int base = rank - coords[mesh_dim] * strides_[mesh_dim];
  std::vector<int> ranks(shape_[mesh_dim]);
  for (int i = 0; i < shape_[mesh_dim]; ++i) ranks[i] = base + i * strides_[mesh_dim];
  return ranks;
}

std::vector<std::vector<int>> DeviceMesh::groups(int mesh_dim) const {
  check_dim(mesh_dim);
  std::vector<std::vector<int>> out;
  for (int r = 0; r < size_; ++r)
    if (coordinates(r)[mesh_dim] == 0) out.push_back(group_ranks(r, mesh_dim));
  return out;
}

std::string to_string(const DeviceMesh& mesh) {
  std::string out = join(mesh.shape(), "x", [](int n) { return std::to_string(n); });
  if (!mesh.dim_names().empty())
    out.append(" (")
        .append(join(mesh.dim_names(), ",", [](const std::string& s) { return s; }))
        .append(")");
  return out;
}

DeviceMesh parse_mesh(std::string_view text, std::string_view where) {
  std::vector<int> shape;
  size_t start = 0;
  int64_t total = 1;
  const std::string s(text);
  if (s.empty()) throw InvalidArgument("empty mesh shape (expected e.g. 2x4)", std::string(where));
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || s[i] == 'x' || s[i] == 'X' || s[i] == ',') {
      const std::string item = s.substr(start, i - start);
      int value = 0;
      auto [ptr, ec] = std::from_chars(item.data(), item.data() + item.size(), value);
      const bool whole = !item.empty() && ptr == item.data() + item.size();
      if (whole && ec == std::errc::result_out_of_range)
        throw InvalidArgument("mesh shape '" + s + "' has too many ranks", std::string(where));
      if (!whole || ec != std::errc())
        throw InvalidArgument("mesh shape '" + s + "' is not of the form 2x4", std::string(where));
      if (value < 1)
        throw InvalidArgument("mesh shape '" + s + "' has a dim < 1", std::string(where));
      total *= value;  // both factors <= INT_MAX: no int64 overflow
      if (total > std::numeric_limits<int>::max())
        throw InvalidArgument("mesh shape '" + s + "' has too many ranks", std::string(where));
      shape.push_back(value);
      start = i + 1;
    }
  }
  return DeviceMesh(shape);
}

}  // namespace symmesh
