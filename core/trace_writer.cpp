#include "core/trace_writer.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <map>
#include <numeric>
#include <set>

namespace symmesh {
namespace {

// What a trace slice is: put, wait, matmul, reduce, copy, …
std::string slice_name(StreamOp::Kind kind) {
  switch (kind) {
    case StreamOp::Kind::put_signal:
      return "put";
    case StreamOp::Kind::wait_signal:
      return "wait";
    case StreamOp::Kind::record_event:
    case StreamOp::Kind::wait_event:
      return "event";
    default:
      return to_string(kind);
  }
}

}  // namespace

std::string json_string(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char escaped[8];
          std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned>(c));
          out += escaped;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string json_number(double value) {
  if (!std::isfinite(value)) return "null";
  char buffer[32];
  const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
  return ec == std::errc() ? std::string(buffer, end) : "null";
}

std::string chrome_trace_json(const Program& program, const RunResult& result) {
  // Ops in the order they started (ties: rank, stream, op), as a reader scans a timeline.
  std::vector<size_t> order(result.timeline.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
    const TimelineEntry& a = result.timeline[x];
    const TimelineEntry& b = result.timeline[y];
    if (a.start_s != b.start_s) return a.start_s < b.start_s;
    if (a.rank != b.rank) return a.rank < b.rank;
    return a.stream != b.stream ? a.stream < b.stream : a.op_index < b.op_index;
  });
  std::string out = "{\"traceEvents\":[";
  bool first = true;
  auto event = [&](const std::string& text) {
    if (!first) out += ",";
    out += text;
    first = false;
  };
  std::set<int> ranks;
  std::set<std::pair<int, int>> streams;
  for (const size_t i : order) {
    const TimelineEntry& e = result.timeline[i];
    ranks.insert(e.rank);
    streams.emplace(e.rank, e.stream);
    const StreamOp& op = program.streams(e.rank).at(e.stream).ops.at(e.op_index);
    const OpLabel& label = program.label_of(op.label());
    const std::string kind = to_string(op.kind());
    const std::string detail = e.detail >= 0 ? result.details.at(e.detail) : label.detail;
    const std::string category = to_string(label.category);
    // A slice is named by what it is; the workload op it belongs to is an argument, so a
    // viewer groups and searches slices by either.
    std::string args = "{\"op\":" + json_string(label.name) + ",\"kind\":" + json_string(kind) +
                       ",\"bytes\":" + std::to_string(e.bytes);
    if (!detail.empty()) args += ",\"detail\":" + json_string(detail);
    args += "}";
    event("{\"name\":" + json_string(slice_name(op.kind())) +
          ",\"cat\":" + json_string(category.empty() ? "op" : category) +
          ",\"ph\":\"X\",\"pid\":" + std::to_string(e.rank) +
          ",\"tid\":" + std::to_string(e.stream) + ",\"ts\":" + json_number(e.start_s * 1e6) +
          ",\"dur\":" + json_number((e.end_s - e.start_s) * 1e6) + ",\"args\":" + args + "}");
  }
  for (const Hazard& h : result.hazards) {
    ranks.insert(h.receiver);
    event("{\"name\":\"hazard\",\"cat\":\"hazard\",\"ph\":\"i\",\"s\":\"p\",\"pid\":" +
          std::to_string(h.receiver) + ",\"tid\":0,\"ts\":" + json_number(h.time_s * 1e6) +
          ",\"args\":{\"what\":" + json_string(h.to_string()) + "}}");
  }
  for (const int rank : ranks)
    event("{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":" + std::to_string(rank) +
          ",\"args\":{\"name\":" + json_string("rank " + std::to_string(rank)) + "}}");
  for (const auto& [rank, stream] : streams)
    event("{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":" + std::to_string(rank) +
          ",\"tid\":" + std::to_string(stream) +
          ",\"args\":{\"name\":" + json_string(program.streams(rank).at(stream).name) + "}}");
  // ts and dur are in microseconds, as the format requires; "ms" shows them as such
  // ("ns" would display microsecond data with nanosecond ticks).
  out += "],\"displayTimeUnit\":\"ms\",\"otherData\":{\"makespan_s\":" +
         json_number(result.makespan_s) + "}}";
  return out;
}

std::string empty_chrome_trace() {
  return chrome_trace_json(Program(1), RunResult{});
}

}  // namespace symmesh
