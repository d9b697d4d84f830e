#include "hw/bootstrap.hpp"

#include <condition_variable>
#include <cstdlib>
#include <mutex>

#include "core/errors.hpp"

namespace symmesh::hw {
namespace {

// A reusable barrier that also exchanges one string per rank per phase.
class ThreadBootstrap : public Bootstrap {
 public:
  explicit ThreadBootstrap(int world) : world_(world), slots_(world) {}
  int world_size() const override { return world_; }
  std::vector<int> local_ranks() const override {
    std::vector<int> out(world_);
    for (int r = 0; r < world_; ++r) out[r] = r;
    return out;
  }
  int device_of(int rank) const override { return rank; }
  int ranks_on_node() const override { return world_; }
  bool reports() const override { return true; }

  void share_unique_id(int rank, ncclUniqueId& id) override {
    std::string mine(reinterpret_cast<const char*>(&id), sizeof id);
    const auto all = exchange(rank, mine);
    std::copy(all[0].begin(), all[0].end(), reinterpret_cast<char*>(&id));
  }
  std::string agree(int rank, const std::string& failure) override {
    for (const auto& f : exchange(rank, failure))
      if (!f.empty()) return f;
    return "";
  }
  std::vector<std::string> gather(int rank, const std::string& bytes) override {
    auto all = exchange(rank, bytes);
    if (rank != 0) all.clear();
    return all;
  }

 private:
  // Every rank deposits a string; when all have, each gets all of them.
  std::vector<std::string> exchange(int rank, const std::string& mine) {
    std::unique_lock lock(mutex_);
    const long generation = generation_;
    slots_[rank] = mine;
    if (++arrived_ == world_) {
      result_ = slots_;
      arrived_ = 0;
      ++generation_;
      cv_.notify_all();
    } else {
      cv_.wait(lock, [&] { return generation_ != generation; });
    }
    return result_;
  }

  int world_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<std::string> slots_, result_;
  int arrived_ = 0;
  long generation_ = 0;
};

}  // namespace

std::unique_ptr<Bootstrap> make_thread_bootstrap(int world) {
  return std::make_unique<ThreadBootstrap>(world);
}

#ifndef SYMMESH_HW_HAVE_MPI
std::unique_ptr<Bootstrap> make_mpi_bootstrap_if_launched(int world) {
  (void)world;
  if (!std::getenv("OMPI_COMM_WORLD_SIZE")) return nullptr;
  throw Unsupported(
      "started by mpirun, but symmesh was built without OpenMPI (install libopenmpi-dev and "
      "reconfigure): runs over several nodes need it; one node runs without mpirun",
      "hw bootstrap");
}
#endif

}  // namespace symmesh::hw
