#include "tools/cli/interrupt_cleanup.hpp"

#include <signal.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <climits>
#include <cstring>

namespace symmesh::cli {
namespace {

// A slot is claimed (state 1) while written, then published (2); the handler reads only
// published slots. Paths longer than PATH_MAX are not remembered.
struct PathSlot {
  std::atomic<int> state{0};
  char path[PATH_MAX];
};
std::array<PathSlot, 64> paths;
std::array<std::atomic<pid_t>, 8> children{};
std::atomic<pid_t> owner{0};

void on_signal(int sig) {
  if (getpid() == owner.load()) {
    // Each helper leads its own process group (gnuplot_child.cpp): the group goes too.
    for (auto& child : children)
      if (const pid_t pid = child.load(); pid > 0) kill(-pid, SIGKILL), kill(pid, SIGKILL);
    // Files first, then folders (a folder this command made holds its temporaries).
    for (int pass = 0; pass < 2; ++pass)
      for (auto& slot : paths)
        if (slot.state.load() == 2) pass == 0 ? (void)unlink(slot.path) : (void)rmdir(slot.path);
  }
  signal(sig, SIG_DFL);
  raise(sig);
}

}  // namespace

void install_interrupt_cleanup() {
  owner = getpid();
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&action.sa_mask, sig);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaction(sig, &action, nullptr);
}

bool remember_path(const std::string& path) {
  if (path.size() >= PATH_MAX) return false;
  for (auto& slot : paths) {
    int free = 0;
    if (!slot.state.compare_exchange_strong(free, 1)) continue;
    std::memcpy(slot.path, path.c_str(), path.size() + 1);
    slot.state.store(2);
    return true;
  }
  return false;
}

void forget_path(const std::string& path) {
  for (auto& slot : paths) {
    int published = 2;
    if (slot.state.load() != 2 || path != slot.path) continue;
    if (slot.state.compare_exchange_strong(published, 0)) return;
  }
}

void remember_child(pid_t pid) {
  for (auto& child : children) {
    pid_t none = 0;
    if (child.compare_exchange_strong(none, pid)) return;
  }
}

void forget_child(pid_t pid) {
  for (auto& child : children) {
    pid_t mine = pid;
    if (child.compare_exchange_strong(mine, 0)) return;
  }
}

}  // namespace symmesh::cli
