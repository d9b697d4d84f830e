#include "evaluation/host_memory.hpp"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>

namespace symmesh::evaluation {

std::optional<int64_t> parse_mem_available(const std::string& meminfo_text) {
  std::istringstream lines(meminfo_text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("MemAvailable:", 0) != 0) continue;
    std::istringstream fields(line.substr(13));
    long long kib = -1;
    std::string unit;
    if (!(fields >> kib >> unit) || kib < 0 || unit != "kB") return std::nullopt;
    return int64_t{kib} * 1024;
  }
  return std::nullopt;
}

std::optional<HostMemory> host_memory() {
  std::ifstream in("/proc/meminfo");
  if (in) {
    std::ostringstream text;
    text << in.rdbuf();
    if (const auto bytes = parse_mem_available(text.str())) return HostMemory{*bytes, ""};
  }
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_bytes = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page_bytes > 0)
    return HostMemory{int64_t{pages} * page_bytes, "physical memory; /proc/meminfo unreadable"};
  return std::nullopt;
}

std::string gigabytes_text(int64_t bytes) {
  char text[32];
  if (bytes < 1'000'000'000)
    std::snprintf(text, sizeof text, "%.0f MB", static_cast<double>(bytes) / 1e6);
  else
    std::snprintf(text, sizeof text, "%.1f GB", static_cast<double>(bytes) / 1e9);
  return text;
}

Admission admit(int64_t need_bytes, int64_t committed_bytes,
                const std::optional<HostMemory>& available) {
  if (!available) return Admission::start;  // unknown: no guard
  if (need_bytes > available->available_bytes) return Admission::skip;
  // Nothing running: it fits alone, so it starts.
  if (committed_bytes > 0 && committed_bytes + need_bytes > available->available_bytes)
    return Admission::wait;
  return Admission::start;
}

std::string not_enough_memory_text(int64_t need_bytes, const HostMemory& available,
                                   const std::string& what) {
  std::string text = "needs about " + gigabytes_text(need_bytes) + " of host memory " + what +
                     "; " + gigabytes_text(available.available_bytes) + " available";
  if (!available.source.empty()) text += " (" + available.source + ")";
  return text;
}

}  // namespace symmesh::evaluation
