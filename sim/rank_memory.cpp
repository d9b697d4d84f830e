#include "sim/rank_memory.hpp"

#include "core/errors.hpp"

namespace symmesh::sim {

RankMemory::RankMemory(const Program& program, bool carry_data)
    : program_(program),
      carry_data_(carry_data),
      live_(program.world_size(), 0),
      peak_(program.world_size(), 0) {
  for (const SymmetricHandle& h : program.symmetric_allocations())
    for (int rank : program.group(h.group).ranks) {
      live_[rank] += h.size_bytes;
      if (carry_data_) symmetric_data_[key(rank, h.id)].assign(h.size_bytes, 0);
    }
  if (carry_data_) local_data_.resize(program.local_allocations().size());
  for (const LocalAllocation& a : program.local_allocations()) {
    live_[a.rank] += a.size_bytes;
    if (!carry_data_) continue;
    if (a.initial.empty())
      local_data_[a.id].assign(a.size_bytes, 0);
    else
      local_data_[a.id] = a.initial;
  }
  peak_ = live_;  // every allocation exists from the start; frees only lower the total
}

void RankMemory::throw_use_after_free(int rank, const BufferRef& ref, const std::string& label,
                                      const char* role) {
  throw InvalidArgument("use after free: " + std::string(role) + " '" + label +
                            "' uses symmetric buffer " + std::to_string(ref.id) + ", which rank " +
                            std::to_string(rank) + " has already freed",
                        "simulation", rank);
}

unsigned char* RankMemory::bytes(int rank, const BufferRef& ref) {
  if (!carry_data_) return nullptr;
  std::vector<unsigned char>& data = ref.space == BufferRef::Space::symmetric
                                         ? symmetric_data_.at(key(rank, ref.id))
                                         : local_data_.at(ref.id);
  return data.data() + ref.offset_bytes;
}

void RankMemory::free_symmetric(int rank, int handle) {
  const BufferRef whole{BufferRef::Space::symmetric, handle, 0, 0};
  check_live(rank, whole, "", "free");
  freed_.insert(key(rank, handle));
  live_[rank] -= program_.symmetric_allocations().at(handle).size_bytes;
  symmetric_data_.erase(key(rank, handle));
}

bool RankMemory::is_freed(int rank, int handle) const {
  return freed_.count(key(rank, handle)) != 0;
}

}  // namespace symmesh::sim
