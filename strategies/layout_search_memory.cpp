// A beam state's memory, merge key and layer slots (layout_search_beam.hpp).
#include "strategies/layout_search_beam.hpp"

namespace symmesh::strategies::layout_search_detail {

void Search::build_memory_entries() {
  const int ops = static_cast<int>(g_.ops.size());
  const int stages = std::max(1, g_.stages);
  born_.resize(ops);
  dying_.resize(ops + 1);
  entries_of_.resize(g_.tensors.size());
  for (int s = 0; s < stages; ++s) {
    const std::vector<HeldTensor> held = held_tensors(g_, stages > 1 ? s : -1);
    for (TensorId t = 0; t < static_cast<TensorId>(held.size()); ++t) {
      const Lifetime& life = held[t].life;
      if (life.birth < 0) continue;
      const int e = static_cast<int>(entries_.size());
      entries_.push_back({t, s, life, held[t].weight});
      entries_of_[t].push_back(e);
      if (life.birth < ops) born_[life.birth].push_back(e);
      if (life.death <= ops) dying_[life.death].push_back(e);
    }
  }
}

Lifetime Search::life_on(TensorId t, int stage) const {
  for (int e : entries_of_[t])
    if (entries_[e].stage == stage) return entries_[e].life;
  return {};
}

void Search::assign_layer_slots() {
  // A file op's slot: its position among its layer's ops, in file order.
  std::unordered_map<const WorkloadOp*, int> position;
  std::unordered_map<int, int> ops_in_layer;
  std::unordered_map<std::string, int> slots;
  for (size_t i = 0; i < g_.ops.size(); ++i) {
    const WorkloadOp* source = g_.ops[i].source;
    if (source == nullptr || source->layer < 0) continue;
    const auto [at, fresh] = position.try_emplace(source, 0);
    if (fresh) at->second = ops_in_layer[source->layer]++;
    // A graph op's slot: its file op's slot and what it derives (the forward, ".dgrad.a",
    // ".wgrad", a recomputation), by the suffix the graph appends to the file op's name.
    const std::string& name = g_.ops[i].name;
    const std::string derived =
        name.rfind(source->name, 0) == 0 ? name.substr(source->name.size()) : name;
    const std::string key = std::to_string(at->second) + derived;
    slot_of_[i] = slots.try_emplace(key, static_cast<int>(slots.size())).first->second;
  }
  slots_ = static_cast<int>(slots.size());
}

uint64_t Search::contribution(TensorId t, int id, uint64_t salt) {
  return mixed(t, canonical_id(id), salt);
}

uint64_t Search::mixed(int high, int low, uint64_t salt) {
  uint64_t x = (static_cast<uint64_t>(high) << 32 | static_cast<uint32_t>(low)) ^ salt;
  x ^= x >> 33;  // splitmix-style finaliser
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  return x ^ (x >> 33);
}

uint32_t Search::links(int d) const {
  return mesh_dim_link_class(mesh_, d, options_.gpus_per_node);
}

int Search::canonical_id(int id) {
  if (id >= static_cast<int>(canonical_.size())) canonical_.resize(id + 1, -1);
  if (canonical_[id] < 0) {
    Placements p = table_.at(id);
    for (int d = 0; d < mesh_.ndim(); ++d)
      if (mesh_.shape()[d] == 1) p[d] = Placement::replicate();
    const int c = table_.intern(p);
    if (c >= static_cast<int>(canonical_.size())) canonical_.resize(c + 1, -1);
    canonical_[id] = c;
    canonical_[c] = c;
  }
  return canonical_[id];
}

int64_t Search::bytes_of(TensorId t, int id) {
  const int64_t key = static_cast<int64_t>(t) << 32 | id;
  auto it = bytes_.find(key);
  if (it == bytes_.end()) {
    const GraphTensor& x = g_.tensors[t];
    it = bytes_.emplace(key, local_bytes(x.shape, x.dtype, table_.at(id), mesh_)).first;
  }
  return it->second;
}

int Search::placed_after(const State& s, const Option* option, TensorId t) const {
  if (option)
    for (const auto& [u, id] : option->places)
      if (u == t || (seed_of_[u] >= 0 && seed_of_[u] == t)) return id;
  int id = s.placed[t];
  if (id < 0 && g_.tensors[t].kind == GraphTensor::Kind::seed) {
    const TensorId of = g_.tensors[t].of;
    if (option)
      for (const auto& [u, placed] : option->places)
        if (u == of) return placed;
    id = s.placed[of];
  }
  return id;
}

void Search::move_past(const State& s, const Option* option, int i, int64_t& live, uint64_t& key) {
  const int stage = stage_of(i);
  live = s.live_bytes[stage];
  key = s.key;
  for (int e : dying_[i])
    if (entries_[e].stage == stage) live -= entry_bytes(s, e);
  for (int e : born_[i]) {
    const int id = placed_after(s, option, entries_[e].tensor);
    if (id >= 0) live += entries_[e].weight.of(bytes_of(entries_[e].tensor, id));
  }
  for (TensorId t : last_[i])
    if (s.placed[t] >= 0) key -= contribution(t, s.placed[t], kPlacedSalt);
  for (const Copy& c : s.copies)
    if (last_use_[c.tensor] == i) key -= contribution(c.tensor, c.id, kCopySalt);
  if (!option) return;
  const auto change = [&](TensorId t, int id) {
    if (last_use_[t] <= i) return;
    if (s.placed[t] >= 0) key -= contribution(t, s.placed[t], kPlacedSalt);
    key += contribution(t, id, kPlacedSalt);
  };
  for (const auto& [t, id] : option->places) {
    change(t, id);
    if (seed_of_[t] >= 0) change(seed_of_[t], id);
  }
  for (const Copy& copy : option->copies) {
    if (std::find(s.copies.begin(), s.copies.end(), copy) != s.copies.end()) continue;
    if (life_on(copy.tensor, copy.stage).alive_at(i)) live += bytes_of(copy.tensor, copy.id);
    if (last_use_[copy.tensor] > i) key += contribution(copy.tensor, copy.id, kCopySalt);
  }
}

int64_t Search::entry_bytes(const State& s, int e) {
  const MemoryEntry& m = entries_[e];
  int64_t bytes = 0;
  const int id = placed_after(s, nullptr, m.tensor);
  if (id >= 0) bytes += m.weight.of(bytes_of(m.tensor, id));
  for (const Copy& c : s.copies)
    if (c.tensor == m.tensor && c.stage == m.stage) bytes += bytes_of(c.tensor, c.id);
  return bytes;
}

void Search::settle_other_stages(State& s, int i) {
  for (int e : dying_[i])
    if (entries_[e].stage != stage_of(i)) s.live_bytes[entries_[e].stage] -= entry_bytes(s, e);
}

State Search::materialise(const State& s, const Successor& n, int i) {
  const Option& option = *n.option;
  State out{s.placed,     n.cost_us,
            n.streams,    s.static_bytes,
            s.live_bytes, n.peak_bytes,
            n.key,        std::make_shared<const Choice>(Choice{s.history, i, n.option})};
  out.copies = s.copies;
  out.slot_choice = s.slot_choice;
  if (const int slot = slot_of_[i]; slot >= 0 && out.slot_choice[slot] < 0)
    out.slot_choice[slot] = option.signature;
  settle_other_stages(out, i);  // before the copies change: theirs are the parent's
  out.static_bytes[stage_of(i)] = n.static_bytes;
  out.live_bytes[stage_of(i)] = n.live_bytes;
  for (const auto& [t, id] : option.places) {
    out.placed[t] = id;
    if (seed_of_[t] >= 0) out.placed[seed_of_[t]] = id;
  }
  for (const auto& copy : option.copies)
    if (std::find(out.copies.begin(), out.copies.end(), copy) == out.copies.end())
      out.copies.push_back(copy);
  // A copy is read until its tensor's last use and held until the tensor dies (its
  // bytes leave the live count then, in move_past).
  out.copies.erase(std::remove_if(out.copies.begin(), out.copies.end(),
                                  [&](const Copy& c) {
                                    const Lifetime life = life_on(c.tensor, c.stage);
                                    return last_use_[c.tensor] <= i &&
                                           (life.birth < 0 || life.death <= i);
                                  }),
                   out.copies.end());
  std::sort(out.copies.begin(), out.copies.end());
  out.foreseen_us = s.foreseen_us;
  out.foreseen_us.insert(out.foreseen_us.end(), option.foreseen_us.begin(),
                         option.foreseen_us.end());
  for (const int key : {option.settles, option.settles_input})
    if (const auto at = last_foreseen(out.foreseen_us, key); at != out.foreseen_us.rend())
      out.foreseen_us.erase(std::next(at).base());
  out.foreseen_total_us = foreseen_sum(s, option);
  return out;
}

std::vector<std::pair<int, double>>::const_reverse_iterator Search::last_foreseen(
    const std::vector<std::pair<int, double>>& foreseen, int key) {
  if (key < 0) return foreseen.rend();
  return std::find_if(foreseen.rbegin(), foreseen.rend(),
                      [key](const auto& f) { return f.first == key; });
}

double Search::foreseen_sum(const State& s, const Option& o) {
  double sum = s.foreseen_total_us + o.foreseen_total_us;
  for (const int key : {o.settles, o.settles_input})
    if (const auto at = last_foreseen(s.foreseen_us, key); at != s.foreseen_us.rend())
      sum -= at->second;
  return sum;
}

}  // namespace symmesh::strategies::layout_search_detail
