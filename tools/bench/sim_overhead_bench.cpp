// Simulator overhead: symmesh's simulator against a plain SimGrid program doing the same
// ring, side by side in one invocation, at 64, 256, 512 and 1,024 GPUs (DGX H100 nodes of 8
// GPUs, rail network: scenarios/clusters/dgx-h100.yaml).
//
//   plain S4U   n actors; 2(n-1) steps; each step a put of 1e8/n bytes to the next rank's
//               mailbox (put_async), a get from its own, a wait: the minimal program of
//               this message pattern (no symmesh code; SimGrid 3.32's S4U API only)
//   symmesh     the same pattern as symmesh runs it: the core ring all-reduce of 1e8 bytes
//               (reduce-scatter then all-gather: 2(n-1) put_signal / wait_signal steps of
//               1e8/n bytes per rank, the reductions fused with the transfers) lowered to a
//               Program and run by sim/ (sim::simulate_in_this_process)
//
// Each runs in a forked child, as symmesh always simulates; the figure is the child's CPU
// time (user + system) from engine creation to the end of the run, the median of --repeat
// runs (alternating the two). Both simulate the same time (printed: they must agree).
//
//   usage: bench_sim_overhead [--repeat N] [--only symmesh|plain] [gpus ...]
//          (default: 3 × 64 256 512 1024; --only runs one side once, in this process, for
//          a profiler)
//
// Target: symmesh / plain <= 1.3 at every size.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Mailbox.hpp>
#include <string>
#include <vector>

#include "core/collectives.hpp"
#include "core/program.hpp"
#include "scenario/scenario_loader.hpp"
#include "sim/platform_builder.hpp"
#include "sim/simulation.hpp"

namespace {

using namespace symmesh;
namespace sg4 = simgrid::s4u;

constexpr double kBytes = 1e8;

// The shipped DGX H100 description (scenarios/clusters/dgx-h100.yaml: its figures are
// cited there), `gpus` / 8 nodes of it.
ClusterSpec cluster_of(int gpus) {
  ClusterSpec c =
      load_cluster(std::string(SYMMESH_SOURCE_DIR) + "/scenarios/clusters/dgx-h100.yaml");
  c.nodes = gpus / c.gpus_per_node;
  return c;
}

double cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
}

struct Figures {
  double cpu_s = 0;
  double simulated_s = 0;
};

// The plain program, in this (forked) process.
Figures plain_ring(const ClusterSpec& cluster) {
  const double cpu0 = cpu_seconds();
  sg4::Engine engine("plain-s4u");
  sim::configure_network_model();
  const std::vector<sg4::Host*> hosts = sim::build_platform(cluster);
  const int p = cluster.num_gpus();
  const uint64_t chunk = static_cast<uint64_t>(kBytes / p);
  std::vector<sg4::Mailbox*> boxes;
  for (int r = 0; r < p; ++r) boxes.push_back(sg4::Mailbox::by_name("ring" + std::to_string(r)));
  static int token = 0;  // the payload: only its simulated size matters
  for (int r = 0; r < p; ++r)
    sg4::Actor::create("rank" + std::to_string(r), hosts[r], [&, r] {
      for (int step = 0; step < 2 * (p - 1); ++step) {
        sg4::CommPtr send = boxes[(r + 1) % p]->put_async(&token, chunk);
        boxes[r]->get<int>();
        send->wait();
      }
    });
  engine.run();
  return {cpu_seconds() - cpu0, sg4::Engine::get_clock()};
}

// symmesh's ring all-reduce, lowered by the core and run by the simulator.
Figures symmesh_ring(const ClusterSpec& cluster) {
  const int p = cluster.num_gpus();
  Program program(p);
  const CollectiveSpec spec{program.world_group(),
                            static_cast<int64_t>(kBytes),
                            DType::bf16,
                            ReduceOp::sum,
                            "main",
                            "ring"};
  ring_all_reduce(program, spec);
  sim::SimOptions options;
  const RunResult r = sim::simulate_in_this_process(program, cluster, options);
  return {r.backend_cpu_s, r.makespan_s};
}

// `run` in a forked child; its figures come back through a pipe.
template <typename Run>
Figures forked(Run&& run) {
  int fds[2];
  if (pipe(fds) != 0) std::abort();
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    const Figures f = run();
    if (write(fds[1], &f, sizeof f) != sizeof f) _exit(1);
    _exit(0);
  }
  close(fds[1]);
  Figures f;
  const bool ok = read(fds[0], &f, sizeof f) == sizeof f;
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!ok) {
    std::fprintf(stderr, "a simulation failed\n");
    std::exit(1);
  }
  return f;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> sizes;
  int repeat = 3;
  std::string only;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--repeat" && i + 1 < argc)
      repeat = std::max(1, std::atoi(argv[++i]));
    else if (std::string(argv[i]) == "--only" && i + 1 < argc)
      only = argv[++i];
    else
      sizes.push_back(std::atoi(argv[i]));
  }
  if (sizes.empty()) sizes = {64, 256, 512, 1024};
  if (!only.empty()) {
    const ClusterSpec cluster = cluster_of(sizes.front());
    const Figures f = only == "plain" ? plain_ring(cluster) : symmesh_ring(cluster);
    std::printf("%s at %d GPUs: %.3f s CPU, %.4f ms simulated\n", only.c_str(), sizes.front(),
                f.cpu_s, f.simulated_s * 1e3);
    return 0;
  }
  std::printf("ring of 2(n-1) puts of 1e8/n bytes per rank, 8 GPUs per node, rail; median of %d\n",
              repeat);
  std::printf("%6s %12s %12s %12s %12s %7s\n", "gpus", "sim_ms", "plain_ms", "symmesh_cpu_s",
              "plain_cpu_s", "ratio");
  for (int gpus : sizes) {
    if (gpus < 8 || gpus % 8 != 0) {
      std::fprintf(stderr, "skipping %d: need a multiple of 8 GPUs\n", gpus);
      continue;
    }
    const ClusterSpec cluster = cluster_of(gpus);
    std::vector<double> mine, plain;
    Figures m, q;
    for (int i = 0; i < repeat; ++i) {
      m = forked([&] { return symmesh_ring(cluster); });
      q = forked([&] { return plain_ring(cluster); });
      mine.push_back(m.cpu_s);
      plain.push_back(q.cpu_s);
    }
    const double a = median(mine), b = median(plain);
    std::printf("%6d %12.4f %12.4f %12.3f %12.3f %7.2f\n", gpus, m.simulated_s * 1e3,
                q.simulated_s * 1e3, a, b, a / b);
    std::fflush(stdout);
  }
  return 0;
}
