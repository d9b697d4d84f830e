#include "sim/trace_writer.hpp"

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <set>

#include "core/errors.hpp"

namespace symmesh::sim {

nlohmann::json chrome_trace_json(const RunResult& result) {
  using nlohmann::json;
  json events = json::array();
  std::set<int> ranks;
  std::map<std::pair<int, int>, std::string> streams;
  for (const TimelineEntry& e : result.timeline) {
    ranks.insert(e.rank);
    streams.emplace(std::make_pair(e.rank, e.stream), e.stream_name);
    const std::string name = e.label.name.empty() ? kind_name(e.kind) : e.label.name;
    json args = {{"op", kind_name(e.kind)}, {"bytes", e.bytes}};
    if (!e.label.detail.empty()) args["detail"] = e.label.detail;
    events.push_back({{"name", name},
                      {"cat", e.label.category.empty() ? "op" : e.label.category},
                      {"ph", "X"},
                      {"pid", e.rank},
                      {"tid", e.stream},
                      {"ts", e.start_s * 1e6},
                      {"dur", (e.end_s - e.start_s) * 1e6},
                      {"args", args}});
  }
  for (const Hazard& h : result.hazards) {
    ranks.insert(h.receiver);
    events.push_back({{"name", "hazard"},
                      {"cat", "hazard"},
                      {"ph", "i"},
                      {"s", "p"},
                      {"pid", h.receiver},
                      {"tid", 0},
                      {"ts", h.time_s * 1e6},
                      {"args", {{"what", h.to_string()}}}});
  }
  for (int rank : ranks)
    events.push_back({{"name", "process_name"},
                      {"ph", "M"},
                      {"pid", rank},
                      {"args", {{"name", "rank " + std::to_string(rank)}}}});
  for (const auto& [key, name] : streams)
    events.push_back({{"name", "thread_name"},
                      {"ph", "M"},
                      {"pid", key.first},
                      {"tid", key.second},
                      {"args", {{"name", name}}}});
  return json{{"traceEvents", std::move(events)},
              {"displayTimeUnit", "ns"},
              {"otherData", {{"makespan_s", result.makespan_s}}}};
}

void write_chrome_trace(const RunResult& result, std::ostream& out) {
  out << chrome_trace_json(result).dump() << '\n';
}

void write_chrome_trace_file(const RunResult& result, const std::string& path) {
  std::ofstream out(path);
  if (!out) throw InvalidArgument("cannot open for writing", path);
  write_chrome_trace(result, out);
  if (!out) throw InvalidArgument("write failed", path);
}

}  // namespace symmesh::sim
