// Simulator overhead: wall time to simulate a ring all-reduce of 1 GiB on 64, 256 and
// 1,024 GPUs (8-GPU nodes, rail network) through the symmesh backend (a Program of
// put_signal / wait_signal / reduce run by sim/), against the same message pattern written
// as a minimal plain S4U program (host-to-host sendto, a semaphore per rank for the signal,
// an execution for the reduce) on the same platform. Both run in a forked process each, as
// the backend always does; both report the same simulated time.
//
//   usage: bench_sim_allreduce [--repeat N] [gpus ...]     (default: 3 × 64 256 1024)
//
// The machine this runs on may be shared: each figure is the best of N runs (alternating
// backend and plain), and the ratio compares the simulation processes' own wall times
// (engine + platform + run); "total" adds the fork and the result's trip back.
//
// Target: backend / plain < 1.3×, and under 1 MiB of simulator memory per simulated rank
// when no data is carried (the Program itself, the caller's, is listed separately).
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Semaphore.hpp>
#include <string>
#include <vector>

#include "core/program.hpp"
#include "sim/compute_model.hpp"
#include "sim/forked_run.hpp"
#include "sim/platform_builder.hpp"

namespace {

using namespace symmesh;
namespace sg4 = simgrid::s4u;

constexpr int64_t kBytes = int64_t{1} << 30;

ClusterSpec cluster_of(int gpus) {
  ClusterSpec c;
  c.name = "bench-dgx-h100";
  c.gpus_per_node = 8;
  c.nodes = gpus / 8;
  c.gpu.name = "H100-SXM";
  c.gpu.peak_flops_per_s = {{"bf16", 989.4e12}, {"fp32", 67e12}};
  c.gpu.memory_capacity_bytes = 80.0 * (1ull << 30);
  c.gpu.memory_bandwidth_bytes_per_s = 3.35e12;
  c.intra_node = {"nvswitch", 450e9, 1e-6};
  c.inter_node = {"rail", 8, 50e9, 3e-6};
  return c;
}

// Ring all-reduce = reduce-scatter then all-gather, p − 1 steps each, one chunk of
// bytes / p per step. Each step's incoming chunk lands in its own receive slot, so no put
// overwrites unconsumed bytes.
Program ring_allreduce(int p) {
  const int64_t chunk = kBytes / p;
  Program prog(p);
  const GroupId world = prog.world_group();
  const SymmetricHandle data = prog.symm_alloc(world, kBytes);
  const SymmetricHandle recv = prog.symm_alloc(world, chunk * (p - 1));
  for (int r = 0; r < p; ++r) {
    const StreamId s = prog.stream(r, "ring");
    const int next = (r + 1) % p, prev = (r + p - 1) % p;
    for (int step = 0; step < p - 1; ++step) {
      const int send_chunk = ((r - step) % p + p) % p;
      const int recv_chunk = ((r - step - 1) % p + p) % p;
      prog.put_signal(r, s, data.whole().slice(send_chunk * chunk, chunk), recv, step * chunk, next,
                      {});
      prog.wait_signal(r, s, recv, prev, {});
      ReduceWork add;
      add.dtype = DType::fp32;
      add.elements = chunk / 4;
      add.dst = data.whole().slice(recv_chunk * chunk, chunk);
      add.src = recv.whole().slice(step * chunk, chunk);
      prog.reduce(r, s, add, {});
    }
    for (int step = 0; step < p - 1; ++step) {
      const int send_chunk = ((r + 1 - step) % p + p) % p;
      prog.put_signal(r, s, data.whole().slice(send_chunk * chunk, chunk), data, send_chunk * chunk,
                      next, {});
      prog.wait_signal(r, s, data, prev, {});
    }
  }
  return prog;
}

double cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
}

struct Plain {
  double makespan_s = 0, wall_s = 0, cpu_s = 0;
  int64_t memory_bytes = 0;
};

int64_t status_bytes(const char* key) {
  std::ifstream status("/proc/self/status");
  std::string word;
  while (status >> word)
    if (word == key) {
      int64_t kib = 0;
      status >> kib;
      return kib * 1024;
    }
  return 0;
}

// The same pattern in plain S4U, in this (forked) process.
Plain plain_s4u(const ClusterSpec& cluster) {
  std::ofstream("/proc/self/clear_refs") << "5";
  const int64_t rss0 = status_bytes("VmRSS:");
  const auto t0 = std::chrono::steady_clock::now();
  const double cpu0 = cpu_seconds();
  sg4::Engine engine("plain-s4u");
  sim::configure_network_model();
  const std::vector<sg4::Host*> hosts = sim::build_platform(cluster);
  const int p = cluster.num_gpus();
  const int64_t chunk = kBytes / p;
  ReduceWork add;
  add.dtype = DType::fp32;
  add.elements = chunk / 4;
  const double reduce_flops = sim::reduce_duration_s(cluster.gpu, add) * sim::kHostFlopsPerS;
  std::vector<sg4::SemaphorePtr> arrived;
  for (int r = 0; r < p; ++r) arrived.push_back(sg4::Semaphore::create(0));
  for (int r = 0; r < p; ++r)
    sg4::Actor::create("ring" + std::to_string(r), hosts[r], [&, r] {
      const int next = (r + 1) % p;
      for (int phase = 0; phase < 2; ++phase)
        for (int step = 0; step < p - 1; ++step) {
          sg4::Comm::sendto(hosts[r], hosts[next], chunk);
          arrived[next]->release();
          arrived[r]->acquire();
          if (phase == 0) sg4::this_actor::execute(reduce_flops);
        }
    });
  engine.run();
  Plain out;
  out.makespan_s = sg4::Engine::get_clock();
  out.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  out.cpu_s = cpu_seconds() - cpu0;
  out.memory_bytes = status_bytes("VmHWM:") - rss0;
  return out;
}

Plain plain_forked(const ClusterSpec& cluster) {
  int fds[2];
  if (pipe(fds) != 0) std::abort();
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    const Plain p = plain_s4u(cluster);
    if (write(fds[1], &p, sizeof p) != sizeof p) _exit(1);
    _exit(0);
  }
  close(fds[1]);
  Plain p;
  const bool ok = read(fds[0], &p, sizeof p) == sizeof p;
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!ok) std::fprintf(stderr, "the plain S4U run failed\n");
  return p;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> sizes;
  int repeat = 3;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--repeat" && i + 1 < argc)
      repeat = std::max(1, std::atoi(argv[++i]));
    else
      sizes.push_back(std::atoi(argv[i]));
  }
  if (sizes.empty()) sizes = {64, 256, 1024};
  std::printf("ring all-reduce of 1 GiB, 8 GPUs per node, rail network, best of %d\n", repeat);
  std::printf("%6s %9s %9s %9s %9s %6s %9s %9s %6s %9s %9s %10s %10s %11s\n", "gpus", "sim_ms",
              "plain_ms", "backend_s", "plain_s", "ratio", "back_cpu", "plain_cpu", "ratio",
              "total_s", "plain_tot", "KiB/rank", "s4u_KiB/r", "prog_KiB/r");
  for (int gpus : sizes) {
    if (gpus < 8 || gpus % 8 != 0) {
      std::fprintf(stderr, "skipping %d: need a multiple of 8 GPUs\n", gpus);
      continue;
    }
    const ClusterSpec cluster = cluster_of(gpus);
    const Program prog = ring_allreduce(gpus);
    size_t ops = 0;
    for (int r = 0; r < gpus; ++r) ops += prog.streams(r)[0].ops.size();
    sim::SimOptions options;
    options.record_timeline = false;
    RunResult best;
    Plain plain;
    double total_s = 1e300, plain_total_s = 1e300, best_cpu_s = 1e300, plain_cpu_s = 1e300;
    for (int i = 0; i < repeat; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      RunResult result = sim::run_simulation(prog, cluster, options);
      total_s = std::min(
          total_s, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      best_cpu_s = std::min(best_cpu_s, result.backend_cpu_s);
      if (i == 0 || result.backend_wall_s < best.backend_wall_s) best = std::move(result);
      const auto t1 = std::chrono::steady_clock::now();
      const Plain p = plain_forked(cluster);
      plain_total_s =
          std::min(plain_total_s,
                   std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count());
      plain_cpu_s = std::min(plain_cpu_s, p.cpu_s);
      if (i == 0 || p.wall_s < plain.wall_s) plain = p;
    }
    std::printf(
        "%6d %9.4f %9.4f %9.3f %9.3f %6.2f %9.3f %9.3f %6.2f %9.3f %9.3f %10.1f %10.1f %11.1f\n",
        gpus, best.makespan_s * 1e3, plain.makespan_s * 1e3, best.backend_wall_s, plain.wall_s,
        best.backend_wall_s / plain.wall_s, best_cpu_s, plain_cpu_s, best_cpu_s / plain_cpu_s,
        total_s, plain_total_s, best.backend_memory_bytes / 1024.0 / gpus,
        plain.memory_bytes / 1024.0 / gpus,
        static_cast<double>(ops * sizeof(StreamOp)) / 1024.0 / gpus);
    std::fflush(stdout);
  }
  return 0;
}
