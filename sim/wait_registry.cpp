#include "sim/wait_registry.hpp"

#include <algorithm>
#include <simgrid/s4u/Actor.hpp>

namespace symmesh::sim {

WaitRegistry::WaitRegistry(Describe describe, OnDeadlock on_deadlock)
    : describe_(std::move(describe)), on_deadlock_(std::move(on_deadlock)) {}

void WaitRegistry::actor_finished() {
  --live_;
  if (!aborted_ && live_ > 0 && blocked_ == live_) report_deadlock();
}

void WaitRegistry::block_once(WaitList& list, const WaitSite& site) {
  if (aborted_) throw RunAborted{};
  Waiter self;
  self.actor = simgrid::s4u::Actor::self();
  self.site = site;
  self.list = &list;
  (list.tail_ ? list.tail_->next_in_list : list.head_) = &self;
  list.tail_ = &self;
  self.next_blocked = blocked_head_;
  if (blocked_head_) blocked_head_->prev_blocked = &self;
  blocked_head_ = &self;
  ++blocked_;
  if (blocked_ == live_) {
    report_deadlock();  // releases everyone, this actor included
    throw RunAborted{};
  }
  simgrid::s4u::this_actor::suspend();
  // Whoever resumed this actor has already unlinked it (wake() or abort_all()).
  if (aborted_) throw RunAborted{};
}

void WaitRegistry::unlink_blocked(Waiter* w) {
  (w->prev_blocked ? w->prev_blocked->next_blocked : blocked_head_) = w->next_blocked;
  if (w->next_blocked) w->next_blocked->prev_blocked = w->prev_blocked;
  --blocked_;
}

void WaitRegistry::wake(WaitList& list) {
  Waiter* w = list.head_;
  list.head_ = list.tail_ = nullptr;
  while (w) {
    Waiter* next = w->next_in_list;  // read before the waiter's actor may run
    unlink_blocked(w);
    if (w->actor != simgrid::s4u::Actor::self()) w->actor->resume();
    w = next;
  }
}

void WaitRegistry::abort_all() {
  if (aborted_) return;
  aborted_ = true;
  while (blocked_head_) {
    Waiter* w = blocked_head_;
    w->list->head_ = w->list->tail_ = nullptr;  // every member of that list goes too
    unlink_blocked(w);
    if (w->actor != simgrid::s4u::Actor::self()) w->actor->resume();
  }
}

void WaitRegistry::report_deadlock() {
  std::vector<BlockedStream> report;
  for (const Waiter* w = blocked_head_; w; w = w->next_blocked)
    report.push_back(describe_(w->site));
  std::sort(report.begin(), report.end(), [](const BlockedStream& x, const BlockedStream& y) {
    return x.rank != y.rank ? x.rank < y.rank : x.stream < y.stream;
  });
  on_deadlock_(std::move(report));
  abort_all();
}

}  // namespace symmesh::sim
