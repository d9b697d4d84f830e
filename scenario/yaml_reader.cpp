#include "scenario/yaml_reader.hpp"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <unordered_map>

#include "core/errors.hpp"
#include "core/input_file.hpp"
#include "core/text.hpp"

namespace symmesh::scenario {
namespace {

std::string join_quoted(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& word : words) {
    if (!out.empty()) out.append(", ");
    out.append(word);
  }
  return out;
}

// Calls visit(line, row) for each line of `text` (1-based, without its '\n') until it
// returns true; returns that line, or 0.
template <typename Visit>
int find_line(const std::string& text, Visit&& visit) {
  int line = 0;
  for (size_t begin = 0; begin < text.size();) {
    size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    const std::string_view row(text.data() + begin, end - begin);
    ++line;
    begin = end + 1;
    if (visit(line, row)) return line;
  }
  return 0;
}

// The 1-based line of a "---" that starts a second document (content came before it), or
// 0. Comments, blank lines and directives before the first document do not count.
int second_document_line(const std::string& text) {
  bool content = false;
  return find_line(text, [&](int, std::string_view row) {
    const bool marker =
        row.substr(0, 3) == "---" && (row.size() == 3 || row[3] == ' ' || row[3] == '\r');
    if (marker) {
      if (content) return true;
      content = row.find_first_not_of(" \r", 3) != std::string_view::npos &&
                row[row.find_first_not_of(" \r", 3)] != '#';
      return false;
    }
    const size_t first = row.find_first_not_of(" \t\r");
    if (first != std::string_view::npos && row[first] != '#' && row[first] != '%') content = true;
    return false;
  });
}

// How deep lists and maps may nest. A scenario needs fewer than 10 levels; yaml-cpp's own
// guard stops near 2,000 with "bad file" and a column past the line's end.
constexpr int kMaxYamlDepth = 64;

// Where, in the text, nesting first goes past kMaxYamlDepth: {line, column}, 1-based, or
// {0, 0}. Counted on the text before it is parsed, so that no parser recursion runs on it:
// block levels by indentation (each more-indented line and each "- " entry opens one),
// flow levels by [ and { outside quotes and comments. Block scalars (| and >) are skipped.
std::pair<int, int> too_deep_at(const std::string& text) {
  std::vector<size_t> indents;  // the block levels open at this point
  int flow = 0;
  char quote = 0;                            // inside '…' or "…" (which may span lines)
  size_t scalar_indent = std::string::npos;  // inside a block scalar more indented than this
  int column = 0;
  const int line = find_line(text, [&](int, std::string_view row) {
    const size_t first = row.find_first_not_of(" ");
    if (first == std::string_view::npos || (quote == 0 && flow == 0 && row[first] == '#'))
      return false;
    if (scalar_indent != std::string::npos) {
      if (first > scalar_indent) return false;
      scalar_indent = std::string::npos;
    }
    size_t at = first;
    if (quote == 0 && flow == 0) {
      while (!indents.empty() && indents.back() >= first) indents.pop_back();
      indents.push_back(first);
      for (; at + 1 <= row.size() && row[at] == '-' && (at + 1 == row.size() || row[at + 1] == ' ');
           at = row.find_first_not_of(' ', at + 1)) {
        indents.push_back(at + 2);
        if (at + 1 >= row.size() || row.find_first_not_of(' ', at + 1) == std::string_view::npos)
          break;
      }
      if (static_cast<int>(indents.size()) > kMaxYamlDepth) {
        column = static_cast<int>(first) + 1;
        return true;
      }
    }
    for (size_t i = at; i < row.size() && i != std::string_view::npos; ++i) {
      const char c = row[i];
      if (quote == '"') {
        if (c == '\\')
          ++i;
        else if (c == '"')
          quote = 0;
      } else if (quote == '\'') {
        if (c == '\'' && i + 1 < row.size() && row[i + 1] == '\'')
          ++i;
        else if (c == '\'')
          quote = 0;
      } else if (c == '"' || c == '\'') {
        quote = c;
      } else if (c == '#' && (i == 0 || row[i - 1] == ' ')) {
        break;
      } else if (c == '[' || c == '{') {
        if (static_cast<int>(indents.size()) + ++flow > kMaxYamlDepth) {
          column = static_cast<int>(i) + 1;
          return true;
        }
      } else if ((c == ']' || c == '}') && flow > 0) {
        --flow;
      } else if ((c == '|' || c == '>') && flow == 0) {
        // A block scalar header ("key: |", "- >-"): the more-indented lines after it are text.
        const size_t rest = row.find_first_not_of("+-0123456789 ", i + 1);
        if (rest == std::string_view::npos || row[rest] == '#') {
          scalar_indent = first;
          break;
        }
      }
    }
    return false;
  });
  return {line, column};
}

// The printable start of `text`, for naming it in an error.
std::string printable_prefix(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7F) break;
    out += c;
  }
  return out;
}

// Where to report a node that `holder` (its key, or its list) introduces: the node's own
// place, unless that lies before the holder — an alias (*name), whose node yaml-cpp marks
// where the anchor was defined; then the holder's place, where the alias is used. A null
// value has no place of its own either.
YAML::Mark used_at(const YAML::Node& node, const YAML::Mark& holder) {
  if (node.IsNull()) return holder;
  const YAML::Mark mark = node.Mark();
  return mark.pos < holder.pos ? holder : mark;
}

SourceLocation location_of(const YAML::Mark& mark, const std::string& file) {
  SourceLocation where;
  where.file = file;
  if (!mark.is_null()) {
    where.line = mark.line + 1;
    where.column = mark.column + 1;
  }
  return where;
}

bool parse_int(const std::string& text, long long* value) {
  const char* first = text.data();
  const char* last = first + text.size();
  if (first != last && *first == '+') ++first;
  auto [ptr, ec] = std::from_chars(first, last, *value);
  return ec == std::errc() && ptr == last && first != last;
}

}  // namespace

int edit_distance(std::string_view a, std::string_view b) {
  // Optimal string alignment distance over three rows.
  const size_t n = a.size(), m = b.size();
  std::vector<int> before(m + 1), previous(m + 1), current(m + 1);
  for (size_t j = 0; j <= m; ++j) previous[j] = static_cast<int>(j);
  for (size_t i = 1; i <= n; ++i) {
    current[0] = static_cast<int>(i);
    for (size_t j = 1; j <= m; ++j) {
      const int cost = a[i - 1] == b[j - 1] ? 0 : 1;
      current[j] = std::min({previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        current[j] = std::min(current[j], before[j - 2] + 1);
    }
    before.swap(previous);
    previous.swap(current);
  }
  return previous[m];
}

std::string closest(std::string_view word, const std::vector<std::string>& candidates) {
  // Short words allow one edit, longer ones two, very long ones a third of their length.
  const int allowed = std::max(word.size() <= 3 ? 1 : 2, static_cast<int>(word.size()) / 3);
  std::string best;
  int best_distance = allowed + 1;
  for (const auto& candidate : candidates) {
    const int d = edit_distance(word, candidate);
    if (d < best_distance) {
      best_distance = d;
      best = candidate;
    }
  }
  return best;
}

std::string suggestion(std::string_view word, const std::vector<std::string>& candidates) {
  const std::string best = closest(word, candidates);
  if (!best.empty()) return " \u2014 did you mean '" + best + "'?";
  return " (expected one of: " + join_quoted(candidates) + ")";
}

SourceLocation Value::location() const {
  return location_of(mark_, file_);
}

void Value::fail(const std::string& message) const {
  throw InvalidArgument(message, where());
}

std::string Value::label() const {
  return path_.empty() ? "the file" : path_;
}

std::string Value::describe() const {
  if (!node_.IsDefined() || node_.IsNull()) return "nothing";
  if (node_.IsMap()) return "a map";
  if (node_.IsSequence()) return node_.size() == 0 ? "an empty list" : "a list";
  return "'" + node_.Scalar() + "'";
}

std::string Value::as_string() const {
  if (!node_.IsScalar()) fail(label() + ": expected a text value, got " + describe());
  return node_.Scalar();
}

int Value::as_int(int min, std::string_view expected) const {
  const std::string what =
      expected.empty() ? "an integer >= " + std::to_string(min) : std::string(expected);
  long long value = 0;
  if (!node_.IsScalar() || !parse_int(node_.Scalar(), &value))
    fail(label() + ": expected " + what + ", got " + describe());
  if (value < min) fail(label() + ": expected " + what + ", got " + node_.Scalar());
  // Not "expected an integer >= 1, got 4000000000", which reads as if 4e9 were < 1.
  if (value > std::numeric_limits<int>::max())
    fail(label() + ": " + node_.Scalar() + " is too large (at most " +
         std::to_string(std::numeric_limits<int>::max()) + ")");
  return static_cast<int>(value);
}

double Value::as_quantity(QuantityKind kind) const {
  if (!node_.IsScalar())
    fail(label() + ": expected a " + to_string(kind) + " with a unit, e.g. '" + example_of(kind) +
         "', got " + describe());
  try {
    return parse_quantity(node_.Scalar(), kind, path_);
  } catch (const InvalidArgument& e) {
    fail(e.message());
  }
}

int64_t Value::as_size_bytes() const {
  if (!node_.IsScalar())
    fail(label() + ": expected a size with a unit, e.g. '64 MiB', got " + describe());
  try {
    return parse_size_bytes(node_.Scalar(), path_);
  } catch (const InvalidArgument& e) {
    fail(e.message());
  }
}

bool Value::as_bool() const {
  if (node_.IsScalar()) {
    const std::string& text = node_.Scalar();
    if (text == "true" || text == "True" || text == "TRUE") return true;
    if (text == "false" || text == "False" || text == "FALSE") return false;
  }
  fail(label() + ": expected true or false, got " + describe());
}

std::vector<Value::Entry> Value::entries() const {
  if (!node_.IsMap()) fail(label() + ": expected a map, got " + describe());
  const std::string in = path_.empty() ? "" : " in " + path_;
  std::vector<Entry> out;
  // Each name's index in `out`: a hash lookup per key, so that a map of 10^5 keys (a
  // hostile Hugging Face config) is read in linear time, not in a pairwise comparison.
  std::unordered_map<std::string, size_t> seen;
  for (auto it = node_.begin(); it != node_.end(); ++it) {
    const Value key(it->first, it->first.Mark(), file_, path_);
    if (!key.is_scalar()) key.fail("expected a key" + in + ", got " + key.describe());
    const std::string name = it->first.Scalar();
    if (const auto [at, fresh] = seen.emplace(name, out.size()); !fresh)
      key.fail("duplicate key '" + name + "'" + in + " (first at line " +
               std::to_string(out[at->second].key.location().line) + ")");
    const std::string path = path_.empty() ? name : path_ + "." + name;
    const YAML::Mark mark = used_at(it->second, it->first.Mark());
    out.push_back({name, key, Value(it->second, mark, file_, path)});
  }
  return out;
}

std::vector<Value> Value::items() const {
  if (!node_.IsSequence()) fail(label() + ": expected a list, got " + describe());
  std::vector<Value> out;
  size_t i = 0;
  for (const auto& item : node_) {
    const YAML::Mark mark = used_at(item, mark_);
    out.emplace_back(item, mark, file_, path_ + "[" + std::to_string(i++) + "]");
  }
  return out;
}

std::vector<int> Value::as_int_list(int count, int min, std::string_view example) const {
  const std::string what =
      (count < 0 ? std::string("a list of integers")
                 : "a list of " + std::to_string(count) + " integer" + (count == 1 ? "" : "s")) +
      (min > 0 ? " >= " + std::to_string(min) : "") + ", e.g. " + std::string(example);
  if (!node_.IsSequence() || (count >= 0 && static_cast<int>(node_.size()) != count) ||
      node_.size() == 0)
    fail(label() + ": expected " + what + ", got " +
         (node_.IsSequence() ? "a list of " + std::to_string(node_.size()) : describe()));
  std::vector<int> out;
  for (const Value& item : items()) out.push_back(item.as_int(min, what));
  return out;
}

Shape Value::as_shape(std::string_view example) const {
  if (node_.IsScalar()) {
    try {
      return parse_shape(node_.Scalar(), path_);
    } catch (const InvalidArgument& e) {
      fail(e.message() + " (expected e.g. " + std::string(example) + ")");
    }
  }
  // [] is a 0-d tensor and a 0 a zero-size dim, as PyTorch allows.
  const std::string what = "a list of sizes >= 0, e.g. " + std::string(example);
  if (!node_.IsSequence()) fail(label() + ": expected " + what + ", got " + describe());
  Shape shape;
  for (const Value& item : items()) {
    long long value = 0;
    if (!item.node().IsScalar() || !parse_int(item.node().Scalar(), &value) || value < 0)
      item.fail(label() + ": expected " + what + ", got " + item.describe());
    shape.push_back(value);
  }
  // Same overflow rule as parse_shape: bytes must fit in 64 bits for 8-byte dtypes.
  const int64_t limit = std::numeric_limits<int64_t>::max() / 8;
  int64_t total = 1;
  for (int64_t d : shape) {
    if (d > 0 && total > limit / d) fail(label() + ": shape " + to_string(shape) + " is too large");
    total *= d;
  }
  return shape;
}

MapReader::MapReader(const Value& map, std::vector<std::string> allowed) : map_(map) {
  if (!map.is_map()) map.fail(map.label() + ": expected a map, got " + map.describe());
  for (auto it = map.node().begin(); it != map.node().end(); ++it) {
    const Value key(it->first, it->first.Mark(), map.file(), map.path());
    const std::string name = key.is_scalar() ? it->first.Scalar() : "";
    const std::string in = map.path().empty() ? "" : " in " + map.path();
    if (!key.is_scalar()) key.fail("expected a key" + in + ", got " + key.describe());
    if (std::find(allowed.begin(), allowed.end(), name) == allowed.end())
      key.fail("unknown key '" + name + "'" + in + suggestion(name, allowed));
    for (const Entry& entry : entries_)
      if (entry.key == name)
        key.fail("duplicate key '" + name + "'" + in + " (first at line " +
                 std::to_string(entry.value.location().line) + ")");
    const std::string path = map.path().empty() ? name : map.path() + "." + name;
    const YAML::Mark mark = used_at(it->second, it->first.Mark());
    entries_.push_back({name, key, Value(it->second, mark, map.file(), path)});
  }
}

bool MapReader::has(std::string_view key) const {
  return get(key).has_value();
}

std::optional<Value> MapReader::get(std::string_view key) const {
  for (const Entry& entry : entries_)
    if (entry.key == key) return entry.value;
  return std::nullopt;
}

std::optional<Value> MapReader::key(std::string_view key) const {
  for (const Entry& entry : entries_)
    if (entry.key == key) return entry.key_value;
  return std::nullopt;
}

Value MapReader::require(std::string_view key) const {
  if (auto value = get(key)) return *value;
  const std::string in = map_.path().empty() ? "" : " in " + map_.path();
  map_.fail("missing key '" + std::string(key) + "'" + in);
}

// Every key and value must be printable UTF-8: names reach terminals, tables, CSV, plots
// and YAML, and a newline or an escape sequence in one would forge rows or drive the
// terminal. Walked with a stack (no recursion on deep files) and a cap on the nodes
// visited, since aliases can make a small file expand without bound.
static constexpr int64_t kMaxYamlNodes = int64_t{1} << 22;

static void check_printable(const YAML::Node& root, const std::string& file) {
  std::vector<YAML::Node> stack{root};
  int64_t visited = 0;
  const auto check = [&](const YAML::Node& node) {
    const std::string why = unprintable_reason(node.Scalar());
    if (!why.empty())
      throw InvalidArgument("text '" + printable_prefix(node.Scalar()) + "…' contains " + why +
                                ": names and values must be printable UTF-8",
                            location_of(node.Mark(), file).to_string());
  };
  // A tag (!!str, !!int, !custom) would say how to read a value, and symmesh reads every
  // value by its key instead: "nodes: !!str 1" must not read as the integer it contradicts.
  // yaml-cpp gives untagged nodes "?" (plain) or "!" (quoted): those are fine.
  const auto check_tag = [&](const YAML::Node& node) {
    std::string tag = node.Tag();
    if (tag.empty() || tag == "?" || tag == "!") return;
    const std::string core = "tag:yaml.org,2002:";  // written !!str, !!int, …
    if (tag.starts_with(core)) tag = "!!" + tag.substr(core.size());
    {
      throw InvalidArgument("YAML tag '" + printable_prefix(tag) +
                                "' is not read: symmesh reads each value by its key, so a tag "
                                "could only contradict it; remove the tag",
                            location_of(node.Mark(), file).to_string());
    }
  };
  while (!stack.empty()) {
    const YAML::Node node = stack.back();
    stack.pop_back();
    // Named at the node that passed the cap: with aliases, the anchored node read again
    // and again (yaml-cpp marks an alias's node where its anchor is).
    if (++visited > kMaxYamlNodes)
      throw InvalidArgument("the file expands to more than " + std::to_string(kMaxYamlNodes) +
                                " YAML nodes (through aliases?); symmesh reads at most that many",
                            location_of(node.Mark(), file).to_string());
    if (node.IsDefined() && !node.IsNull()) check_tag(node);
    if (node.IsScalar()) {
      check(node);
    } else if (node.IsMap() || node.IsSequence()) {
      // Children pushed in reverse, so that the first bad text in the file is the one named.
      std::vector<YAML::Node> children;
      for (auto it = node.begin(); it != node.end(); ++it) {
        if (node.IsMap()) {
          children.push_back(it->first);
          children.push_back(it->second);
        } else {
          children.push_back(*it);
        }
      }
      stack.insert(stack.end(), children.rbegin(), children.rend());
    }
  }
}

Value parse_yaml_text(const std::string& text, const std::string& file) {
  try {
    // YAML 1.2 breaks lines at CR, LF and CR LF; yaml-cpp only at LF (and CR LF), so a file
    // of CR-only line ends (classic Mac) would read as one long line.
    std::string lines = text;
    for (size_t i = 0; i < lines.size(); ++i)
      if (lines[i] == '\r' && (i + 1 == lines.size() || lines[i + 1] != '\n')) lines[i] = '\n';
    // One document: a second one (after ---) would be silently ignored by YAML::Load. Found
    // in the text, not with YAML::LoadAll, which loops forever on some malformed inputs
    // (yaml-cpp 0.7; a fuzzer input in tests/fuzz/regressions/).
    if (const int line = second_document_line(lines); line > 0)
      throw InvalidArgument("the file holds more than one YAML document (a second --- at line " +
                                std::to_string(line) + "); a scenario or cluster is one",
                            file + ":" + std::to_string(line) + ":1");
    if (const auto [line, column] = too_deep_at(lines); line > 0)
      throw InvalidArgument("lists and maps nest deeper than " + std::to_string(kMaxYamlDepth) +
                                " levels here; symmesh reads at most " +
                                std::to_string(kMaxYamlDepth) +
                                " (a fixed limit: a scenario needs fewer than 10)",
                            file + ":" + std::to_string(line) + ":" + std::to_string(column));
    const YAML::Node root = YAML::Load(lines);
    check_printable(root, file);
    YAML::Mark start;
    start.line = 0;
    start.column = 0;
    return Value(root, root.IsNull() ? start : root.Mark(), file, "");
  } catch (const YAML::ParserException& e) {
    throw InvalidArgument("invalid YAML: " + e.msg, location_of(e.mark, file).to_string());
  }
}

Value read_yaml_file(const std::string& path) {
  // A FIFO would block the read forever, a device (/dev/zero) never end: files only, each
  // fault in the words every input reader uses (core/input_file.hpp).
  if (const std::string fault = input_file_fault(path); !fault.empty())
    throw InvalidArgument(fault, path);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InvalidArgument("cannot open '" + path + "' (missing or unreadable)", path);
  return parse_yaml_text(read_bounded_input(in, path, path), path);
}

}  // namespace symmesh::scenario
