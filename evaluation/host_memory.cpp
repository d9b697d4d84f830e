#include "evaluation/host_memory.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <limits>

#include <cstdio>
#include <fstream>
#include <sstream>

namespace symmesh::evaluation {

namespace {

// The "KEY:  123 kB" line of a /proc text (meminfo, status), in bytes.
std::optional<int64_t> parse_kib_field(const std::string& text, const std::string& key) {
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind(key, 0) != 0) continue;
    std::istringstream fields(line.substr(key.size()));
    long long kib = -1;
    std::string unit;
    if (!(fields >> kib >> unit) || kib < 0 || unit != "kB") return std::nullopt;
    return int64_t{kib} * 1024;
  }
  return std::nullopt;
}

}  // namespace

std::optional<int64_t> parse_mem_available(const std::string& meminfo_text) {
  return parse_kib_field(meminfo_text, "MemAvailable:");
}

namespace {

std::optional<std::string> read_text(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::optional<int64_t> parse_count(const std::string& text) {
  std::istringstream in(text);
  long long value = -1;
  if (!(in >> value) || value < 0) return std::nullopt;
  return int64_t{value};
}

// Limit less usage of one cgroup, when it has a limit.
std::optional<HostMemory> cgroup_room(const std::string& dir, const char* limit_file,
                                      const char* usage_file, const std::string& what) {
  const auto limit_text = read_text(dir + "/" + limit_file);
  const auto usage_text = read_text(dir + "/" + usage_file);
  if (!limit_text || !usage_text) return std::nullopt;
  const auto limit = parse_cgroup_limit(*limit_text);
  const auto usage = parse_count(*usage_text);
  if (!limit || !usage) return std::nullopt;
  return HostMemory{
      std::max<int64_t>(0, *limit - *usage),
      what + " " + gigabytes_text(*limit) + " less " + gigabytes_text(*usage) + " in use"};
}

}  // namespace

std::optional<int64_t> parse_vm_size(const std::string& status_text) {
  return parse_kib_field(status_text, "VmSize:");
}

std::optional<int64_t> parse_cgroup_limit(const std::string& text) {
  if (text.rfind("max", 0) == 0) return std::nullopt;
  const auto value = parse_count(text);
  if (!value || *value >= (int64_t{1} << 62)) return std::nullopt;  // v1's "no limit"
  return value;
}

std::pair<std::string, std::string> parse_cgroup_paths(const std::string& text) {
  std::pair<std::string, std::string> out;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    const size_t first = line.find(':');
    const size_t second = first == std::string::npos ? first : line.find(':', first + 1);
    if (second == std::string::npos) continue;
    const std::string controllers = line.substr(first + 1, second - first - 1);
    const std::string path = line.substr(second + 1);
    if (line.compare(0, first, "0") == 0 && controllers.empty()) out.first = path;
    std::istringstream names(controllers);
    for (std::string name; std::getline(names, name, ',');)
      if (name == "memory") out.second = path;
  }
  return out;
}

std::optional<HostMemory> tightest(const std::vector<HostMemory>& candidates) {
  std::optional<HostMemory> best;
  for (const HostMemory& c : candidates)
    if (!best || c.available_bytes < best->available_bytes) best = c;
  return best;
}

std::optional<HostMemory> host_memory() {
  std::vector<HostMemory> candidates;
  if (const auto meminfo = read_text("/proc/meminfo"))
    if (const auto bytes = parse_mem_available(*meminfo)) candidates.push_back({*bytes, ""});
  if (candidates.empty()) {
    const long pages = sysconf(_SC_PHYS_PAGES);
    const long page_bytes = sysconf(_SC_PAGESIZE);
    if (pages > 0 && page_bytes > 0)
      candidates.push_back(
          {int64_t{pages} * page_bytes, "physical memory; /proc/meminfo unreadable"});
  }
  if (const auto cgroups = read_text("/proc/self/cgroup")) {
    const auto [v2, v1] = parse_cgroup_paths(*cgroups);
    if (!v2.empty())
      for (const char* root : {"/sys/fs/cgroup", "/sys/fs/cgroup/unified"})
        if (auto room =
                cgroup_room(root + v2, "memory.max", "memory.current", "cgroup memory.max")) {
          candidates.push_back(*room);
          break;
        }
    if (!v1.empty())
      if (auto room = cgroup_room("/sys/fs/cgroup/memory" + v1, "memory.limit_in_bytes",
                                  "memory.usage_in_bytes", "cgroup memory.limit_in_bytes"))
        candidates.push_back(*room);
  }
  std::optional<HostMemory> out = tightest(candidates);
  rlimit as{};
  if (getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY) {
    const auto status = read_text("/proc/self/status");
    const int64_t used = status ? parse_vm_size(*status).value_or(0) : 0;
    const auto limit = static_cast<int64_t>(as.rlim_cur);
    if (!out) out = HostMemory{std::numeric_limits<int64_t>::max(), "no other limit known"};
    out->address_space_bytes = std::max<int64_t>(0, limit - used);
    out->address_space_source = "address-space limit (RLIMIT_AS) " + gigabytes_text(limit) +
                                " less " + gigabytes_text(used) + " this process maps";
  }
  return out;
}

std::string gigabytes_text(int64_t bytes) {
  char text[32];
  if (bytes < 1'000'000'000)
    std::snprintf(text, sizeof text, "%.0f MB", static_cast<double>(bytes) / 1e6);
  else
    std::snprintf(text, sizeof text, "%.1f GB", static_cast<double>(bytes) / 1e9);
  return text;
}

namespace {

bool over_address_space(int64_t need_bytes, int64_t reserved_bytes, const HostMemory& available) {
  return available.address_space_bytes &&
         need_bytes + reserved_bytes > *available.address_space_bytes;
}

}  // namespace

Admission admit(int64_t need_bytes, int64_t committed_bytes,
                const std::optional<HostMemory>& available, int64_t reserved_bytes) {
  if (!available) return Admission::start;  // unknown: no guard
  if (need_bytes > available->available_bytes) return Admission::skip;
  if (over_address_space(need_bytes, reserved_bytes, *available)) return Admission::skip;
  // Nothing running: it fits alone, so it starts.
  if (committed_bytes > 0 && committed_bytes + need_bytes > available->available_bytes)
    return Admission::wait;
  return Admission::start;
}

std::string not_enough_memory_text(int64_t need_bytes, const HostMemory& available,
                                   const std::string& what, int64_t reserved_bytes) {
  if (need_bytes <= available.available_bytes &&
      over_address_space(need_bytes, reserved_bytes, available))
    return "needs about " + gigabytes_text(need_bytes + reserved_bytes) + " of address space " +
           what + " (" + gigabytes_text(need_bytes) + " of memory and " +
           gigabytes_text(reserved_bytes) + " of SimGrid actor stacks); " +
           gigabytes_text(*available.address_space_bytes) + " available (" +
           available.address_space_source + ")";
  std::string text = "needs about " + gigabytes_text(need_bytes) + " of host memory " + what +
                     "; " + gigabytes_text(available.available_bytes) + " available";
  if (!available.source.empty()) text += " (" + available.source + ")";
  return text;
}

}  // namespace symmesh::evaluation
