#pragma once
// The beam search behind search_layout (layout_search.hpp), in three files by concern:
// layout_search.cpp walks the ops and keeps the beam, layout_search_pricing.cpp prices each
// op's strategies from a state (its inputs' placements, copies, gradient reductions), and
// layout_search_memory.cpp keeps a state's memory, its merge key and its layer slots. Not
// part of the library's interface: only those files include it.
#include <algorithm>
#include <array>
#include <chrono>
#include <map>
#include <memory>
#include <numeric>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "core/errors.hpp"
#include "strategies/layout_search.hpp"
#include "strategies/op_rules.hpp"
#include "strategies/step_streams.hpp"

namespace symmesh::strategies::layout_search_detail {

// Placements interned as small ids, so a state is a vector of ints.
class PlacementTable {
 public:
  int intern(const Placements& p) {
    auto [it, inserted] = ids_.emplace(to_string(p), static_cast<int>(all_.size()));
    if (inserted) all_.push_back(p);
    return it->second;
  }
  const Placements& at(int id) const { return all_.at(id); }

 private:
  std::unordered_map<std::string, int> ids_;
  std::vector<Placements> all_;
};

// An input redistributed by an op and kept for later readers of the same tensor on the same
// pipeline stage (Megatron-SP all-gathers the attention output once for both MLP
// projections).
struct Copy {
  TensorId tensor = -1;
  int id = -1;    // interned placements
  int stage = 0;  // where it is held
  auto operator<=>(const Copy&) const = default;
};

// One priced way to run an op from given input placements.
struct Option {
  std::shared_ptr<const OpLayout> layout;
  std::vector<std::pair<TensorId, int>> places;  // free parameters and the output, placed
  std::optional<GradientReduction> reduction;
  int64_t transient_bytes = 0;
  int64_t new_static_bytes = 0;  // free parameters placed here
  double cost_us = 0;            // the op's, plus its gradient reduction's
  double reduction_us = 0;       // the gradient reduction's share, on the comm stream
  double update_us = 0;          // the optimizer update of the parameter settled here
  double compute_us = 0;         // the op's local matmul (the rest of its cost moves data)
  uint32_t net_links = 0;        // link classes the op's own redistributions use
  uint32_t reduction_links = 0;  // and its gradient reduction
  // Training: the reductions this op's strategy will need in the backward, foreseen
  // (ranking only) under a key: a parameter's gradient reduction under the parameter's
  // tensor id; an activation input's gradient reduction (the input read whole where another
  // input is split, so its gradient comes back Partial) under foreseen_input_key of this
  // forward op; each key once. `settles`: the parameter whose reduction this op makes;
  // `settles_input`: the forward op's key whose input gradients this backward op makes (-1
  // for none).
  std::vector<std::pair<int, double>> foreseen_us;
  double foreseen_total_us = 0;  // foreseen_us's sum
  TensorId settles = -1;
  int settles_input = -1;
  // Inputs redistributed here: the copies stay for later readers of the same tensor.
  std::vector<Copy> copies;
  // The strategy as placements (inputs as computed, output as made), interned: what a later
  // layer's op in the same slot is held to (LayoutSearchOptions::periodic_layers).
  int signature = -1;
  double reduction_link_us[2] = {0, 0};  // reduction_us by link class (step_streams.hpp)
  // ZeRO-3: the gathers of the weights it reads, before it, by link class (in cost_us too),
  // and its op's gather unit (gather_unit_of).
  double gather_link_us[2] = {0, 0};
  int gather_unit = -1;
  // What the streams (step_streams.hpp) run of it.
  OpTiming timing() const {
    const double gather_us = gather_link_us[0] + gather_link_us[1];
    return {cost_us - reduction_us - gather_us,
            compute_us,
            reduction_us,
            update_us,
            net_links,
            reduction_links,
            {reduction_link_us[0], reduction_link_us[1]},
            {gather_link_us[0], gather_link_us[1]},
            gather_unit};
  }
};

struct Choice {
  std::shared_ptr<const Choice> parent;
  int op = -1;
  std::shared_ptr<const Option> option;
};

struct State {
  std::vector<int> placed;  // per tensor: interned placements, -1 while unknown
  double cost_us = 0;       // every op and reduction in series
  Streams streams;          // the same, overlapped as the schedule runs them
  // Per pipeline stage (one without stages): its parameters' bytes, and the tensors (and
  // copies) it holds alive at the last op processed; the peak is over the ops so far, each
  // against its own stage's.
  std::vector<int64_t> static_bytes;
  std::vector<int64_t> live_bytes;
  int64_t peak_bytes = 0;  // static + live + transient, the most so far
  uint64_t key = 0;        // hash of the placements still to be read (see Search::contribution)
  std::shared_ptr<const Choice> history;
  // Foreseen gradient reductions not yet priced: ranking by cost alone would take, in the
  // forward, the layouts whose price comes only in the backward (replicated weights,
  // activations read whole against a split operand). Keys as Option::foreseen_us's.
  std::vector<std::pair<int, double>> foreseen_us;
  double foreseen_total_us = 0;  // foreseen_us's sum
  std::vector<Copy> copies;  // also held, sorted
  // periodic_layers: per layer slot, the signature of the strategy chosen (-1: not yet).
  std::vector<int> slot_choice;
};

inline Placements without_partial(Placements p) {
  for (Placement& x : p)
    if (x.is_partial()) x = Placement::replicate();
  return p;
}

inline bool has_partial(const Placements& p) {
  return std::any_of(p.begin(), p.end(), [](const Placement& x) { return x.is_partial(); });
}

class Search {
 public:
  // `leanest`: minimise the peak memory instead of the time, with no capacity (what the
  // step needs at least, when nothing fits).
  // `slots_keyed` (periodic_layers): a state's slot choices are part of its future, so
  // states that differ only in them are not merged.
  Search(const DataflowGraph& graph, const DeviceMesh& mesh, const CostModel& model,
         const LayoutSearchOptions& options, bool leanest, bool slots_keyed = false);

  // What each stage holds, when (step_memory.hpp): one entry per (tensor, stage holding
  // it), weighted by the micro-batches in flight when the stage keeps it for its backward.
  struct MemoryEntry {
    TensorId tensor = -1;
    int stage = 0;
    Lifetime life;
    MicroBatchesInFlight weight;  // one micro-batch unless kept for the backward
  };
  void build_memory_entries();

  // The lifetime of `t` on `stage` (birth -1 when the stage does not hold it).
  Lifetime life_on(TensorId t, int stage) const;

  int stage_of(int op) const { return g_.stages > 1 ? g_.ops[op].stage : 0; }

  // Ops of a layer (WorkloadOp::layer, which a model's expansion writes) share a slot with
  // the op at the same position of every other layer, and what each derives (its dgrad,
  // wgrad, recomputation) with theirs; ops of no layer have none (-1).
  void assign_layer_slots();

  // The interned signature of a strategy: its inputs' placements as computed and its output's.
  int signature_of(const Candidate& c);

  // nullopt when no layout fits in the GPU's memory.
  std::optional<StepLayout> run();

 private:
  bool over_capacity(int64_t bytes) const;

  // Placements input `k` of op `i` is read with in `state`; nullopt for a free parameter.
  std::optional<Placements> read_placements(const State& state, const GraphInput& in) const;

  // Placements of `in`'s tensor as `in` reads them (a transposed read swaps them; the
  // swap is its own inverse, so this also turns read placements back into stored ones).
  Placements as_read(const Placements& p, const GraphInput& in) const;

  // Where a produced tensor must end up, given the strategy's output placements.
  std::optional<Placements> output_target(const GraphTensor& out,
                                          const Placements& produced) const;

  // `held`: a slot choice's signature the op is held to (periodic_layers), -1 for none: then
  // only that strategy is priced and offered.
  const std::vector<std::shared_ptr<const Option>>& options_for(const State& state, int i,
                                                                int held = -1);

  // The mesh dims (of size > 1) where input `k`, `held` there, is Replicate while `c` splits
  // another input: the backward's mirror of `c` makes the input's gradient Partial there.
  std::vector<int> broadcast_dims(const GraphOp& op, size_t k, const Candidate& c,
                                  const Placements& held) const;
  // Each step of `moves` (`spec` brought to `to`) at its share of its gradient bucket
  // (gradient_buckets.hpp): how a parameter's reduction and gather are ranked.
  std::vector<double> bucket_share_us(const TensorSpec& spec, const Redistribution& moves,
                                      const Placements& to) const;
  // The cost model's time to bring a tensor of `shape` from `from` to `to`.
  double moves_us(const Shape& shape, DType dtype, const Placements& from,
                  const Placements& to) const;

  // What reducing the gradient of parameter input `k` of forward op `op` will cost when the
  // parameter is stored at `stored` and the strategy `c` runs: on each mesh dim where the
  // parameter is replicated but another input is sharded (the data is split there), the
  // gradient comes out Partial and is all-reduced.
  double foreseen_reduction_us(const GraphOp& op, size_t k, const Candidate& c,
                               const Placements& stored) const;

  // What reducing the gradient of activation input `k` of forward op `op` will cost when
  // the strategy `c` runs on the input as it `arrives`: on each mesh dim between nodes
  // where `c` gathers the input whole but splits another input (a vocabulary-parallel
  // projection over dp), the backward's mirror of `c` makes the input's gradient Partial
  // there, and a reduce-scatter of it follows. Seen only when the backward reads it, this
  // cost let the forward choose a strategy whose backward reduces a whole activation over
  // the nodes.
  double foreseen_input_reduction_us(const GraphOp& op, size_t k, const Candidate& c,
                                     const Placements& arrives) const;

  // The foreseen key of the forward op that `op` (any pass) derives from; -1 for none.
  int foreseen_input_key(const GraphOp& op) const;

  // ZeRO-3: adds to `option` the gather of parameter `param`, stored at `stored`, from its
  // optimizer state's placements (the shard it keeps) before the op reads it.
  void add_gather(Option& option, TensorId param, const Placements& stored);

  // The final gradient of a parameter, at `grad`, brought to the parameter's placements.
  bool add_reduction(Option& option, const State& state, const GraphOp& op, int i,
                     const Placements& grad);

  // A successor of a beam state, not materialised: the beam keeps few of many.
  struct Successor {
    int parent = -1;
    std::shared_ptr<const Option> option;
    double cost_us = 0, rank_us = 0;
    Streams streams;
    int64_t static_bytes = 0, live_bytes = 0;  // op i's stage's, after it
    int64_t peak_bytes = 0;
    uint64_t key = 0;
  };

  // A placed tensor still to be read contributes to a state's key; two states with the
  // same key have the same future (up to hash collisions, 2^-64 per pair).
  // Placements that differ only on mesh dims of size 1 hold the same data (a shard of one,
  // a partial sum of one), so they key alike: otherwise on a 8x1 mesh the beam fills with
  // copies of one layout and loses the better ones.
  uint64_t contribution(TensorId t, int id, uint64_t salt);
  static uint64_t mixed(int high, int low, uint64_t salt);
  static constexpr uint64_t kPlacedSalt = 0x9e3779b97f4a7c15ULL;
  static constexpr uint64_t kCopySalt = 0x632be59bd9b4e019ULL;
  static constexpr uint64_t kSlotSalt = 0x2545f4914f6cdd1dULL;

  // The link class mesh dim d's collectives are bound by: NVLink inside a node (bit 0) or
  // the NICs between nodes (bit 1), mesh ranks laid on GPUs node-major. Without the node
  // size every dim shares one class.
  uint32_t links(int d) const;

  int canonical_id(int id);

  int64_t bytes_of(TensorId t, int id);

  // The placements of `t` after `option` runs on `s` (-1 while unknown).
  int placed_after(const State& s, const Option* option, TensorId t) const;

  // Live bytes (of op i's stage) and key of `s` moved past op `i` with `option` (none: an op
  // that places nothing), from the parent's figures: what dies or stops being read at i
  // leaves, what is born or placed at i arrives. (What another stage holds dies at i only
  // when that stage's last op was i − 1: settle_other_stages.)
  void move_past(const State& s, const Option* option, int i, int64_t& live, uint64_t& key);

  // What entry e holds in `s` (its tensor at its placements, weighted) and the copies of
  // its tensor its stage holds.
  int64_t entry_bytes(const State& s, int e);

  // Entries of other stages than op i's that die at i leave their stage's live bytes.
  void settle_other_stages(State& s, int i);

  State materialise(const State& s, const Successor& n, int i);

  static double foreseen_sum(const State& s, const Option& o);
  // The entry of `key` (each key is held once), searched from the back: the backward settles
  // the last forward ops' entries first. rend() for none or a negative key.
  static std::vector<std::pair<int, double>>::const_reverse_iterator last_foreseen(
      const std::vector<std::pair<int, double>>& foreseen, int key);

  // Past an op with no tensors (put_signal, collectives): only lifetimes move, and a
  // barrier waits for the reductions issued before it.
  void pass(std::vector<State>& beam, int i);

  std::vector<State> advance(const std::vector<State>& beam, int i);

  StepLayout layout_of(const State& s) const;

  // The first (cheapest, or leanest) finished state; its exact peak may still exceed
  // the capacity when the bound seen during the search did not (then the next is tried).
  std::optional<StepLayout> finish(const std::vector<State>& beam) const;

  const DataflowGraph& g_;
  const DeviceMesh& mesh_;
  const CostModel& model_;
  LayoutSearchOptions options_;
  bool leanest_ = false;
  bool slots_keyed_ = false;
  PlacementTable table_;
  std::vector<MemoryEntry> entries_;
  std::vector<std::vector<int>> entries_of_;  // by tensor
  std::vector<bool> has_gradient_;            // by parameter: a wgrad derives its gradient
  std::vector<bool> has_input_gradient_;      // by activation or input: a gradient is derived
  // By forward file op: the index of its first graph op (the key's offset, foreseen_us).
  std::unordered_map<const WorkloadOp*, int> forward_index_;
  // By op index: tensors born there, dying there (alive before, not at it), read there
  // for the last time.
  std::vector<std::vector<int>> born_, dying_;  // by op: memory entries
  std::vector<std::vector<TensorId>> last_;
  std::unordered_map<int64_t, int64_t> bytes_;  // (tensor, placements id) -> local bytes
  std::vector<int> canonical_;  // placements id -> id with size-1 mesh dims replicated
  std::vector<int> last_use_;
  std::unordered_map<uint64_t, double> update_us_;  // by (parameter, placements id)
  // ZeRO-3: a parameter's gather before each reader, by link class; by (parameter, id).
  std::unordered_map<uint64_t, std::array<double, 2>> gather_us_;
  std::vector<TensorId> seed_of_;
  std::map<std::string, std::vector<std::shared_ptr<const Option>>> memo_;
  int64_t priced_ = 0;
  int64_t expanded_ = 0;
  int64_t dropped_for_memory_ = 0;
  int64_t periodic_fallbacks_ = 0;
  std::vector<int> slot_of_;  // by op: its layer slot (periodic_layers), -1 for none
  int slots_ = 0;
  std::unordered_map<std::string, int> signatures_;  // strategy text -> signature
  // By op: the first pricing the model refused outright (no candidate of a group fits).
  std::map<int, Unsupported> refusal_;
  // Gradient buckets' prices (gradient_buckets.hpp): a reduction's share in the ranking, the
  // finished layout's buckets whole.
  mutable BucketPricer buckets_{model_, mesh_};
};

}  // namespace symmesh::strategies::layout_search_detail
