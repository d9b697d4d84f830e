#pragma once
// Reading YAML with messages that name the file, line and column: every error is an
// InvalidArgument whose `where` is "file:line:col" (1-based). Internal to the loader.
#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/quantity.hpp"
#include "core/scenario.hpp"
#include "core/tensor_spec.hpp"

namespace symmesh::scenario {

// Levenshtein distance with adjacent transpositions counting 1 ("worklaod" -> "workload").
int edit_distance(std::string_view a, std::string_view b);
// The closest candidate if it is close enough to be a likely typo, else "".
std::string closest(std::string_view word, const std::vector<std::string>& candidates);
// " — did you mean 'mesh'?" or " (expected one of: a, b, c)".
std::string suggestion(std::string_view word, const std::vector<std::string>& candidates);

// One YAML value with where it sits. A missing value (null) is placed at its key.
class Value {
 public:
  Value(YAML::Node node, YAML::Mark mark, std::string file, std::string path)
      : node_(std::move(node)), mark_(mark), file_(std::move(file)), path_(std::move(path)) {}

  const YAML::Node& node() const { return node_; }
  const std::string& path() const { return path_; }  // "cluster.intra_node.bandwidth"
  const std::string& file() const { return file_; }
  std::string label() const;  // the path, or "the file" for the root
  Value with_path(std::string path) const { return Value(node_, mark_, file_, std::move(path)); }
  SourceLocation location() const;
  std::string where() const { return location().to_string(); }
  [[noreturn]] void fail(const std::string& message) const;

  bool is_map() const { return node_.IsMap(); }
  bool is_list() const { return node_.IsSequence(); }
  bool is_scalar() const { return node_.IsScalar(); }
  // "a list", "a map", "'abc'", "nothing": how a wrong value is shown in messages.
  std::string describe() const;

  std::string as_string() const;  // any scalar
  // true/True/TRUE or false/False/FALSE (YAML 1.2's core schema): "yes" and "on" are
  // refused, since YAML 1.1 readers take them for booleans and others for text.
  bool as_bool() const;
  int as_int(int min, std::string_view expected = "") const;
  double as_quantity(QuantityKind kind) const;
  int64_t as_size_bytes() const;
  std::vector<Value> items() const;  // of a list; fails otherwise
  // Of a map whose keys are names chosen by the user (tensors), in file order: each key
  // (placed at itself, path = this map's) and its value (path "<map>.<key>"). Fails on a
  // non-map, a key that is not a scalar and a duplicate key.
  struct Entry;
  std::vector<Entry> entries() const;
  // A list of `count` integers >= min (count < 0: any non-empty length).
  std::vector<int> as_int_list(int count, int min, std::string_view example) const;
  // [8192, 8192] or "8192x8192".
  Shape as_shape(std::string_view example) const;

 private:
  YAML::Node node_;
  YAML::Mark mark_;
  std::string file_;
  std::string path_;
};

struct Value::Entry {
  std::string name;
  Value key;
  Value value;
};

// A YAML map whose keys must come from a fixed list: unknown keys fail with a
// did-you-mean, duplicate keys fail, a non-map fails with "expected a map".
class MapReader {
 public:
  MapReader(const Value& map, std::vector<std::string> allowed);

  const Value& self() const { return map_; }
  bool has(std::string_view key) const;
  std::optional<Value> get(std::string_view key) const;
  Value require(std::string_view key) const;  // "missing key 'x' in cluster.gpu"
  // The key itself, for errors about its presence ("'tensors' needs 'version: 2'").
  std::optional<Value> key(std::string_view key) const;

 private:
  struct Entry {
    std::string key;
    Value key_value;
    Value value;
  };
  Value map_;
  std::vector<Entry> entries_;
};

// Parses a whole file into a Value (path ""); YAML syntax errors carry file:line:col.
// Throws InvalidArgument naming the path when the file cannot be read.
Value read_yaml_file(const std::string& path);
Value parse_yaml_text(const std::string& text, const std::string& file);

}  // namespace symmesh::scenario
