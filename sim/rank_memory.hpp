#pragma once
// Every rank's buffers as the simulator sees them: which are live (a symmetric copy ends
// at that rank's free), how many bytes are allocated (peak per rank), and — only when the
// run carries data — the bytes themselves. Without data nothing is kept per byte.
#include <cstdint>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/program.hpp"

namespace symmesh::sim {

class RankMemory {
 public:
  RankMemory(const Program& program, bool carry_data);

  bool carries_data() const { return carry_data_; }
  // Throws InvalidArgument "use after free: <role> '<label>' uses symmetric buffer …" when
  // `ref` is a symmetric buffer that `rank` has freed.
  void check_live(int rank, const BufferRef& ref, const std::string& label,
                  const char* role) const {
    if (ref.space == BufferRef::Space::symmetric && !freed_.empty() && is_freed(rank, ref.id))
      throw_use_after_free(rank, ref, label, role);
  }
  // The first byte of `ref` on `rank` (checked live before); nullptr when not carrying data.
  unsigned char* bytes(int rank, const BufferRef& ref);
  // Releases `rank`'s copy of symmetric buffer `handle` (a second free is a use after free).
  void free_symmetric(int rank, int handle);
  bool is_freed(int rank, int handle) const;

  int64_t peak_bytes(int rank) const { return peak_[rank]; }
  int64_t live_bytes(int rank) const { return live_[rank]; }

 private:
  [[noreturn]] static void throw_use_after_free(int rank, const BufferRef& ref,
                                                const std::string& label, const char* role);
  static int64_t key(int rank, int id) {
    return (static_cast<int64_t>(rank) << 32) | static_cast<uint32_t>(id);
  }

  const Program& program_;
  bool carry_data_;
  std::vector<int64_t> live_, peak_;
  std::unordered_set<int64_t> freed_;  // (rank, handle) copies released
  // Data (only with carry_data): symmetric copies by (rank, handle), local buffers by id.
  std::unordered_map<int64_t, std::vector<unsigned char>> symmetric_data_;
  std::vector<std::vector<unsigned char>> local_data_;
};

}  // namespace symmesh::sim
