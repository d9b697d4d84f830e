#include "scenario/workload_reader.hpp"

#include <algorithm>
#include <charconv>
#include <map>

#include "core/errors.hpp"
#include "core/matmul_signature.hpp"
#include "core/text.hpp"

namespace symmesh::scenario {
namespace {

std::vector<std::string> op_names() {
  std::vector<std::string> names;
  for (OpKind kind : all_op_kinds()) names.push_back(to_string(kind));
  return names;
}

std::vector<std::string> keys_of(OpKind kind) {
  std::vector<std::string> keys{"name", "op"};
  if (is_matmul(kind)) {
    keys.insert(keys.end(), {"a", "b", "a_placements", "b_placements", "out_placements", "dtype"});
    if (matmul_signature(kind).bias != BiasUse::none)
      keys.insert(keys.end(), {"bias", "bias_placements"});
  } else if (kind == OpKind::put_signal) {
    keys.insert(keys.end(), {"bytes", "src", "dst"});
  } else {
    keys.insert(keys.end(), {"bytes", "mesh_dim"});
  }
  return keys;
}

OpKind read_kind(const Value& item) {
  for (auto it = item.node().begin(); it != item.node().end(); ++it) {
    if (!it->first.IsScalar() || it->first.Scalar() != "op") continue;
    const YAML::Mark mark = it->second.IsNull() ? it->first.Mark() : it->second.Mark();
    const Value value(it->second, mark, item.file(), item.path() + ".op");
    const std::string text = value.as_string();
    if (const auto kind = op_kind_named(text)) return *kind;
    value.fail("unknown op '" + text + "'" + suggestion(text, op_names()));
  }
  item.fail("missing key 'op' in " + item.path() + " (expected one of: " +
            join(op_names(), ", ", [](const std::string& n) { return n; }) + ")");
}

std::string mesh_text(const DeviceMesh& mesh) {
  return to_string(mesh);  // "2x8 (dp,tp)"
}

class OpReader {
 public:
  OpReader(const Value& item, OpKind kind, const DeviceMesh& mesh, const ClusterSpec& cluster)
      : map_(item, keys_of(kind)), kind_(kind), mesh_(mesh), cluster_(cluster) {}

  void read(WorkloadOp& op) const {
    if (is_matmul(kind_))
      read_matmul(op);
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
    Placements placements;
    std::vector<Value> items;
    try {
      if (value.is_scalar()) {
        placements = parse_placements(value.as_string(), value.path());
        items.assign(placements.size(), value);
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
          items.push_back(item);
        }
      } else {
        value.fail(value.path() +
                   ": expected a list of placements, one per mesh dim, e.g. "
                   "[\"S(0)\", \"R\"], got " +
                   value.describe());
      }
    } catch (const InvalidArgument&) {
      throw;
    } catch (const Error& e) {
      value.fail(e.where() + ": " + e.message());
    }
    if (static_cast<int>(placements.size()) != mesh_.ndim())
      value.fail(value.path() + ": " + std::to_string(placements.size()) + " placement" +
                 (placements.size() == 1 ? "" : "s") + " (" + to_string(placements) + ") for the " +
                 std::to_string(mesh_.ndim()) + "-D mesh " + mesh_text(mesh_) +
                 "; give one per mesh dim");
    for (size_t i = 0; i < placements.size(); ++i)
      if (placements[i].is_shard() && placements[i].shard_dim() >= static_cast<int>(shape.size()))
        items[i].fail(value.path() + ": " + to_string(placements[i]) +
                      " is beyond the rank of the " + std::to_string(shape.size()) + "-D tensor " +
                      tensor + " (" + to_string(shape) + "); S(d) needs d < " +
                      std::to_string(shape.size()));
    return placements;
  }

  void read_matmul(WorkloadOp& op) const {
    op.a = read_shape("a");
    op.b = read_shape("b");
    if (map_.get("bias")) op.bias = read_shape("bias");
    if (op.bias.empty() && map_.get("bias_placements"))
      map_.get("bias_placements")
          ->fail("bias_placements without a bias: give 'bias' too, or drop it");
    if (const auto problem =
            MatmulEquation::check(kind_, op.a, op.b, op.bias.empty() ? nullptr : &op.bias)) {
      if (problem->operand == "bias" && !map_.get("bias"))
        map_.self().fail("missing key 'bias' in " + map_.self().path() + " (" + problem->message +
                         ")");
      fail_shapes(*problem);
    }
    op.a_placements = read_placements("a", op.a);
    op.b_placements = read_placements("b", op.b);
    if (!op.bias.empty()) op.bias_placements = read_placements("bias", op.bias);
    if (map_.get("out_placements"))
      op.out_placements = read_placements(
          "out", MatmulEquation::of(kind_, op.a, !op.bias.empty()).output_shape(op.a, op.b));
    if (auto v = map_.get("dtype")) {
      try {
        op.dtype = parse_dtype(v->as_string(), v->path());
      } catch (const InvalidArgument& e) {
        v->fail(e.message());
      }
    }
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
    op.dst = read_rank("dst");
    if (op.src == op.dst)
      map_.get("dst")->fail("put_signal from rank " + std::to_string(op.src) +
                            " to itself; src and dst must differ");
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
};

}  // namespace

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
  const std::vector<Value> items = list.items();
  if (items.empty()) list.fail("workload: expected a non-empty list of ops");
  std::vector<WorkloadOp> ops;
  std::map<std::string, int> first_line;
  for (size_t i = 0; i < items.size(); ++i) {
    const Value& item = items[i];
    if (!item.is_map())
      item.fail(item.path() + ": expected an op (a map with 'op'), got " + item.describe());
    WorkloadOp op;
    op.kind = read_kind(item);
    op.where = item.location();
    const OpReader reader(item, op.kind, mesh, cluster);
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
    ops.push_back(std::move(op));
  }
  return ops;
}

}  // namespace symmesh::scenario
