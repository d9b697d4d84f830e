#pragma once
// A global tensor laid over a mesh: shape, dtype and one placement per mesh dim.
// Local shapes and offsets follow torch.chunk, as DTensor does: a dim of size n split
// k ways gives chunks of ceil(n/k); trailing chunks may be smaller or empty. A tensor
// dim sharded over several mesh dims is split by the outer mesh dim first, then each
// piece again by the inner one.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/device_mesh.hpp"
#include "core/dtype.hpp"
#include "core/placement.hpp"

namespace symmesh {

using Shape = std::vector<int64_t>;

int64_t numel(const Shape& shape);
std::string to_string(const Shape& shape);  // "64x32"; "[]" for 0-d
// "64x32", "64", "0x64" (a zero-size dim) or "[]" (0-d); every dim >= 0; throws
// InvalidArgument naming `where`.
Shape parse_shape(std::string_view text, std::string_view where = "shape");

struct Chunk {
  int64_t size = 0;
  int64_t offset = 0;
};
// Chunk `index` of `num_chunks` of a dim of `dim_size` (torch.chunk; an empty chunk sits
// at offset dim_size).
Chunk chunk_of(int64_t dim_size, int64_t num_chunks, int64_t index);

struct TensorSpec {
  Shape shape;
  DType dtype = DType::fp32;
  Placements placements;

  int64_t size_bytes() const { return numel(shape) * element_size_bytes(dtype); }
  // Throws InvalidArgument if the placement count differs from the mesh's dims or a
  // shard dim is beyond the tensor's rank; `where` names the argument.
  void validate(const DeviceMesh& mesh, std::string_view where = "tensor") const;
  // How many pieces each tensor dim is cut into (product of the mesh sizes sharding it).
  std::vector<int64_t> shards_per_dim(const DeviceMesh& mesh) const;
  // Product of the mesh sizes of the dims where this tensor is Shard (DTensor's num_shards).
  int64_t num_shards(const DeviceMesh& mesh) const;
};

struct LocalView {
  Shape shape;
  Shape offset;
  int64_t numel() const { return symmesh::numel(shape); }
};
LocalView local_view(const TensorSpec& spec, const DeviceMesh& mesh, int rank);
// The largest local piece (rank 0's, by torch.chunk), in bytes: what padded collectives move.
int64_t max_local_bytes(const TensorSpec& spec, const DeviceMesh& mesh);

}  // namespace symmesh
