#pragma once
// An N-D arrangement of ranks, laid row-major (the last mesh dim varies fastest), with
// optional dim names such as "dp" and "tp". Ranks are 0..size()-1.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace symmesh {

class DeviceMesh {
 public:
  // Throws InvalidArgument for an empty shape, a dim < 1, names of the wrong count,
  // duplicate names, or a rank count that does not fit in an int.
  explicit DeviceMesh(std::vector<int> shape, std::vector<std::string> dim_names = {});

  int ndim() const { return static_cast<int>(shape_.size()); }
  int size() const { return size_; }
  int size(int mesh_dim) const;
  const std::vector<int>& shape() const { return shape_; }
  const std::vector<std::string>& dim_names() const { return dim_names_; }
  // Index of a named dim (or a numeric string "1"); throws InvalidArgument if unknown.
  int dim_index(std::string_view name) const;

  std::vector<int> coordinates(int rank) const;
  int rank(const std::vector<int>& coordinates) const;
  // The ranks that differ from `rank` only along `mesh_dim`, in coordinate order.
  std::vector<int> group_ranks(int rank, int mesh_dim) const;
  // Every group along `mesh_dim` (size()/size(mesh_dim) groups of size(mesh_dim) ranks).
  std::vector<std::vector<int>> groups(int mesh_dim) const;

  bool operator==(const DeviceMesh& other) const = default;

 private:
  void check_dim(int mesh_dim) const;
  void check_rank(int rank) const;
  std::vector<int> shape_;
  std::vector<std::string> dim_names_;
  std::vector<int> strides_;
  int size_ = 1;
};

std::string to_string(const DeviceMesh& mesh);  // "2x4" or "2x4 (dp,tp)"
// "2x4" or "8"; throws InvalidArgument naming `where`.
DeviceMesh parse_mesh(std::string_view text, std::string_view where = "mesh");

}  // namespace symmesh
