#pragma once
// How much host memory this machine can give a simulation, and whether a point that needs
// some of it may start. A 512-GPU sweep point lowers to ~15 M stream ops (gigabytes), and
// an emulation holds every rank's real buffers: past what the machine has, the kernel's
// OOM killer would end the run with no word of why. The guard says so before any of that
// memory is allocated (evaluation/memory_estimate.hpp gives the figures it compares).
#include <cstdint>
#include <optional>
#include <string>

namespace symmesh::evaluation {

struct HostMemory {
  int64_t available_bytes = 0;
  // Said after the figure when not the usual MemAvailable ("physical memory;
  // /proc/meminfo unreadable"); empty otherwise.
  std::string source;
};

// MemAvailable of /proc/meminfo (what the kernel can give without swapping). Fallback when
// that file cannot be read or has no MemAvailable line: the machine's physical memory
// (sysconf), a looser ceiling that still catches "more than the machine has". nullopt
// when neither is known: then nothing is guarded and runs behave as before.
std::optional<HostMemory> host_memory();

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
Admission admit(int64_t need_bytes, int64_t committed_bytes,
                const std::optional<HostMemory>& available);

// "needs about 9.1 GB of host memory to simulate; 6.2 GB available"; `what` is the verb
// phrase ("to simulate", "to emulate").
std::string not_enough_memory_text(int64_t need_bytes, const HostMemory& available,
                                   const std::string& what);

}  // namespace symmesh::evaluation
