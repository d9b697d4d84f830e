#include "scenario/workload_reader.hpp"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <map>
#include <tuple>
#include <utility>

#include "core/errors.hpp"
#include "core/matmul_signature.hpp"
#include "core/tensor_op.hpp"
#include "core/text.hpp"

namespace symmesh::scenario {
namespace {

std::vector<std::string> op_names() {
  std::vector<std::string> names;
  for (OpKind kind : all_op_kinds()) names.push_back(to_string(kind));
  return names;
}

// Version 2 names a matrix op's tensors (a, b, bias, output) instead of giving their
// shapes and placements: those belong to the declarations under `tensors:`.
std::vector<std::string> keys_of(OpKind kind, bool dataflow) {
  std::vector<std::string> keys{"name", "op"};
  if (is_tensor_op(kind)) {
    for (std::string_view input : tensor_op_signature(kind).inputs) keys.emplace_back(input);
    keys.insert(keys.end(), {"output", "dtype", "checkpoint", "stage", "layer"});
    if (kind == OpKind::attention)
      keys.insert(keys.end(), {"heads", "kv_heads", "head_dim", "seq", "causal"});
    if (kind == OpKind::embedding) keys.push_back("tokens");
  } else if (is_matmul(kind)) {
    const bool bias = matmul_signature(kind).bias != BiasUse::none;
    if (dataflow) {
      keys.insert(keys.end(), {"a", "b"});
      if (bias) keys.push_back("bias");
      keys.insert(keys.end(), {"output", "dtype", "causal", "checkpoint", "stage", "layer"});
    } else {
      keys.insert(keys.end(),
                  {"a", "b", "a_placements", "b_placements", "out_placements", "dtype", "causal"});
      if (bias) keys.insert(keys.end(), {"bias", "bias_placements"});
    }
  } else if (kind == OpKind::barrier) {
    // name and op only
  } else if (kind == OpKind::put_signal) {
    keys.insert(keys.end(), {"bytes", "src", "dst"});
  } else {
    keys.insert(keys.end(), {"bytes", "mesh_dim"});
  }
  return keys;
}

// A version-1 placement key on a version-2 matrix op, said before the op's MapReader would
// call it unknown and suggest some other key: the user is porting a file.
void reject_version1_keys(const Value& item) {
  static const std::vector<std::string> version1_keys{"a_placements", "b_placements",
                                                      "bias_placements", "out_placements"};
  for (auto it = item.node().begin(); it != item.node().end(); ++it) {
    if (!it->first.IsScalar()) continue;
    const std::string key = it->first.Scalar();
    if (std::find(version1_keys.begin(), version1_keys.end(), key) == version1_keys.end()) continue;
    Value(it->first, it->first.Mark(), item.file(), item.path())
        .fail("'" + key +
              "' is a version-1 key: in version 2 placements belong to the tensors (declare "
              "them under 'tensors:')");
  }
}

OpKind read_kind(const Value& item) {
  for (auto it = item.node().begin(); it != item.node().end(); ++it) {
    if (!it->first.IsScalar() || it->first.Scalar() != "op") continue;
    const YAML::Mark mark = it->second.IsNull() ? it->first.Mark() : it->second.Mark();
    const Value value(it->second, mark, item.file(), item.path() + ".op");
    const std::string text = value.as_string();
    if (const auto kind = op_kind_named(text)) return *kind;
    if (text == to_string(OpKind::optimizer_step))
      value.fail("'" + text +
                 "' ops are not written: a version-2 `training:` step generates one per "
                 "parameter (docs/scenario-format.md, \"The optimizer step\")");
    if (const auto generated = generated_op_kind_named(text))
      value.fail("'" + text + "' ops are not written: symmesh derives them from each '" +
                 to_string(tensor_op_signature(*generated).forward) + "' op (its " +
                 std::string(tensor_op_signature(*generated).what) +
                 "; docs/scenario-format.md, \"Tensor ops\")");
    value.fail("unknown op '" + text + "'" + suggestion(text, op_names()));
  }
  item.fail("missing key 'op' in " + item.path() + " (expected one of: " +
            join(op_names(), ", ", [](const std::string& n) { return n; }) + ")");
}

std::string mesh_text(const DeviceMesh& mesh) {
  return to_string(mesh);  // "2x8 (dp,tp)"
}

// A placement list as written, a YAML list of strings or one string, with one placement
// per mesh dim. Shared by version 1's *_placements keys and version 2's declarations.
Placements read_placements(const Value& value, const DeviceMesh& mesh) {
  Placements placements;
  if (value.is_scalar()) {
    try {
      placements = parse_placements(value.as_string(), value.path());
    } catch (const Error& e) {
      // parse_placements only knows the path; the message must point into the file.
      value.fail(e.where() + ": " + e.message());
    }
  } else if (value.is_list()) {
    for (const Value& item : value.items()) {
      if (!item.is_scalar())
        item.fail(item.path() + ": expected a placement such as \"S(0)\" or \"R\", got " +
                  item.describe());
      try {
        placements.push_back(parse_placement(item.as_string(), item.path()));
      } catch (const Error& e) {
        item.fail(e.where() + ": " + e.message());
      }
    }
  } else {
    value.fail(value.path() +
               ": expected a list of placements, one per mesh dim, e.g. "
               "[\"S(0)\", \"R\"], got " +
               value.describe());
  }
  if (static_cast<int>(placements.size()) != mesh.ndim())
    value.fail(value.path() + ": " + std::to_string(placements.size()) + " placement" +
               (placements.size() == 1 ? "" : "s") + " (" + to_string(placements) + ") for the " +
               std::to_string(mesh.ndim()) + "-D mesh " + mesh_text(mesh) +
               "; give one per mesh dim");
  return placements;
}

// S(d) needs d < the rank of the tensor: checked apart from reading, since an output
// declaration's rank is known only once its producer is. `tensor` names it in the
// message, e.g. "b (32x16)". Fails at the offending list item.
void check_shard_dims(const Value& value, const Placements& placements, const Shape& shape,
                      const std::string& tensor) {
  const int rank = static_cast<int>(shape.size());
  for (size_t i = 0; i < placements.size(); ++i) {
    if (!placements[i].is_shard() || placements[i].shard_dim() < rank) continue;
    const Value at = value.is_list() ? value.items()[i] : value;
    at.fail(value.path() + ": " + to_string(placements[i]) + " is beyond the rank of the " +
            std::to_string(rank) + "-D tensor " + tensor +
            (rank == 0 ? "; a 0-d tensor has no dim to shard: use R or P(sum)"
                       : "; S(d) needs d < " + std::to_string(rank)));
  }
}

// "S(0)", then "R" for every further mesh dim: a placement list this mesh accepts.
std::string placements_example(const DeviceMesh& mesh) {
  std::string out = "[\"S(0)\"";
  for (int d = 1; d < mesh.ndim(); ++d) out += ", \"R\"";
  return out + "]";
}

std::string role_text(TensorDecl::Role role) {
  switch (role) {
    case TensorDecl::Role::input:
      return "an input";
    case TensorDecl::Role::parameter:
      return "a parameter";
    case TensorDecl::Role::output:
      return "an output";
  }
  return "";
}

// A tensor named by a version-2 op (a, b, bias, output).
std::string tensor_name(const Value& value) {
  if (value.is_list() || value.is_map())
    value.fail(value.path() + ": expected a tensor name, got " + value.describe() +
               " (in version 2 shapes and placements belong to the tensors: declare them under "
               "'tensors:')");
  if (!value.is_scalar()) value.fail(value.path() + ": expected a tensor name, got nothing");
  const std::string name = value.as_string();
  if (name.empty()) value.fail(value.path() + ": a tensor name must not be empty");
  return name;
}

// A declaration of `tensors:` with the YAML nodes later checks point at.
struct DeclaredTensor {
  TensorDecl decl;
  Value key;                        // the tensor's name: messages about the whole declaration
  std::optional<Value> placements;  // checked against an output's rank once it is produced
  bool read = false;                // by some op
};

std::vector<DeclaredTensor> read_declarations(const Value& map, const DeviceMesh& mesh) {
  if (!map.is_map())
    map.fail(map.path() +
             ": expected a map of tensor declarations, name: {shape, placements, parameter}, "
             "got " +
             map.describe());
  const std::vector<Value::Entry> entries = map.entries();
  if (entries.empty())
    map.fail(map.path() + ": expected at least one tensor declaration, e.g. x: {shape: [8192, " +
             "8192], placements: " + placements_example(mesh) + "}");
  std::vector<DeclaredTensor> out;
  for (const Value::Entry& entry : entries) {
    const std::string& name = entry.name;
    if (name.empty()) entry.key.fail(map.path() + ": a tensor name must not be empty");
    const MapReader fields(entry.value, {"shape", "placements", "parameter"});
    DeclaredTensor t{TensorDecl{}, entry.key, fields.get("placements")};
    t.decl.name = name;
    t.decl.where = entry.key.location();
    // Whether a shape is given, not whether it is empty: [] is a 0-d tensor.
    const auto shape = fields.get("shape");
    if (shape) t.decl.shape = shape->as_shape("[8192, 8192]");
    const auto parameter = fields.get("parameter");
    const std::string tensor = "tensor '" + name + "'";
    if (parameter && parameter->as_bool()) {
      t.decl.role = TensorDecl::Role::parameter;
      if (!shape)
        entry.key.fail(tensor + " is a parameter: give its shape, e.g. shape: [8192, 8192]");
    } else if (shape) {
      t.decl.role = TensorDecl::Role::input;
      if (!t.placements)
        entry.key.fail(tensor + " is an input: give its placements, one per mesh dim, e.g. " +
                       "placements: " + placements_example(mesh));
    } else {
      t.decl.role = TensorDecl::Role::output;
      if (!t.placements)
        entry.key.fail(tensor +
                       " has no shape, so it is an output requirement: give its placements, "
                       "one per mesh dim (an input or a parameter needs a shape)");
    }
    if (t.placements) {
      t.decl.placements = read_placements(*t.placements, mesh);
      if (shape)
        check_shard_dims(*t.placements, *t.decl.placements, t.decl.shape,
                         "'" + name + "' (" + to_string(t.decl.shape) + ")");
    }
    out.push_back(std::move(t));
  }
  return out;
}

// Which tensors a version-2 op may read, walking the workload in order: the declared
// inputs and parameters, and the outputs of the ops before it.
class TensorTable {
 public:
  explicit TensorTable(std::vector<DeclaredTensor> declared) : declared_(std::move(declared)) {}

  // The name and shape of the tensor an op reads, named at `value`.
  std::pair<std::string, Shape> read(const Value& value) {
    const std::string name = tensor_name(value);
    DeclaredTensor* declared = find(name);
    if (declared && declared->decl.role != TensorDecl::Role::output) {
      declared->read = true;
      return {name, declared->decl.shape};
    }
    if (auto it = produced_.find(name); it != produced_.end()) return {name, it->second.shape};
    if (declared)
      value.fail("tensor '" + name + "' is declared as an output (no shape, line " +
                 std::to_string(declared->decl.where.line) +
                 ") but no earlier op produces it; ops run in order, so its producer must come "
                 "first");
    const std::vector<std::string> known = readable_names();
    value.fail("unknown tensor '" + name +
               "': not declared under 'tensors:' and not the output of an earlier op" +
               (known.empty() ? "" : suggestion(name, known)));
  }

  // The name of the tensor an op produces, named at `value`: new, or an output declaration.
  std::string check_output(const Value& value) const {
    const std::string name = tensor_name(value);
    if (const DeclaredTensor* declared = find(name);
        declared && declared->decl.role != TensorDecl::Role::output)
      value.fail("'" + name + "' is declared as " + role_text(declared->decl.role) + " (line " +
                 std::to_string(declared->decl.where.line) +
                 "); an op's output needs a new name or an output declaration");
    if (auto it = produced_.find(name); it != produced_.end())
      value.fail("tensor '" + name + "' is already the output of op '" + it->second.op +
                 "' (line " + std::to_string(it->second.line) +
                 "); each tensor is produced by one op: give this output a new name");
    return name;
  }

  void produce(const std::string& name, Shape shape, const std::string& op, int line) {
    produced_.emplace(name, Produced{std::move(shape), op, line});
    produced_order_.push_back(name);
  }

  // Once every op is read: each output declaration is produced (and its placements fit
  // the produced rank), each input and parameter read. In file order, so the first
  // problem in the file is the one reported.
  void finish() const {
    for (const DeclaredTensor& t : declared_) {
      const std::string tensor = "tensor '" + t.decl.name + "'";
      if (t.decl.role != TensorDecl::Role::output) {
        if (!t.read) t.key.fail(tensor + " is declared but no op reads it");
        continue;
      }
      const auto it = produced_.find(t.decl.name);
      if (it == produced_.end()) {
        const std::string best = closest(t.decl.name, produced_order_);
        t.key.fail(tensor + " has no shape and no op produces it" +
                   (best.empty() ? std::string()
                                 : " \u2014 did you mean '" + best + "' (the output of op '" +
                                       produced_.at(best).op + "')?"));
      }
      check_shard_dims(*t.placements, *t.decl.placements, it->second.shape,
                       "'" + t.decl.name + "' (" + to_string(it->second.shape) +
                           ", the output of op '" + it->second.op + "')");
    }
  }

  std::vector<TensorDecl> declarations() const {
    std::vector<TensorDecl> out;
    for (const DeclaredTensor& t : declared_) out.push_back(t.decl);
    return out;
  }

 private:
  struct Produced {
    Shape shape;
    std::string op;  // its producer's name and line
    int line = 0;
  };

  DeclaredTensor* find(const std::string& name) {
    for (DeclaredTensor& t : declared_)
      if (t.decl.name == name) return &t;
    return nullptr;
  }
  const DeclaredTensor* find(const std::string& name) const {
    return const_cast<TensorTable*>(this)->find(name);
  }

  // For did-you-mean: declared inputs and parameters in file order, then outputs so far.
  std::vector<std::string> readable_names() const {
    std::vector<std::string> names;
    for (const DeclaredTensor& t : declared_)
      if (t.decl.role != TensorDecl::Role::output) names.push_back(t.decl.name);
    names.insert(names.end(), produced_order_.begin(), produced_order_.end());
    return names;
  }

  std::vector<DeclaredTensor> declared_;
  std::map<std::string, Produced> produced_;
  std::vector<std::string> produced_order_;
};

class OpReader {
 public:
  // `tensors` is null in version 1, where matrix ops give their shapes and placements.
  // `pipeline`: the pipeline stages of a version-2 mesh (1 without a pp dim).
  OpReader(const Value& item, OpKind kind, const DeviceMesh& mesh, const ClusterSpec& cluster,
           TensorTable* tensors, PipelineShape pipeline)
      : map_(item, keys_of(kind, tensors != nullptr)),
        kind_(kind),
        mesh_(mesh),
        cluster_(cluster),
        tensors_(tensors),
        pipeline_(pipeline) {}

  void read(WorkloadOp& op) const {
    if (is_tensor_op(kind_) && !tensors_)
      map_.self().fail("'" + op_text() +
                       "' is a version-2 op: it reads and produces named tensors (give the file "
                       "'version: 2' and declare them under 'tensors:')");
    if (is_tensor_op(kind_))
      read_tensor_op(op);
    else if (is_matmul(kind_) && tensors_)
      read_matmul_tensors(op);
    else if (is_matmul(kind_))
      read_matmul(op);
    else if (kind_ == OpKind::barrier)
      return;  // nothing to read
    else if (kind_ == OpKind::put_signal)
      read_put_signal(op);
    else
      read_collective(op);
  }

  const MapReader& map() const { return map_; }

 private:
  std::string op_text() const { return to_string(kind_); }

  Shape read_shape(const std::string& key) const {
    return map_.require(key).as_shape(key == "bias" ? "[28672]" : "[8192, 8192]");
  }

  // What MatmulEquation::check found, reported at the YAML node of its operand; a wrong
  // rank also says what a list of the right length looks like.
  [[noreturn]] void fail_shapes(const ShapeProblem& problem) const {
    const Value at = *map_.get(problem.operand);
    if (problem.ranks.empty()) at.fail(problem.message);
    const std::string counts = join(problem.ranks, " or ", [](int r) { return std::to_string(r); });
    const std::string example = problem.ranks.front() == 3 ? "[8, 2048, 4096]" : "[8192, 8192]";
    at.fail(at.path() + ": " + problem.message + " (expected a list of " + counts +
            " integers, e.g. " + example + ")");
  }

  Placements read_placements(const std::string& tensor, const Shape& shape) const {
    const Value value = map_.require(tensor + "_placements");
    Placements placements = scenario::read_placements(value, mesh_);
    check_shard_dims(value, placements, shape, tensor + " (" + to_string(shape) + ")");
    return placements;
  }

  void read_dtype(WorkloadOp& op) const {
    if (auto v = map_.get("causal")) op.causal = v->as_bool();
    if (auto v = map_.get("dtype")) {
      try {
        op.dtype = parse_dtype(v->as_string(), v->path());
      } catch (const InvalidArgument& e) {
        v->fail(e.message());
      }
    }
  }

  // `checkpoint: NAME` (version 2): the activation-checkpointing segment the op is in.
  void read_checkpoint(WorkloadOp& op) const {
    const auto v = map_.get("checkpoint");
    if (!v) return;
    op.checkpoint = v->as_string();
    if (op.checkpoint.empty()) v->fail(v->path() + ": a checkpoint segment needs a name");
  }

  // `layer: N` (version 2): the layer of alike layers the op belongs to.
  void read_layer(WorkloadOp& op) const {
    if (const auto v = map_.get("layer")) op.layer = v->as_int(0, "a layer (an integer >= 0)");
  }

  // `stage: N` (version 2): the pipeline stage that runs the op.
  void read_stage(WorkloadOp& op) const {
    const auto v = map_.get("stage");
    if (!v) return;
    if (pipeline_.stages <= 1)
      v->fail(v->path() +
              ": a stage needs pipeline stages: a first mesh dim named pp, e.g. mesh: "
              "{shape: [2, 4], names: [pp, tp]}");
    op.stage = v->as_int(0, "a stage (an integer >= 0)");
    const int chunks = pipeline_.chunks();
    if (op.stage >= chunks)
      v->fail(v->path() + ": stage " + std::to_string(op.stage) + " is outside the " +
              (pipeline_.virtual_stages > 1
                   ? std::to_string(chunks) + " virtual stages (pp " +
                         std::to_string(pipeline_.stages) + " x training.virtual_stages " +
                         std::to_string(pipeline_.virtual_stages) + ")"
                   : "mesh's " + std::to_string(chunks) + " pipeline stages") +
              " (0.." + std::to_string(chunks - 1) + ")");
  }

  void read_matmul(WorkloadOp& op) const {
    op.a = read_shape("a");
    op.b = read_shape("b");
    if (map_.get("bias")) op.bias = read_shape("bias");
    if (!op.bias && map_.get("bias_placements"))
      map_.get("bias_placements")
          ->fail("bias_placements without a bias: give 'bias' too, or drop it");
    if (const auto problem =
            MatmulEquation::check(kind_, op.a, op.b, op.bias ? &*op.bias : nullptr)) {
      if (problem->operand == "bias" && !map_.get("bias"))
        map_.self().fail("missing key 'bias' in " + map_.self().path() + " (" + problem->message +
                         ")");
      fail_shapes(*problem);
    }
    op.a_placements = read_placements("a", op.a);
    op.b_placements = read_placements("b", op.b);
    if (op.bias) op.bias_placements = read_placements("bias", *op.bias);
    if (map_.get("out_placements"))
      op.out_placements = read_placements(
          "out", MatmulEquation::of(kind_, op.a, op.bias.has_value()).output_shape(op.a, op.b));
    read_dtype(op);
  }

  // Version 2: the operands are names, resolved to shapes through the tensor table; the
  // placements stay empty (the declarations and the producers carry them).
  void read_matmul_tensors(WorkloadOp& op) const {
    const Value a = map_.require("a");
    const Value b = map_.require("b");
    const auto bias = map_.get("bias");
    if (!bias && matmul_signature(kind_).bias == BiasUse::required)
      map_.self().fail("missing key 'bias' in " + map_.self().path() + " (" + op_text() +
                       " needs a bias)");
    const Value output = map_.require("output");
    std::tie(op.a_tensor, op.a) = tensors_->read(a);
    std::tie(op.b_tensor, op.b) = tensors_->read(b);
    if (bias) std::tie(op.bias_tensor, op.bias) = tensors_->read(*bias);
    if (const auto problem =
            MatmulEquation::check(kind_, op.a, op.b, op.bias ? &*op.bias : nullptr)) {
      const bool is_a = problem->operand == "a", is_b = problem->operand == "b";
      const std::string& name = is_a ? op.a_tensor : is_b ? op.b_tensor : op.bias_tensor;
      const Shape& shape = is_a ? op.a : is_b ? op.b : *op.bias;
      const Value at = map_.get(problem->operand).value_or(map_.self());
      at.fail(at.path() + ": tensor '" + name + "' is " + to_string(shape) + "; " +
              problem->message);
    }
    op.output_tensor = tensors_->check_output(output);
    read_dtype(op);
    read_checkpoint(op);
    read_stage(op);
    read_layer(op);
  }

  // A tensor op (core/tensor_op.hpp): its inputs by name (a, and b when it takes two), its
  // output, and the keys attention and embedding need.
  void read_tensor_op(WorkloadOp& op) const {
    const TensorOpSignature& sig = tensor_op_signature(kind_);
    std::vector<Shape> shapes;
    for (size_t k = 0; k < sig.inputs.size(); ++k) {
      const Value at = map_.require(std::string(sig.inputs[k]));
      std::string& name = k == 0 ? op.a_tensor : op.b_tensor;
      Shape& shape = k == 0 ? op.a : op.b;
      std::tie(name, shape) = tensors_->read(at);
      shapes.push_back(shape);
    }
    const Value output = map_.require("output");
    const auto count = [&](const std::string& key, int64_t fallback) {
      const auto v = map_.get(key);
      return v ? int64_t{v->as_int(1, "an integer >= 1")} : fallback;
    };
    if (kind_ == OpKind::attention) {
      op.attrs.heads = count("heads", 0);
      if (op.attrs.heads == 0) map_.require("heads");
      op.attrs.kv_heads = count("kv_heads", op.attrs.heads);
      op.attrs.seq = count("seq", 0);
      if (op.attrs.seq == 0) map_.require("seq");
      if (const auto v = map_.get("causal")) op.attrs.causal = v->as_bool();
      const Value heads_at = *map_.get("heads");
      if (op.attrs.heads % op.attrs.kv_heads != 0)
        map_.get("kv_heads")
            ->fail("kv_heads " + std::to_string(op.attrs.kv_heads) + " does not divide heads " +
                   std::to_string(op.attrs.heads));
      if (shapes[0].size() == 2) {
        op.attrs.head_dim = count("head_dim", attention_head_dim(shapes[0][1], op.attrs));
        if (op.attrs.head_dim == 0)
          heads_at.fail("tensor '" + op.a_tensor + "' is " + to_string(shapes[0]) + ": its " +
                        std::to_string(shapes[0][1]) + " columns are not (heads + 2 kv_heads) = " +
                        std::to_string(op.attrs.heads + 2 * op.attrs.kv_heads) +
                        " heads of equal width; give head_dim");
      }
    }
    if (kind_ == OpKind::embedding) {
      op.attrs.rows = count("tokens", 0);
      if (op.attrs.rows == 0) map_.require("tokens");
    }
    if (const auto problem = check_tensor_op(kind_, shapes, op.attrs)) {
      const bool is_input = problem->operand == "a" || problem->operand == "b";
      const Value at = map_.get(problem->operand).value_or(map_.self());
      at.fail(at.path() + ": " +
              (is_input ? "tensor '" + (problem->operand == "a" ? op.a_tensor : op.b_tensor) +
                              "' is " + to_string(problem->operand == "a" ? op.a : op.b) + "; "
                        : std::string()) +
              problem->message);
    }
    op.output_tensor = tensors_->check_output(output);
    read_dtype(op);
    read_checkpoint(op);
    read_stage(op);
    read_layer(op);
  }

  int read_rank(const std::string& key) const {
    const Value value = map_.require(key);
    const int rank = value.as_int(0, "a rank (an integer >= 0)");
    if (rank >= cluster_.num_gpus())
      value.fail(value.path() + ": rank " + std::to_string(rank) + " is outside the cluster's " +
                 std::to_string(cluster_.num_gpus()) + " GPUs (ranks 0.." +
                 std::to_string(cluster_.num_gpus() - 1) + ")");
    return rank;
  }

  void read_put_signal(WorkloadOp& op) const {
    op.bytes = map_.require("bytes").as_size_bytes();
    op.src = read_rank("src");
    op.dst = read_rank("dst");  // may equal src: a self-put, as NCCL allows
  }

  void read_collective(WorkloadOp& op) const {
    const Value bytes = map_.require("bytes");
    op.bytes = bytes.as_size_bytes();
    if (op.bytes <= 0) bytes.fail(bytes.path() + ": a collective needs bytes > 0");
    if (auto v = map_.get("mesh_dim"))
      op.mesh_dim = read_mesh_dim(*v, mesh_);
    else if (mesh_.ndim() == 1)
      op.mesh_dim = 0;
    else
      map_.self().fail("missing key 'mesh_dim' in " + map_.self().path() + " (the mesh " +
                       mesh_text(mesh_) + " has " + std::to_string(mesh_.ndim()) + " dims)");
  }

  MapReader map_;
  OpKind kind_;
  const DeviceMesh& mesh_;
  const ClusterSpec& cluster_;
  TensorTable* tensors_;
  PipelineShape pipeline_;
};

// The shape of what a version-2 op produces.
Shape produced_shape(const WorkloadOp& op) {
  if (is_tensor_op(op.kind)) {
    std::vector<Shape> inputs{op.a};
    if (tensor_op_signature(op.kind).inputs.size() > 1) inputs.push_back(op.b);
    return tensor_op_output_shape(op.kind, inputs, op.attrs);
  }
  return MatmulEquation::of(op.kind, op.a, op.bias.has_value()).output_shape(op.a, op.b);
}

// The ops of either version: `tensors` is null in version 1.
// The most ops a workload may hold: 100,000 simulate in about 4 s and 0.6 GB on 8 GPUs, so
// this bounds a file's work to tens of seconds. SYMMESH_MAX_OPS raises (or lowers) it.
int64_t max_workload_ops() {
  constexpr int64_t kDefault = 200'000;
  const char* text = std::getenv("SYMMESH_MAX_OPS");
  if (!text || !*text) return kDefault;
  char* end = nullptr;
  const long long value = std::strtoll(text, &end, 10);
  if (*end != '\0' || value < 1)
    throw InvalidArgument("expected a whole number >= 1, got '" + std::string(text) + "'",
                          "SYMMESH_MAX_OPS");
  return value;
}

std::vector<WorkloadOp> read_ops(const Value& list, const DeviceMesh& mesh,
                                 const ClusterSpec& cluster, TensorTable* tensors,
                                 PipelineShape pipeline) {
  const std::vector<Value> items = list.items();
  if (items.empty()) list.fail("workload: expected a non-empty list of ops");
  if (const int64_t cap = max_workload_ops(); static_cast<int64_t>(items.size()) > cap)
    list.fail("workload: " + std::to_string(items.size()) + " ops, more than the " +
              std::to_string(cap) + " symmesh reads (set SYMMESH_MAX_OPS to raise the cap)");
  std::vector<WorkloadOp> ops;
  std::map<std::string, int> first_line;
  for (size_t i = 0; i < items.size(); ++i) {
    const Value& item = items[i];
    if (!item.is_map())
      item.fail(item.path() + ": expected an op (a map with 'op'), got " + item.describe());
    WorkloadOp op;
    op.kind = read_kind(item);
    op.where = item.location();
    if (tensors && is_matmul(op.kind)) reject_version1_keys(item);
    if (pipeline.stages > 1 && !is_matmul(op.kind) && !is_tensor_op(op.kind))
      item.fail(item.path() + ": " + to_string(op.kind) +
                " in a pipelined step: with pipeline stages (mesh dim pp) the workload holds "
                "matrix and tensor ops, each on its stage; what moves between stages is derived");
    const OpReader reader(item, op.kind, mesh, cluster, tensors, pipeline);
    reader.read(op);
    const auto name = reader.map().get("name");
    op.name = name ? name->as_string() : to_string(op.kind) + std::to_string(i);
    const Value& named_at = name ? *name : item;
    if (op.name.empty()) named_at.fail(named_at.path() + ": an op name must not be empty");
    auto [it, inserted] = first_line.emplace(op.name, named_at.location().line);
    if (!inserted)
      named_at.fail(
          "duplicate op name '" + op.name + "' (first at line " + std::to_string(it->second) + ")" +
          (name ? "" : "; this op has no name and is called '" + op.name + "' by default"));
    // Registered once the op is named, so a later op that produces the same tensor can
    // name this one; and an op cannot read what it produces itself.
    if (op.reads_tensors())
      tensors->produce(op.output_tensor, produced_shape(op), op.name, op.where.line);
    ops.push_back(std::move(op));
  }
  return ops;
}

}  // namespace

int64_t workload_op_cap() {
  return max_workload_ops();
}

int read_mesh_dim(const Value& value, const DeviceMesh& mesh) {
  const std::string text = value.as_string();
  int index = -1;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), index);
  if (ec == std::errc() && ptr == text.data() + text.size()) {
    if (index < 0 || index >= mesh.ndim())
      value.fail(value.path() + ": mesh dim " + text + " is out of range for the " +
                 std::to_string(mesh.ndim()) + "-D mesh " + mesh_text(mesh) + " (0.." +
                 std::to_string(mesh.ndim() - 1) + ")");
    return index;
  }
  const auto& names = mesh.dim_names();
  for (size_t d = 0; d < names.size(); ++d)
    if (names[d] == text) return static_cast<int>(d);
  if (names.empty())
    value.fail("unknown mesh dim '" + text + "': the mesh " + mesh_text(mesh) +
               " has no dim names; use an index 0.." + std::to_string(mesh.ndim() - 1));
  value.fail("unknown mesh dim '" + text + "'" + suggestion(text, names) + " (the mesh " +
             mesh_text(mesh) + " has dims " +
             join(names, ", ", [](const std::string& s) { return s; }) + ")");
}

std::vector<WorkloadOp> read_workload(const Value& list, const DeviceMesh& mesh,
                                      const ClusterSpec& cluster) {
  return read_ops(list, mesh, cluster, nullptr, {});
}

Dataflow read_dataflow(const std::optional<Value>& tensors, const Value& list,
                       const DeviceMesh& mesh, const ClusterSpec& cluster, PipelineShape pipeline) {
  TensorTable table(tensors ? read_declarations(*tensors, mesh) : std::vector<DeclaredTensor>{});
  Dataflow out;
  out.workload = read_ops(list, mesh, cluster, &table, pipeline);
  table.finish();
  out.tensors = table.declarations();
  return out;
}

}  // namespace symmesh::scenario
