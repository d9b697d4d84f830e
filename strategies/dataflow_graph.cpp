#include "strategies/dataflow_graph.hpp"

#include <map>
#include <utility>

#include "core/errors.hpp"
#include "core/matmul_signature.hpp"
#include "core/tensor_op_registry.hpp"

namespace symmesh::strategies {
namespace {

OpKind accumulating(OpKind kind) {
  return kind == OpKind::bmm ? OpKind::baddbmm : OpKind::addmm;
}

class GraphBuilder {
 public:
  explicit GraphBuilder(const Scenario& scenario) : scenario_(scenario) {}

  DataflowGraph build() {
    for (const TensorDecl& decl : scenario_.tensors)
      if (decl.role != TensorDecl::Role::output) declare(decl);
    for (const WorkloadOp& op : scenario_.workload) add_forward(op);
    for (const TensorDecl& decl : scenario_.tensors)
      if (decl.role == TensorDecl::Role::output) {
        auto it = by_name_.find(decl.name);
        if (it == by_name_.end())
          throw InvalidArgument("tensor '" + decl.name + "' has no shape and no op produces it",
                                decl.where.to_string());
        graph_.tensors[it->second].required = decl.placements;
      }
    graph_.stages = scenario_.pipeline_stages();
    graph_.virtual_stages = scenario_.virtual_stages();
    if (graph_.stages > 1) check_stages();
    graph_.training = scenario_.training && scenario_.training->backward;
    if (scenario_.training) {
      graph_.optimizer = scenario_.training->optimizer;
      graph_.zero_stage = scenario_.training->zero_stage;
      graph_.micro_batches = scenario_.training->micro_batch_count();
    }
    // ZeRO-3 gathers each stage's weights per micro-batch and use; with a pipeline the
    // stages would hold them across interleaved micro-batches (torchtitan keeps them
    // gathered, reshard_after_forward off), a schedule the lowering does not write.
    if (graph_.zero_stage == 3 && graph_.stages > 1)
      throw InvalidArgument(
          "training.zero 3 with " + std::to_string(graph_.stages) +
              " pipeline stages is not modelled: ZeRO-3 is planned without pipeline "
              "parallelism (DeepSpeed refuses the pair, and Megatron's distributed optimizer "
              "is ZeRO-1); take zero 1 or a mesh without pp",
          scenario_.training->zero_where.to_string());
    if (graph_.virtual_stages > 1 && graph_.micro_batches % graph_.stages != 0)
      throw InvalidArgument(
          "training.virtual_stages " + std::to_string(graph_.virtual_stages) +
              ": the interleaved schedule needs the " + std::to_string(graph_.micro_batches) +
              " micro-batches to be a multiple of the " + std::to_string(graph_.stages) +
              " pipeline stages (as Megatron-LM requires)",
          scenario_.training->where.to_string());
    if (graph_.training) add_backward();
    return std::move(graph_);
  }

 private:
  // In a pipeline a forward op reads only what its own or an earlier (virtual) stage made
  // (the schedule runs a micro-batch's forward in model order), and a parameter lives on one
  // stage.
  void check_stages() const {
    std::map<TensorId, const GraphOp*> first_reader;
    for (const GraphOp& op : graph_.ops)
      for (const GraphInput& in : op.inputs) {
        const GraphTensor& t = graph_.tensors[in.tensor];
        const std::string where = op.source->where.to_string();
        if (t.producer >= 0 && graph_.ops[t.producer].source->stage > op.source->stage)
          throw InvalidArgument(
              "op '" + op.name + "' on stage " + std::to_string(op.source->stage) + " reads '" +
                  t.name + "', which op '" + graph_.ops[t.producer].name + "' makes on stage " +
                  std::to_string(graph_.ops[t.producer].source->stage) +
                  ": a stage reads only what it or an earlier stage makes",
              where);
        if (t.kind != GraphTensor::Kind::parameter) continue;
        const auto [it, first] = first_reader.emplace(in.tensor, &op);
        if (!first && it->second->stage != op.stage)
          throw InvalidArgument(
              "parameter '" + t.name + "' is read on stage " +
                  std::to_string(it->second->source->stage) + " (op '" + it->second->name +
                  "') and on stage " + std::to_string(op.source->stage) + " (op '" + op.name +
                  "'): each stage holds its own weights; a weight shared across stages (tied "
                  "embeddings) is not modelled yet",
              where);
      }
  }

  TensorId add_tensor(GraphTensor t) {
    const TensorId id = static_cast<TensorId>(graph_.tensors.size());
    by_name_.emplace(t.name, id);
    graph_.tensors.push_back(std::move(t));
    return id;
  }

  void declare(const TensorDecl& decl) {
    GraphTensor t;
    t.name = decl.name;
    t.kind = decl.role == TensorDecl::Role::parameter ? GraphTensor::Kind::parameter
                                                      : GraphTensor::Kind::input;
    t.shape = decl.shape;
    t.dtype = scenario_.dtype;
    t.declared = decl.placements;
    t.where = decl.where;
    add_tensor(std::move(t));
  }

  TensorId named(const std::string& name, const WorkloadOp& op) const {
    auto it = by_name_.find(name);
    if (it == by_name_.end())
      throw InvalidArgument("op '" + op.name + "': unknown tensor '" + name + "'",
                            op.where.to_string());
    return it->second;
  }

  int add_op(GraphOp op) {
    const int index = static_cast<int>(graph_.ops.size());
    if (op.source && scenario_.pipeline_stages() > 1) {
      op.stage = op.source->stage % scenario_.pipeline_stages();
      op.chunk = op.source->stage / scenario_.pipeline_stages();
    }
    for (const GraphInput& in : op.inputs) graph_.tensors[in.tensor].consumers.push_back(index);
    if (op.output >= 0) graph_.tensors[op.output].producer = index;
    graph_.ops.push_back(std::move(op));
    return index;
  }

  void add_forward(const WorkloadOp& op) {
    GraphOp g;
    g.name = op.name;
    g.kind = op.kind;
    g.source = &op;
    g.dtype = scenario_.dtype_of(op);
    if (!op.reads_tensors()) {  // put_signal, collectives: in order, no tensors
      add_op(std::move(g));
      return;
    }
    if (is_tensor_op(op.kind)) {
      add_tensor_op_forward(op, std::move(g));
      return;
    }
    const std::optional<TensorId> bias =
        op.bias_tensor.empty() ? std::nullopt : std::optional(named(op.bias_tensor, op));
    const MatmulSignature& sig = matmul_signature(op.kind);
    const bool with_bias = bias.has_value();
    g.inputs.resize(with_bias ? 3 : 2);
    g.inputs[sig.lhs_index(with_bias)] = {named(op.a_tensor, op), false};
    g.inputs[sig.lhs_index(with_bias) + 1] = {named(op.b_tensor, op), false};
    if (with_bias) g.inputs[sig.bias_index(true)] = {*bias, false};
    GraphTensor out;
    out.name = op.output_tensor;
    out.kind = GraphTensor::Kind::activation;
    out.shape = MatmulEquation::of(op.kind, op.a, op.bias.has_value()).output_shape(op.a, op.b);
    out.dtype = g.dtype;
    out.where = op.where;
    g.output = add_tensor(std::move(out));
    add_op(std::move(g));
  }

  void add_tensor_op_forward(const WorkloadOp& op, GraphOp g) {
    g.attrs = op.attrs;
    if (op.kind == OpKind::cross_entropy) {
      add_cross_entropy(op, std::move(g));
      return;
    }
    std::vector<Shape> shapes;
    for (size_t k = 0; k < tensor_op_signature(op.kind).inputs.size(); ++k) {
      g.inputs.push_back({named(k == 0 ? op.a_tensor : op.b_tensor, op), false});
      shapes.push_back(graph_.tensors[g.inputs.back().tensor].shape);
    }
    GraphTensor out;
    out.name = op.output_tensor;
    out.kind = GraphTensor::Kind::activation;
    out.shape = tensor_op_output_shape(op.kind, shapes, op.attrs);
    out.dtype = g.dtype;
    out.where = op.where;
    g.output = add_tensor(std::move(out));
    add_op(std::move(g));
  }

  // A file's cross_entropy as Megatron's vocab-parallel cross entropy runs it: per row the
  // statistics of the logits ("<op>.stats", a [T, 2] tensor "<loss>.stats"), then the loss
  // from them (core/tensor_op.hpp).
  void add_cross_entropy(const WorkloadOp& op, GraphOp g) {
    const TensorId logits = named(op.a_tensor, op);
    const Shape& shape = graph_.tensors[logits].shape;
    GraphTensor stats;
    stats.name = op.output_tensor + ".stats";
    stats.kind = GraphTensor::Kind::activation;
    stats.shape = {shape.at(0), 2};
    stats.dtype = g.dtype;
    stats.where = op.where;
    GraphOp first = g;
    first.name = op.name + ".stats";
    first.kind = OpKind::cross_entropy_stats;
    first.inputs = {{logits, false}};
    first.output = add_tensor(std::move(stats));
    const TensorId stats_id = first.output;
    add_op(std::move(first));
    GraphTensor loss;
    loss.name = op.output_tensor;
    loss.kind = GraphTensor::Kind::activation;
    loss.shape = {};
    loss.dtype = g.dtype;
    loss.where = op.where;
    g.kind = OpKind::cross_entropy_loss;
    g.inputs = {{stats_id, false}};
    g.output = add_tensor(std::move(loss));
    add_op(std::move(g));
  }

  GraphTensor gradient_tensor(TensorId target, const GraphOp& forward) const {
    GraphTensor grad;
    const GraphTensor& of = graph_.tensors[target];
    grad.kind = GraphTensor::Kind::gradient;
    grad.of = target;
    grad.shape = of.shape;
    grad.dtype = forward.dtype;
    grad.is_parameter_gradient = of.kind == GraphTensor::Kind::parameter;
    grad.where = forward.source->where;
    return grad;
  }

  // The gradient of `target` gains `part` (a tensor already made): it is the gradient when
  // it is the first contribution, else an add sums it into the running one.
  void accumulate(TensorId target, TensorId part, const GraphOp& forward, const std::string& name) {
    auto running = grad_of_.find(target);
    if (running == grad_of_.end()) {
      grad_of_[target] = part;
      return;
    }
    GraphTensor sum = gradient_tensor(target, forward);
    sum.name = "d" + graph_.tensors[target].name + "." + std::to_string(++sums_[target]);
    GraphOp g;
    g.name = name + ".acc";
    g.pass = forward.pass == Pass::forward ? Pass::dgrad : forward.pass;
    g.kind = OpKind::add;
    g.source = forward.source;
    g.dtype = forward.dtype;
    g.inputs = {{running->second, false}, {part, false}};
    g.output = add_tensor(std::move(sum));
    grad_of_[target] = g.output;
    add_op(std::move(g));
  }

  // A tensor op's backward op `kind` reading `operands`, contributing to `target`'s gradient.
  void contribute_tensor_op(TensorId target, OpKind kind, std::vector<GraphInput> operands,
                            const GraphOp& forward, Pass pass, const std::string& name,
                            TensorOpAttrs attrs) {
    const bool first = grad_of_.find(target) == grad_of_.end();
    GraphTensor grad = gradient_tensor(target, forward);
    const std::string base = "d" + graph_.tensors[target].name;
    grad.name = first ? base : base + "." + std::to_string(++sums_[target]) + ".part";
    GraphOp g;
    g.name = name;
    g.pass = pass;
    g.kind = kind;
    g.source = forward.source;
    g.dtype = forward.dtype;
    g.attrs = attrs;
    g.inputs = std::move(operands);
    g.output = add_tensor(std::move(grad));
    const TensorId made = g.output;
    add_op(std::move(g));
    GraphOp as_backward = forward;
    as_backward.pass = pass;
    accumulate(target, made, as_backward, name);
  }

  // The backward of a tensor op, as its row says (core/tensor_op_registry.hpp).
  void add_tensor_op_backward(const GraphOp& forward, const GraphInput& d_out) {
    const auto is_parameter = [&](TensorId t) {
      return graph_.tensors[t].kind == GraphTensor::Kind::parameter;
    };
    const std::string& op = forward.name;
    const TensorOpSignature& row = tensor_op_signature(forward.kind);
    if (row.gradient == TensorOpGradient::passes_through) {
      for (const GraphInput& input : forward.inputs) {
        if (is_parameter(input.tensor))
          throw InvalidArgument(
              "op '" + op + "': the gradient of parameter '" + graph_.tensors[input.tensor].name +
                  "' through an " + to_string(forward.kind) +
                  " is not derived yet (a bias belongs to addmm or linear)",
              forward.source->where.to_string());
        GraphOp as_backward = forward;
        as_backward.pass = Pass::dgrad;
        accumulate(input.tensor, d_out.tensor, as_backward, op + ".dgrad");
      }
      return;
    }
    if (row.gradient != TensorOpGradient::derived)
      throw InvalidArgument("op '" + op + "': no backward for '" + to_string(forward.kind) + "'",
                            forward.source->where.to_string());
    // A forward tensor the row names (not the output's gradient).
    const auto tensor = [&](const TensorOpOperand& o) -> TensorId {
      if (o.from == TensorOpOperand::From::output) return forward.output;
      const TensorId input = forward.inputs.at(o.index).tensor;
      if (o.from == TensorOpOperand::From::producer_input)
        return graph_.ops.at(graph_.tensors[input].producer).inputs.at(0).tensor;
      return input;
    };
    for (const TensorOpBackward& step : row.backward) {
      std::vector<GraphInput> operands;
      for (const TensorOpOperand& o : step.operands) {
        const bool gradient = o.from == TensorOpOperand::From::output_grad;
        operands.push_back(gradient ? d_out : GraphInput{saved(tensor(o))});
      }
      const TensorId target = tensor(step.target);
      TensorOpAttrs attrs;
      if (step.attrs == TensorOpBackwardAttrs::forward) attrs = forward.attrs;
      if (step.attrs == TensorOpBackwardAttrs::target_rows)
        attrs.rows = graph_.tensors[target].shape.at(0);
      const Pass pass = step.weight && is_parameter(target) ? Pass::wgrad : Pass::dgrad;
      contribute_tensor_op(target, step.kind, std::move(operands), forward, pass,
                           op + std::string(step.suffix), attrs);
    }
  }

  // Adds `contribution` (inputs of a product) to the gradient of `target`: a new
  // gradient tensor, or the running sum grown by an accumulating matmul.
  void contribute(TensorId target, OpKind product, std::vector<GraphInput> operands,
                  const GraphOp& forward, Pass pass, const std::string& name) {
    GraphTensor grad = gradient_tensor(target, forward);
    const GraphTensor& of = graph_.tensors[target];  // read before add_tensor grows the list
    GraphOp g;
    g.name = name;
    g.pass = pass;
    g.source = forward.source;
    g.dtype = forward.dtype;
    auto running = grad_of_.find(target);
    if (running == grad_of_.end()) {
      grad.name = "d" + of.name;
      g.kind = product;
      g.inputs = std::move(operands);
    } else {
      grad.name = "d" + of.name + "." + std::to_string(++sums_[target]);
      g.kind = accumulating(product);
      g.inputs = {{running->second, false}, operands[0], operands[1]};  // (bias, a, b)
    }
    g.output = add_tensor(std::move(grad));
    grad_of_[target] = g.output;
    add_op(std::move(g));
  }

  // What the backward reads for forward tensor `t`: `t` itself, or, for a tensor its
  // checkpoint segment does not keep, its recomputed copy (made on first need).
  TensorId saved(TensorId t) {
    if (!recomputed(t)) return t;
    if (auto it = recomputed_.find(t); it != recomputed_.end()) return it->second;
    GraphOp again = graph_.ops[graph_.tensors[t].producer];  // copies: add_* grow the vectors
    GraphTensor copy = graph_.tensors[t];
    again.name += ".recompute";
    again.pass = Pass::recompute;
    for (GraphInput& in : again.inputs) in.tensor = saved(in.tensor);
    copy.name += ".recompute";
    copy.consumers.clear();
    copy.required.reset();
    again.output = add_tensor(std::move(copy));
    recomputed_[t] = again.output;
    add_op(std::move(again));
    return recomputed_[t];
  }

  // A forward activation made inside a checkpoint segment and read only there.
  bool recomputed(TensorId t) const {
    const GraphTensor& x = graph_.tensors[t];
    if (x.kind != GraphTensor::Kind::activation || x.producer < 0 || x.required) return false;
    const GraphOp& producer = graph_.ops[x.producer];
    if (producer.pass != Pass::forward || !producer.source || producer.source->checkpoint.empty())
      return false;
    bool read = false;
    for (int c : x.consumers) {
      if (c >= forward_ops_) continue;
      read = true;
      if (graph_.ops[c].source->checkpoint != producer.source->checkpoint) return false;
    }
    return read;  // a step output (read by nobody) is kept
  }

  void add_backward() {
    const int forward_ops = static_cast<int>(graph_.ops.size());
    forward_ops_ = forward_ops;
    const int forward_tensors = static_cast<int>(graph_.tensors.size());
    for (TensorId t = 0; t < forward_tensors; ++t) {
      const GraphTensor& y = graph_.tensors[t];
      if (y.kind != GraphTensor::Kind::activation || !y.consumers.empty()) continue;
      GraphTensor seed;
      seed.name = "d" + y.name;
      seed.kind = GraphTensor::Kind::seed;
      seed.shape = y.shape;
      seed.dtype = y.dtype;
      seed.of = t;
      seed.where = y.where;
      grad_of_[t] = add_tensor(std::move(seed));
    }
    for (int i = forward_ops - 1; i >= 0; --i) {
      const GraphOp forward = graph_.ops[i];  // a copy: add_op grows the vector
      if (forward.output < 0) continue;
      // The loss statistics have no gradient of their own (the loss's dgrad reads them).
      if (const TensorOpSignature* row = find_tensor_op(forward.kind);
          row && row->gradient == TensorOpGradient::via_consumer)
        continue;
      const GraphInput d_out{grad_of_.at(forward.output), false};
      if (is_tensor_op(forward.kind)) {
        add_tensor_op_backward(forward, d_out);
        continue;
      }
      const MatmulSignature& sig = matmul_signature(forward.kind);
      const bool has_bias = forward.inputs.size() == 3;
      const int lhs = sig.lhs_index(has_bias);
      const TensorId a = forward.inputs[lhs].tensor;
      const TensorId b = forward.inputs[lhs + 1].tensor;
      const bool batched = forward.kind == OpKind::bmm || forward.kind == OpKind::baddbmm;
      const OpKind product = batched ? OpKind::bmm : OpKind::mm;
      const bool linear = forward.kind == OpKind::linear;
      if (linear && graph_.tensors[a].shape.size() != 2)
        throw InvalidArgument(
            "op '" + forward.name + "': the backward of a linear over a " +
                std::to_string(graph_.tensors[a].shape.size()) +
                "-D input is not derived yet; give it as a 2-D [tokens, features] input",
            forward.source->where.to_string());
      const auto pass_of = [&](TensorId t) {
        return graph_.tensors[t].kind == GraphTensor::Kind::parameter ? Pass::wgrad : Pass::dgrad;
      };
      const auto name_of = [&](TensorId t, const char* which) {
        if (pass_of(t) == Pass::wgrad) return forward.name + ".wgrad";
        const bool both = pass_of(a) == Pass::dgrad && pass_of(b) == Pass::dgrad;
        return forward.name + ".dgrad" + (both ? std::string(".") + which : "");
      };
      // mm: dA = dC·Bᵀ, dB = Aᵀ·dC.  linear: dx = dy·W, dW = dyᵀ·x.
      if (linear) {
        contribute(a, product, {d_out, {saved(b), false}}, forward, pass_of(a), name_of(a, "a"));
        contribute(b, product, {{d_out.tensor, true}, {saved(a), false}}, forward, pass_of(b),
                   name_of(b, "b"));
      } else {
        contribute(a, product, {d_out, {saved(b), true}}, forward, pass_of(a), name_of(a, "a"));
        contribute(b, product, {{saved(a), true}, d_out}, forward, pass_of(b), name_of(b, "b"));
      }
    }
  }

  const Scenario& scenario_;
  DataflowGraph graph_;
  std::map<std::string, TensorId> by_name_;
  std::map<TensorId, TensorId> grad_of_;     // tensor -> its gradient so far
  std::map<TensorId, int> sums_;             // tensor -> accumulations so far
  std::map<TensorId, TensorId> recomputed_;  // checkpointed tensor -> its recomputed copy
  int forward_ops_ = 0;                      // ops before the backward's
};

}  // namespace

std::string to_string(Pass pass) {
  switch (pass) {
    case Pass::forward:
      return "forward";
    case Pass::dgrad:
      return "dgrad";
    case Pass::wgrad:
      return "wgrad";
    case Pass::recompute:
      return "recompute";
  }
  return "?";
}

std::string work_group_of(std::string_view name) {
  const auto ends_with = [&](std::string_view tail) {
    return name.size() > tail.size() && name.substr(name.size() - tail.size()) == tail;
  };
  if (ends_with(".adam") || ends_with(".sgd")) return "optimizer";
  if (name == "earlier micro-batches") return "earlier micro-batches";
  if (name.find(".grad_") != std::string_view::npos ||
      name.find(".param_") != std::string_view::npos)
    return "grad reductions";  // and ZeRO's parameter gathers after them
  if (ends_with(".recompute")) return "recompute";
  if (name.find(".dgrad") != std::string_view::npos ||
      name.find(".wgrad") != std::string_view::npos)
    return "backward";
  return "forward";
}

Shape transposed_shape(Shape shape) {
  if (shape.size() >= 2) std::swap(shape[shape.size() - 1], shape[shape.size() - 2]);
  return shape;
}

Placements transposed_placements(const Placements& placements, int rank) {
  Placements out = placements;
  for (Placement& p : out)
    if (p.is_shard() && rank >= 2) {
      if (p.shard_dim() == rank - 1)
        p = Placement::shard(rank - 2);
      else if (p.shard_dim() == rank - 2)
        p = Placement::shard(rank - 1);
    }
  return out;
}

Shape DataflowGraph::shape_read(const GraphInput& input) const {
  const Shape& shape = tensors.at(input.tensor).shape;
  return input.transposed ? transposed_shape(shape) : shape;
}

std::vector<TensorId> DataflowGraph::parameters() const {
  std::vector<TensorId> out;
  for (TensorId t = 0; t < static_cast<TensorId>(tensors.size()); ++t)
    if (tensors[t].kind == GraphTensor::Kind::parameter) out.push_back(t);
  return out;
}

DataflowGraph single_op_graph(const OpProblem& problem, const std::vector<bool>& free) {
  DataflowGraph g;
  GraphOp op;
  op.name = to_string(problem.op);
  op.kind = problem.op;
  op.dtype = problem.dtype();
  const auto names = problem.input_names();
  for (size_t k = 0; k < problem.inputs.size(); ++k) {
    GraphTensor t;
    t.name = names.at(k);
    t.kind = free.at(k) ? GraphTensor::Kind::parameter : GraphTensor::Kind::input;
    t.shape = problem.inputs[k].shape;
    t.dtype = problem.inputs[k].dtype;
    if (!free[k]) t.declared = problem.inputs[k].placements;
    t.consumers = {0};
    op.inputs.push_back({static_cast<TensorId>(k), false});
    g.tensors.push_back(std::move(t));
  }
  GraphTensor out;
  out.name = "out";
  out.shape = problem.output_shape();
  out.dtype = problem.dtype();
  out.required = problem.output_target;
  out.producer = 0;
  op.output = static_cast<TensorId>(g.tensors.size());
  g.tensors.push_back(std::move(out));
  g.ops.push_back(std::move(op));
  return g;
}

DataflowGraph build_dataflow_graph(const Scenario& scenario) {
  return GraphBuilder(scenario).build();
}

}  // namespace symmesh::strategies
