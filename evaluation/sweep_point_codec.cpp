#include "evaluation/sweep_point_codec.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <optional>
#include <type_traits>
#include <vector>

#include "core/errors.hpp"

namespace symmesh::evaluation {
namespace {

using nlohmann::json;

// "%a" prints every finite double exactly, and inf and nan as words strtod reads back.
json exact(double value) {
  char text[64];
  std::snprintf(text, sizeof text, "%a", value);
  return text;
}

double exact_double(const json& j) {
  const std::string text = j.get<std::string>();
  char* end = nullptr;
  errno = 0;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0') throw json::other_error::create(501, "not a double", &j);
  return value;
}

// The enums' last values, for refusing a number past them.
constexpr int last_value(Recompute) { return static_cast<int>(Recompute::full); }
constexpr int last_value(CollectiveOp) { return static_cast<int>(CollectiveOp::matmul_reducescatter); }

template <typename T>
struct IsOptional : std::false_type {};
template <typename T>
struct IsOptional<std::optional<T>> : std::true_type {};

template <typename T>
struct IsVector : std::false_type {};
template <typename T>
struct IsVector<std::vector<T>> : std::true_type {};


// The fields of the structs that are not evaluation's own (a simulation report's are
// listed beside it, evaluation/simulation_report.hpp), named once for both ways.
template <typename Io>
void fields(Io& io, FieldsOf<CollectiveBandwidth> auto& b) {
  io("algbw_bytes_per_s", b.algbw_bytes_per_s), io("busbw_bytes_per_s", b.busbw_bytes_per_s);
}
template <typename Io>
void fields(Io& io, FieldsOf<CollectiveCount> auto& c) {
  io("op", c.op), io("implementation", c.implementation), io("count", c.count);
  io("bytes", c.bytes);
}
template <typename Io>
void fields(Io& io, FieldsOf<SweepPoint> auto& p) {
  io("nodes", p.nodes), io("gpus", p.gpus), io("mesh", p.mesh);
  io("recompute_fallback", p.recompute_fallback), io("micro_batch", p.micro_batch);
  io("zero", p.zero), io("skip_reason", p.skip_reason);
}

struct Writer;
template <typename T>
concept HasFields = requires(T& t, Writer& w) { fields(w, t); };

json encode(const auto& value);

// Sets each field's key; an empty optional sets none.
struct Writer {
  json& j;
  template <typename T>
  void operator()(const char* key, const T& value) {
    if constexpr (IsOptional<T>::value) {
      if (value) j[key] = encode(*value);
    } else {
      j[key] = encode(value);
    }
  }
};

json encode(const auto& value) {
  using T = std::remove_cvref_t<decltype(value)>;
  if constexpr (std::is_same_v<T, double>) {
    return exact(value);
  } else if constexpr (std::is_same_v<T, Placements>) {
    return to_string(value);  // "S(0),R", which parse_placements reads back as it was
  } else if constexpr (std::is_enum_v<T>) {
    return static_cast<int>(value);
  } else if constexpr (HasFields<T>) {
    json j = json::object();
    Writer w{j};
    fields(w, value);
    return j;
  } else if constexpr (IsVector<T>::value && !std::is_same_v<T, std::vector<std::string>>) {
    json a = json::array();
    for (const auto& item : value) a.push_back(encode(item));
    return a;
  } else {
    return value;
  }
}

void decode(const json& j, auto& value);

// Reads each field's key: an optional's may be missing, every other one must be there.
struct Reader {
  const json& j;
  template <typename T>
  void operator()(const char* key, T& value) {
    if constexpr (IsOptional<T>::value) {
      if (j.contains(key)) decode(j[key], value.emplace());
    } else {
      decode(j.at(key), value);
    }
  }
};

void decode(const json& j, auto& value) {
  using T = std::remove_cvref_t<decltype(value)>;
  if constexpr (std::is_same_v<T, double>) {
    value = exact_double(j);
  } else if constexpr (std::is_same_v<T, Placements>) {
    const std::string text = j.get<std::string>();
    value = text.empty() ? Placements{} : parse_placements(text, "encoded sweep point");
  } else if constexpr (std::is_enum_v<T>) {
    const int number = j.get<int>();
    if (number < 0 || number > last_value(T{}))
      throw json::other_error::create(501, "enum out of range", &j);
    value = static_cast<T>(number);
  } else if constexpr (HasFields<T>) {
    Reader r{j};
    fields(r, value);
  } else if constexpr (IsVector<T>::value && !std::is_same_v<T, std::vector<std::string>>) {
    value.clear();
    for (const json& item : j) decode(item, value.emplace_back());
  } else {
    value = j.get<T>();
  }
}

}  // namespace

std::string encode_sweep_point(const SweepPoint& point) {
  json j = encode(point);
  if (point.simulated()) j["report"] = encode(point.report);
  return j.dump();
}

SweepPoint decode_sweep_point(const std::string& bytes, const std::string& where) {
  try {
    const json j = json::parse(bytes);
    SweepPoint point;
    decode(j, point);
    if (point.simulated()) decode(j.at("report"), point.report);
    return point;
  } catch (const json::exception& e) {
    throw InvalidArgument(std::string("not an encoded sweep point: ") + e.what(), where);
  }
}

}  // namespace symmesh::evaluation
