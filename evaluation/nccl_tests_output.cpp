#include "evaluation/nccl_tests_output.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "core/errors.hpp"
#include "core/input_file.hpp"

namespace symmesh::evaluation {

namespace {

// More GPUs than any run has had: a count beyond it is a typo (and would not fit an int).
constexpr int64_t kMostGpus = 1 << 20;

std::vector<std::string> words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// "[1,0]<stdout>:" or "[1,0]<stderr>:" at the start of a line, as mpirun --tag-output writes.
std::string without_mpirun_tag(const std::string& line) {
  if (line.empty() || line[0] != '[') return line;
  const auto close = line.find("]<std");
  if (close == std::string::npos) return line;
  const auto colon = line.find(">:", close);
  if (colon == std::string::npos) return line;
  return line.substr(colon + 2);
}

bool parse_int(const std::string& text, int64_t& out) {
  if (text.empty()) return false;
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (errno != 0 || *end != '\0') return false;
  out = v;
  return true;
}

bool parse_double(const std::string& text, double& out) {
  if (text.empty()) return false;
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text.c_str(), &end);
  if (errno != 0 || *end != '\0' || !std::isfinite(v)) return false;
  out = v;
  return true;
}

// "all_reduce_perf" → all_reduce; alltoall_perf → all_to_all (bandwidth_collective reads it).
std::optional<BandwidthCollective> program_collective(std::string name) {
  const std::string suffix = "_perf";
  if (name.size() > suffix.size() &&
      name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
    name.resize(name.size() - suffix.size());
  return bandwidth_collective(name);
}

}  // namespace

NcclTestsRun parse_nccl_tests_output(const std::string& text, const std::string& file,
                                     std::optional<BandwidthCollective> fallback) {
  NcclTestsRun run;
  run.file = file;
  std::optional<BandwidthCollective> started, metadata;
  std::set<int64_t> ranks;
  std::set<std::string> hosts;
  int metadata_gpus = 0, threads_times_gpus = 0;
  std::istringstream in(text);
  std::string raw;
  int line_number = 0;
  const auto where = [&] { return file + ":" + std::to_string(line_number); };
  while (std::getline(in, raw)) {
    ++line_number;
    if (!raw.empty() && raw.back() == '\r') raw.pop_back();
    const std::string line = without_mpirun_tag(raw);
    const std::vector<std::string> w = words(line);
    if (w.empty()) continue;
    if (line.find(" NCCL INFO ") != std::string::npos ||
        line.find(" NCCL WARN ") != std::string::npos)
      continue;
    if (w[0] == "#%") {
      if (w.size() >= 3 && w[1] == "gpus:") {
        int64_t n = 0;
        if (!parse_int(w[2], n) || n < 1 || n > kMostGpus)
          throw InvalidArgument("'#% gpus:' needs a whole number from 1 to " +
                                    std::to_string(kMostGpus) + ", got '" + w[2] + "'",
                                where());
        metadata_gpus = static_cast<int>(n);
      } else if (w.size() >= 3 && w[1] == "collective:") {
        std::string name = w[2];
        if (!name.empty() && name.back() == ',') name.pop_back();
        metadata = program_collective(name);
      }
      continue;
    }
    if (w[0][0] == '#') {
      // "# Collective test starting: all_reduce_perf"
      if (w.size() >= 5 && w[1] == "Collective" && w[2] == "test" && w[3] == "starting:") {
        const auto named = program_collective(w[4]);
        if (!named) throw InvalidArgument("unknown nccl-tests program '" + w[4] + "'", where());
        // A log of several programs (one section each) mixes their rows: split it first.
        if (started && *started != *named)
          throw InvalidArgument("a second nccl-tests run (" + w[4] + ", after " +
                                    to_string(*started) + "): give one run per file",
                                where());
        started = named;
      }
      // "#  Rank  0 Group  0 Pid 4180122 on cnode3-002 device  0 [...] NVIDIA H100 ..."
      if (w.size() >= 8 && w[1] == "Rank" && w[3] == "Group" && w[5] == "Pid" && w[7] == "on") {
        int64_t rank = 0;
        if (parse_int(w[2], rank)) ranks.insert(rank);
        if (w.size() >= 9) hosts.insert(w[8]);
      }
      // "# nThread 1 nGpus 8 minBytes ..."
      if (w.size() >= 5 && w[1] == "nThread" && w[3] == "nGpus") {
        int64_t t = 0, g = 0;
        if (parse_int(w[2], t) && parse_int(w[4], g) && t > 0 && g > 0 && t <= kMostGpus &&
            g <= kMostGpus && t * g <= kMostGpus)
          threads_times_gpus = static_cast<int>(t * g);
      }
      continue;
    }
    // A data row.
    if (w.size() != 13)
      throw InvalidArgument(
          "expected 13 columns (size count type redop root, then time algbw "
          "busbw #wrong out-of-place and in-place) in a data row, got " +
              std::to_string(w.size()),
          where());
    if (run.rows.size() == static_cast<size_t>(kMostNcclTestsRows))
      throw InvalidArgument("more than " + std::to_string(kMostNcclTestsRows) +
                                " data rows: symmesh fits at most that many points (a run "
                                "has tens); keep the sizes that matter",
                            where());
    NcclTestsRow row;
    row.line = line_number;
    int64_t root = 0;
    double time_us = 0, in_place_us = 0;
    const auto bad = [&](const char* column, const std::string& value) {
      return InvalidArgument(std::string("column ") + column + " is not a number: '" + value + "'",
                             where());
    };
    if (!parse_int(w[0], row.bytes) || row.bytes < 0) throw bad("size", w[0]);
    if (!parse_int(w[1], row.count) || row.count < 0) throw bad("count", w[1]);
    row.type = w[2];
    row.redop = w[3];
    if (!parse_int(w[4], root)) throw bad("root", w[4]);
    row.root = static_cast<int>(root);
    if (!parse_double(w[5], time_us) || time_us <= 0) throw bad("time (out-of-place)", w[5]);
    if (!parse_double(w[6], row.algbw_gb_per_s)) throw bad("algbw", w[6]);
    if (!parse_double(w[7], row.busbw_gb_per_s)) throw bad("busbw", w[7]);
    if (!parse_double(w[9], in_place_us)) throw bad("time (in-place)", w[9]);
    row.time_s = time_us * 1e-6;
    row.in_place_time_s = in_place_us * 1e-6;
    run.rows.push_back(row);
  }
  if (started)
    run.collective = *started;
  else if (metadata)
    run.collective = *metadata;
  else if (fallback)
    run.collective = *fallback;
  else
    throw InvalidArgument(
        "no '# Collective test starting:' line names the collective, and none was given", file);
  if (!ranks.empty()) {
    run.gpus = static_cast<int>(ranks.size());
    run.nodes = static_cast<int>(hosts.size());
  } else if (metadata_gpus > 0) {
    run.gpus = metadata_gpus;
  } else if (threads_times_gpus > 0) {
    run.gpus = threads_times_gpus;
  } else {
    throw InvalidArgument(
        "cannot tell how many GPUs ran: no Rank lines, no '#% gpus:' line and "
        "no '# nThread … nGpus …' line",
        file);
  }
  if (run.rows.empty()) throw InvalidArgument("no data rows", file);
  return run;
}

NcclTestsRun read_nccl_tests_file(const std::string& path,
                                  std::optional<BandwidthCollective> fallback) {
  return parse_nccl_tests_output(read_input_file(path, "--nccl-tests"), path, fallback);
}

}  // namespace symmesh::evaluation
