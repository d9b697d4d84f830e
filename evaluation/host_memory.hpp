#pragma once
// How much host memory this machine can give a simulation, and whether a point that needs
// some of it may start. A 512-GPU sweep point lowers to ~15 M stream ops (gigabytes), and
// an emulation holds every rank's real buffers: past what the machine has, the kernel's
// OOM killer would end the run with no word of why. The guard says so before any of that
// memory is allocated (evaluation/memory_estimate.hpp gives the figures it compares).
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace symmesh::evaluation {

struct HostMemory {
  int64_t available_bytes = 0;
  // Said after the figure when not the usual MemAvailable ("physical memory;
  // /proc/meminfo unreadable"); empty otherwise.
  std::string source;
  // The address-space limit (RLIMIT_AS) less what this process maps, when there is one: a
  // forked simulation's memory AND its reserved actor stacks count against it.
  std::optional<int64_t> address_space_bytes;
  std::string address_space_source;
};

// The tightest of what this process may use:
//   MemAvailable of /proc/meminfo (what the kernel can give without swapping), or when
//     that cannot be read the machine's physical memory (sysconf), a looser ceiling;
//   the memory cgroup's limit less its usage: cgroup v2 memory.max - memory.current, or
//     v1 memory.limit_in_bytes - memory.usage_in_bytes, for the cgroup of /proc/self/cgroup;
// and apart, since it also counts memory only reserved: the address-space limit
// (RLIMIT_AS, e.g. `prlimit --as`) less this process's own address space (VmSize of
// /proc/self/status), as a forked simulation starts with a copy of it.
// `source` names the limit when it is not MemAvailable. nullopt when nothing is known:
// then nothing is guarded and runs behave as before.
std::optional<HostMemory> host_memory();

// The pieces, for tests. Each nullopt when absent, unlimited or malformed.
// "VmSize:  123456 kB" of a /proc/self/status text, in bytes.
std::optional<int64_t> parse_vm_size(const std::string& status_text);
// A cgroup limit file's text: "max\n" (v2, unlimited) or a byte count; v1 writes a huge
// number (>= 2^62) for no limit.
std::optional<int64_t> parse_cgroup_limit(const std::string& text);
// The cgroup paths of a /proc/self/cgroup text: {v2 path ("0::/x"), v1 memory path
// ("4:memory:/y")}, each empty when absent.
std::pair<std::string, std::string> parse_cgroup_paths(const std::string& text);
// The smallest of the figures present (empty source: MemAvailable).
std::optional<HostMemory> tightest(const std::vector<HostMemory>& candidates);

// The MemAvailable figure of a /proc/meminfo text in bytes ("MemAvailable: 6062244 kB");
// nullopt when absent or malformed.
std::optional<int64_t> parse_mem_available(const std::string& meminfo_text);

// "9.1 GB" (decimal gigabytes, one decimal; "512 MB" below 1 GB).
std::string gigabytes_text(int64_t bytes);

// What to do with a point needing `need_bytes` while `committed_bytes` are held by points
// already running, out of `available_bytes` (read once, before any point started: a
// running point's own use lowers MemAvailable, and must not be counted twice).
enum class Admission {
  start,  // fits next to what runs
  wait,   // fits alone: start it once running points have finished
  skip,   // does not fit even alone
};
// `reserved_bytes`: address space the point reserves beyond `need_bytes` (actor stacks),
// checked against available->address_space_bytes only — per process, so never summed with
// the points in flight.
Admission admit(int64_t need_bytes, int64_t committed_bytes,
                const std::optional<HostMemory>& available, int64_t reserved_bytes = 0);

// "needs about 9.1 GB of host memory to simulate; 6.2 GB available"; `what` is the verb
// phrase ("to simulate", "to emulate").
std::string not_enough_memory_text(int64_t need_bytes, const HostMemory& available,
                                   const std::string& what, int64_t reserved_bytes = 0);

}  // namespace symmesh::evaluation
