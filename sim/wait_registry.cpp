#include "sim/wait_registry.hpp"

#include <algorithm>
#include <simgrid/s4u/Actor.hpp>

namespace symmesh::sim {

WaitRegistry::WaitRegistry(std::function<void(std::vector<BlockedStream>)> on_deadlock)
    : on_deadlock_(std::move(on_deadlock)) {}

void WaitRegistry::actor_finished() {
  --live_;
  if (!aborted_ && live_ > 0 && blocked_ == live_) report_deadlock();
}

void WaitRegistry::block_until(const WaitKey& key, const std::function<bool()>& ready,
                               const std::function<BlockedStream()>& describe) {
  while (!ready()) {
    if (aborted_) throw RunAborted{};
    Waiter self{simgrid::s4u::Actor::self(), &describe};
    waiters_[key].push_back(&self);
    ++blocked_;
    if (blocked_ == live_) {
      report_deadlock();  // releases everyone, this actor included
      throw RunAborted{};
    }
    simgrid::s4u::this_actor::suspend();
    // Whoever resumed this actor has already unregistered it (release()).
    if (aborted_) throw RunAborted{};
  }
}

void WaitRegistry::release(Waiter* waiter) {
  --blocked_;
  if (waiter->actor != simgrid::s4u::Actor::self()) waiter->actor->resume();
}

void WaitRegistry::wake(const WaitKey& key) {
  const auto it = waiters_.find(key);
  if (it == waiters_.end()) return;
  const std::vector<Waiter*> woken = std::move(it->second);
  waiters_.erase(it);
  for (Waiter* w : woken) release(w);
}

void WaitRegistry::abort_all() {
  if (aborted_) return;
  aborted_ = true;
  auto all = std::move(waiters_);
  waiters_.clear();
  for (auto& [key, list] : all)
    for (Waiter* w : list) release(w);
}

void WaitRegistry::report_deadlock() {
  std::vector<BlockedStream> report;
  for (const auto& [key, list] : waiters_)
    for (const Waiter* w : list) report.push_back((*w->describe)());
  std::sort(report.begin(), report.end(), [](const BlockedStream& x, const BlockedStream& y) {
    return x.rank != y.rank ? x.rank < y.rank : x.stream < y.stream;
  });
  on_deadlock_(std::move(report));
  abort_all();
}

}  // namespace symmesh::sim
