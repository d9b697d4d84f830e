// A training step's replica and data-parallel Programs (training_step_program.hpp).
#include "strategies/training_step_program.hpp"

#include <algorithm>
#include <string>

#include "core/collectives.hpp"
#include "core/errors.hpp"
#include "core/optimizer_step.hpp"
#include "core/transformer_layer.hpp"
#include "strategies/pipeline_schedule.hpp"

namespace symmesh::strategies {
namespace {

// The local buffers every rank's ops read and write: timing only, so three of the largest
// size serve every operand (a Program without carried data holds no bytes for them).
struct Scratch {
  BufferRef a, b, c;
};

// Writes one stage's ops: its tp ranks' streams, one task at a time.
class StageWriter {
 public:
  StageWriter(Program& program, const TransformerSpec& spec, const TrainingLayout& layout,
              const std::vector<int>& ranks, const std::vector<Scratch>& scratch)
      : program_(program),
        spec_(spec),
        layout_(layout),
        ranks_(ranks),
        scratch_(scratch),
        layer_(transformer_layer_ops(spec)) {
    const int t = layout.tp;
    tokens_ = layout.micro_batch * spec.seq;
    element_ = element_size_bytes(spec.dtype);
    activation_bytes_ = tokens_ * spec.hidden * element_;  // [T, h], gathered
    if (t > 1) tp_group_ = program.add_group(ranks);
    if (t > 1) tp_data_ = program.symm_alloc(tp_group_, activation_bytes_);
    // The final RMSNorm before the output projection moves what a layer's first norm does.
    for (const LayerOp& op : layer_)
      if (op.name == "norm1") norm_bytes_ = layer_kernel_bytes(op, spec, tokens_, t);
  }

  void set_label(const std::string& name) { label_ = name; }

  // A layer's forward, its ops in the table's order (core/transformer_layer.hpp), each
  // labelled by its name; recomputed (full recomputation, inside the backward), its
  // all-gathers but not its reduce-scatters.
  void layer_forward(bool recomputed = false) {
    const std::string again = recomputed ? "recompute " : "";
    for (const LayerOp& op : layer_) {
      const std::string name(op.name);
      collective(op.tp_before, again + name + " ", recomputed);
      switch (op.work) {
        case LayerWork::gemm:
          gemm(layer_gemm(op, tokens_, layout_.tp), 1.0, again + name);
          break;
        case LayerWork::attention:
          attention_products(false, again);
          break;
        case LayerWork::kernel:
          kernel(layer_kernel_bytes(op, spec_, tokens_, layout_.tp), again + name);
          break;
      }
      collective(op.tp_after, again + name + " ", recomputed);
    }
  }

  // A layer's backward: the table in reverse, each op's gradients and each collective's
  // reverse (an all-gather's is a reduce-scatter); with full recomputation the layer's
  // forward first.
  void layer_backward() {
    if (layout_.recompute == Recompute::full) layer_forward(/*recomputed=*/true);
    for (auto it = layer_.rbegin(); it != layer_.rend(); ++it) {
      const LayerOp& op = *it;
      const std::string name(op.name);
      const TpCollective after = backward_of(op.tp_after), before = backward_of(op.tp_before);
      collective(after, name + " backward ");
      switch (op.work) {
        case LayerWork::gemm:
          gemm(layer_gemm_dgrad(op, tokens_, layout_.tp), 1.0, name + " dgrad");
          gemm(layer_gemm_wgrad(op, tokens_, layout_.tp), 1.0, name + " wgrad");
          break;
        case LayerWork::attention:
          attention_products(true, "");
          break;
        case LayerWork::kernel:
          // Its multiple (2): as many launches of the forward's bytes.
          kernel(layer_kernel_bytes(op, spec_, tokens_, layout_.tp), name + " backward",
                 static_cast<int>(op.backward_multiple));
          break;
      }
      collective(before, name + " backward ");
    }
  }

  void embedding(bool backward) {
    kernel(static_cast<double>(tokens_ * spec_.hidden / layout_.tp * element_),
           backward ? "embedding backward" : "embedding");
  }

  // The output projection and the loss (forward), or their gradients (backward).
  void output(bool backward) {
    const int64_t t = layout_.tp, T = tokens_, h = spec_.hidden, V = spec_.vocab / t;
    if (!backward) {
      kernel(norm_bytes_, "final rmsnorm");
      all_gather("logits");
      gemm({1, T, V, h}, 1.0, "logits");
      // Softmax cross-entropy over the fp32 logits: read, write the gradient.
      kernel(static_cast<double>(T * V * 4), "loss");
      return;
    }
    gemm({1, T, h, V}, 1.0, "logits dgrad");
    gemm({1, h, V, T}, 1.0, "logits wgrad");
    reduce_scatter("logits");
    kernel(norm_bytes_, "final rmsnorm backward", 2);
  }

 private:
  OpLabel label(const std::string& detail) const { return {label_, OpCategory::compute, detail}; }

  void gemm(const LocalGemm& shape, double fraction, const std::string& what) {
    MatmulWork work = matmul_work(shape, spec_.dtype);
    work.work_fraction = fraction;
    const int64_t batch = shape.batch, m = shape.m, n = shape.n, k = shape.k;
    const LabelId id = program_.label(label(what));
    for (size_t i = 0; i < ranks_.size(); ++i) {
      const Scratch& s = scratch_[i];
      work.a = s.a.slice(0, batch * m * k * element_);
      work.b = s.b.slice(0, batch * k * n * element_);
      work.c = s.c.slice(0, batch * m * n * element_);
      program_.matmul(ranks_[i], compute_stream(i), work, id);
    }
  }

  // FlashAttention's causal products over b·heads/t heads (core/transformer_layer.hpp):
  // scores and context forward; in the backward its five.
  void attention_products(bool backward, const std::string& prefix) {
    for (const AttentionProduct& p :
         symmesh::attention_products(spec_, layout_.micro_batch, layout_.tp, backward))
      gemm(p.gemm, p.work_fraction, prefix + std::string(p.name));
  }

  // An HBM-bound kernel of `traffic` bytes read and written, `times` launches of it: a copy
  // of half of it (a copy reads and writes its bytes).
  void kernel(double traffic, const std::string& what, int times = 1) {
    const int64_t bytes = std::max<int64_t>(1, static_cast<int64_t>(traffic / 2));
    const LabelId id = program_.label(label(what));
    for (int n = 0; n < times; ++n)
      for (size_t i = 0; i < ranks_.size(); ++i) {
        CopyWork copy;
        copy.src = scratch_[i].a.slice(0, bytes);
        copy.dst = scratch_[i].c.slice(0, bytes);
        copy.row_bytes = bytes;
        program_.copy(ranks_[i], compute_stream(i), copy, id);
      }
  }

  CollectiveSpec tp_spec(const std::string& what) const {
    CollectiveSpec spec;
    spec.group = tp_group_;
    spec.bytes = activation_bytes_;
    spec.dtype = spec_.dtype;
    spec.stream = "compute";
    spec.name = label_ + " " + what;
    return spec;
  }
  // A sequence-parallel collective of the [T, h] activation over the stage's tensor ranks
  // (none with one rank), named `prefix` and its kind ("qkv all-gather"); a recomputed
  // forward skips its reduce-scatters.
  void collective(TpCollective kind, const std::string& prefix, bool recomputed = false) {
    if (layout_.tp == 1 || kind == TpCollective::none) return;
    if (kind == TpCollective::reduce_scatter && recomputed) return;
    const CollectiveSpec spec = tp_spec(prefix + std::string(to_string(kind)));
    if (kind == TpCollective::all_gather) ring_all_gather(program_, spec, tp_data_);
    if (kind == TpCollective::reduce_scatter) ring_reduce_scatter(program_, spec, tp_data_);
  }
  void all_gather(const std::string& what) { collective(TpCollective::all_gather, what + " "); }
  void reduce_scatter(const std::string& what) {
    collective(TpCollective::reduce_scatter, what + " ");
  }

  StreamId compute_stream(size_t i) { return program_.stream(ranks_[i], "compute"); }

  Program& program_;
  const TransformerSpec& spec_;
  const TrainingLayout& layout_;
  const std::vector<int>& ranks_;
  const std::vector<Scratch>& scratch_;
  int64_t tokens_ = 0;
  int64_t element_ = 0;
  int64_t activation_bytes_ = 0;
  GroupId tp_group_ = -1;
  SymmetricHandle tp_data_;
  const std::vector<LayerOp> layer_;
  double norm_bytes_ = 0;
  std::string label_ = kForwardLabel;
};

// The sends between two stages' tensor rank t: a pair group per direction of each boundary,
// one symmetric buffer on it with a slot per (micro-batch, chunk).
struct Boundary {
  GroupId group = -1;  // [sender, receiver]
  SymmetricHandle slots;
};

}  // namespace

ReplicaProgram replica_program(const TransformerSpec& spec, int64_t global_batch,
                               const ClusterSpec& cluster, const TrainingLayout& l, bool counting) {
  check_training_layout(spec, global_batch, cluster, l);
  if (l.virtual_stages > 1 && l.pp == 1)
    throw InvalidArgument("virtual stages need pipeline parallelism (pp > 1)", "training layout");
  const int p = l.pp, v = l.virtual_stages, t = l.tp;
  const int gpn = cluster.gpus_per_node;
  // Megatron's rank of (t, replica 0, stage s) is t + tp·dp·s; when a stage's tp·dp ranks
  // fill whole nodes, every stage's first rank starts a node and the nodes between are
  // other replicas': the replica keeps one node per stage.
  const int64_t stage_block = int64_t{t} * l.dp;
  const int stride =
      stage_block >= gpn && stage_block % gpn == 0 ? gpn : static_cast<int>(stage_block);
  const int world = (p - 1) * stride + t;

  ReplicaProgram out;
  out.program = counting ? Program::counting(world) : Program(world);
  out.nodes = (world + gpn - 1) / gpn;
  out.micro_batches = global_batch / (int64_t{l.dp} * l.micro_batch);
  out.chunk_layers = chunk_layer_counts(spec.layers, p * v);
  Program& program = out.program;
  const int64_t m = out.micro_batches;
  const int64_t element = element_size_bytes(spec.dtype);
  const int64_t tokens = l.micro_batch * spec.seq;
  const int64_t send_bytes = tokens * spec.hidden / t * element;  // [T, h]/t, sequence parallel

  auto rank_of = [&](int stage, int tensor_rank) { return stage * stride + tensor_rank; };
  for (int s = 0; s < p; ++s) out.stage_first_rank.push_back(rank_of(s, 0));

  // Scratch buffers: the largest operand of any op (the scores' [b·heads/t, s, s] or the
  // logits' [T, vocab/t] in fp32).
  const int64_t heads = l.micro_batch * spec.heads / t;
  const int64_t largest =
      std::max({heads * spec.seq * std::max(spec.seq, spec.head_dim) * element,
                tokens * std::max({spec.hidden, spec.qkv_width(), spec.ffn, spec.vocab}) * 4,
                spec.hidden * std::max({spec.qkv_width(), spec.ffn, spec.vocab}) * element});
  std::vector<std::vector<int>> stage_ranks(p);
  std::vector<std::vector<Scratch>> scratch(p);
  for (int s = 0; s < p; ++s)
    for (int r = 0; r < t; ++r) {
      const int rank = rank_of(s, r);
      stage_ranks[s].push_back(rank);
      scratch[s].push_back({program.local_alloc(rank, largest), program.local_alloc(rank, largest),
                            program.local_alloc(rank, largest)});
    }

  // Sends: forward from model chunk j to j+1, backward from j+1 to j. Chunk c of stage s is
  // model chunk c·p + s, so stage s sends to s+1, and stage p-1 to stage 0 (the next chunk).
  // The wrap-around pairs get their own signal index: with p = 2 they join the same two
  // ranks as the forward boundary in the other direction.
  const int64_t slots = m * v;
  std::vector<std::vector<Boundary>> forward(p), backward(p);  // [sending stage][t]
  for (int s = 0; s < p && p > 1; ++s) {
    const int next = (s + 1) % p;
    if (next == 0 && v == 1) continue;  // no wrap-around without a next chunk
    for (int r = 0; r < t; ++r) {
      const int a = rank_of(s, r), b = rank_of(next, r);
      const GroupId ahead = program.add_group({a, b});
      const GroupId behind = program.add_group({b, a});
      forward[s].push_back({ahead, program.symm_alloc(ahead, slots * send_bytes)});
      backward[next].push_back({behind, program.symm_alloc(behind, slots * send_bytes)});
    }
  }
  // Signal 1 for the wrap-around sends (forward from stage p-1, backward from stage 0).
  auto signal_of = [&](bool forward_send, int from) {
    return (forward_send ? from == p - 1 : from == 0) ? 1 : 0;
  };
  const LabelId send_label = program.label({kSendLabel, OpCategory::comm, "activations"});
  const LabelId grad_label = program.label({kSendLabel, OpCategory::comm, "gradients"});
  const LabelId wait_label = program.label({kSendLabel, OpCategory::comm, "receive"});

  for (int s = 0; s < p; ++s) {
    StageWriter writer(program, spec, l, stage_ranks[s], scratch[s]);
    const std::vector<PipelineTask> order = stage_schedule(p, m, v, s);
    bool first_forward = true;
    for (size_t i = 0; i < order.size(); ++i) {
      const PipelineTask& task = order[i];
      const int model_chunk = task.chunk * p + s;
      const bool first_chunk = model_chunk == 0;
      const bool last_chunk = model_chunk == p * v - 1;
      const int64_t slot = task.micro_batch * v + task.chunk;
      // Each task's slices named by micro-batch (and chunk, interleaved) so that a trace
      // shows the schedule; the rank says the stage.
      std::string name = "mb " + std::to_string(task.micro_batch) +
                         (v > 1 ? " chunk " + std::to_string(task.chunk) : std::string()) + " " +
                         (task.forward ? kForwardLabel : kBackwardLabel);
      if (s == 0 && task.forward && first_forward) name = kFirstForwardLabel;
      if (s == 0 && !task.forward && i + 1 == order.size()) name = kLastBackwardLabel;
      writer.set_label(name);
      // Receive what this task needs from another stage.
      const bool receives = task.forward ? !first_chunk : !last_chunk;
      if (receives) {
        const int from = task.forward ? (s + p - 1) % p : (s + 1) % p;
        const Boundary* boundaries = task.forward ? forward[from].data() : backward[from].data();
        for (int r = 0; r < t; ++r) {
          const int rank = rank_of(s, r);
          program.wait_signal(rank, program.stream(rank, "compute"), boundaries[r].slots, 0,
                              wait_label, signal_of(task.forward, from));
        }
      }
      const int64_t layers = out.chunk_layers[static_cast<size_t>(model_chunk)];
      if (task.forward) {
        if (first_chunk) writer.embedding(false);
        for (int64_t layer = 0; layer < layers; ++layer) writer.layer_forward();
        if (last_chunk) writer.output(false);
      } else {
        if (last_chunk) writer.output(true);
        for (int64_t layer = 0; layer < layers; ++layer) writer.layer_backward();
        if (first_chunk) writer.embedding(true);
      }
      if (task.forward) first_forward = false;
      // Send what another stage needs from this task.
      const bool sends = task.forward ? !last_chunk : !first_chunk;
      if (sends) {
        for (int r = 0; r < t; ++r) {
          const int rank = rank_of(s, r);
          const StreamId compute = program.stream(rank, "compute");
          const StreamId send = program.stream(rank, "send");
          const Boundary& boundary = task.forward ? forward[s][r] : backward[s][r];
          const EventId done = program.record_event(rank, compute);
          program.wait_event(rank, send, done);
          program.put_signal(rank, send, scratch[s][r].c.slice(0, send_bytes), boundary.slots,
                             slot * send_bytes, 1, task.forward ? send_label : grad_label,
                             signal_of(task.forward, s));
        }
      }
    }
  }
  // The optimizer step: each stage's ranks update the parameters they own after their last
  // backward (stage 0's is last, on the step's critical path): Adam and the copy into the
  // bf16 weights (core/optimizer_step.hpp), each a copy of half its traffic.
  const double table = static_cast<double>(spec.vocab) * static_cast<double>(spec.hidden);
  for (int s = 0; s < p; ++s) {
    double params = 0;
    for (int c = 0; c < v; ++c)
      params += static_cast<double>(out.chunk_layers[static_cast<size_t>(c * p + s)]) *
                static_cast<double>(spec.layer_parameters());
    // As stage_parameters_per_rank counts them: the embedding on the first stage, the output
    // projection on the last (a copy of the table when tied and pp > 1, as Megatron keeps).
    if (s == 0) params += table;
    if (s == p - 1 && (p > 1 || !spec.tie_embeddings)) params += table;
    const double owned = params / t / (l.zero_stage >= 1 ? l.dp : 1);
    const auto adam_bytes =
        std::max<int64_t>(1, static_cast<int64_t>(owned * kAdamKernelBytesPerElement / 2));
    const auto cast_bytes =
        std::max<int64_t>(1, static_cast<int64_t>(owned * kMasterCopyBytesPerElement / 2));
    const LabelId label = program.label(
        {s == 0 ? kFirstStageOptimizerLabel : kOptimizerLabel, OpCategory::compute, "adam"});
    for (int r = 0; r < t; ++r) {
      const int rank = rank_of(s, r);
      const StreamId compute = program.stream(rank, "compute");
      const BufferRef src = program.local_alloc(rank, adam_bytes);
      const BufferRef dst = program.local_alloc(rank, adam_bytes);
      for (const int64_t bytes : {adam_bytes, cast_bytes}) {
        CopyWork copy;
        copy.src = src.slice(0, bytes);
        copy.dst = dst.slice(0, bytes);
        copy.row_bytes = bytes;
        program.copy(rank, compute, copy, label);
      }
    }
  }
  return out;
}

int64_t replica_stream_ops(const TransformerSpec& spec, int64_t global_batch,
                           const ClusterSpec& cluster, const TrainingLayout& l) {
  check_training_layout(spec, global_batch, cluster, l);
  // Every micro-batch's tasks hold the same ops, so the count is linear in m: count the
  // smallest schedule the layout allows (m0 = pp micro-batches, or m when fewer) and scale.
  const int64_t m = global_batch / (int64_t{l.dp} * l.micro_batch);
  const int64_t m0 = std::min<int64_t>(m, l.pp);
  const ReplicaProgram counted =
      replica_program(spec, m0 * l.dp * l.micro_batch, cluster, l, /*counting=*/true);
  // The optimizer's ops are written once per rank, not per micro-batch.
  const int64_t optimizer_ops = int64_t{kAdamUpdateKernels} * l.pp * l.tp;
  return (counted.program.counts().stream_ops - optimizer_ops) / m0 * m + optimizer_ops;
}

DataParallelProgram data_parallel_program(const TransformerSpec& spec, int gpus_per_node,
                                          const TrainingLayout& l) {
  DataParallelProgram out;
  out.parameters = stage_parameters_per_rank(spec, l);
  const auto params = static_cast<int64_t>(out.parameters);
  out.gradient_bytes = params * 4;  // fp32 main gradients, as Llama 3 reduces them
  out.weight_bytes = l.zero_stage >= 1 ? params * element_size_bytes(spec.dtype) : 0;
  // Stage 0's block of Megatron ranks t + tp·d: the ring of tensor rank t is every tp-th.
  const int world = l.tp * l.dp;
  out.program = Program(world);
  out.nodes = (world + gpus_per_node - 1) / gpus_per_node;
  if (l.dp == 1) return out;
  Program& program = out.program;
  for (int t = 0; t < l.tp; ++t) {
    std::vector<int> members;
    for (int d = 0; d < l.dp; ++d) members.push_back(t + l.tp * d);
    CollectiveSpec gradients;
    gradients.group = program.add_group(members);
    gradients.bytes = out.gradient_bytes;
    gradients.dtype = DType::fp32;
    gradients.stream = "comm";
    gradients.name = kGradientReduceLabel;
    if (l.zero_stage == 0) {
      ring_all_reduce(program, gradients);
      continue;
    }
    ring_reduce_scatter(program, gradients);
    CollectiveSpec weights = gradients;
    weights.bytes = out.weight_bytes;
    weights.dtype = spec.dtype;
    weights.name = kWeightGatherLabel;
    ring_all_gather(program, weights);
  }
  return out;
}

}  // namespace symmesh::strategies
