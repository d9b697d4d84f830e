#include "tools/cli/mpi_sweep.hpp"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "core/errors.hpp"
#include "evaluation/sweep_answer.hpp"
#include "evaluation/sweep_point_codec.hpp"
#include "tools/cli/atomic_file.hpp"

namespace symmesh::cli {
namespace {

using evaluation::SweepPoint;
using evaluation::SweepRun;
using nlohmann::json;

// A failure as it crosses to other processes: the kind main() tells apart, then its text.
std::string failure_text(std::exception_ptr error) {
  if (!error) return "";
  try {
    std::rethrow_exception(error);
  } catch (const InvalidArgument& e) {
    return "invalid\n" + std::string(e.what());
  } catch (const Unsupported& e) {
    return "invalid\n" + std::string(e.what());
  } catch (const Unavailable& e) {
    return "unavailable\n" + e.message();
  } catch (const Error& e) {
    return "failed\n" + std::string(e.what());
  } catch (const std::exception& e) {
    return "internal\n" + std::string(e.what());
  } catch (...) {
    return "internal\nan unknown exception";
  }
}

// Rank 0 throws another process's failure as the kind it was, so main() says it as it
// would have said it there.
[[noreturn]] void throw_failure(const std::string& failure, int rank) {
  const size_t cut = failure.find('\n');
  const std::string kind = failure.substr(0, cut);
  const std::string text = "process " + std::to_string(rank) + ": " + failure.substr(cut + 1);
  if (kind == "invalid") throw InvalidArgument(text, "");
  if (kind == "unavailable") throw Unavailable(text, "");
  if (kind == "failed") throw BackendError(text, "");
  throw std::runtime_error(text);
}

// {rank, failure} of the lowest failing rank among `failures` (rank order); rank -1 if none.
std::pair<int, std::string> first_failure(const std::vector<std::string>& failures) {
  for (size_t r = 0; r < failures.size(); ++r)
    if (!failures[r].empty()) return {static_cast<int>(r), failures[r]};
  return {-1, ""};
}

// Rank 0's side of the end of a phase whose payloads were gathered: stops everyone on the
// lowest failure (thrown here), or lets all go on.
std::optional<int> settle(Communicator& world, std::exception_ptr mine,
                          const std::pair<int, std::string>& first) {
  const std::string agreed =
      world.broadcast(first.first < 0 ? "" : std::to_string(first.first) + "\n" + first.second);
  if (agreed.empty()) return std::nullopt;
  const size_t cut = agreed.find('\n');
  const int rank = std::stoi(agreed.substr(0, cut));
  const std::string failure = agreed.substr(cut + 1);
  // The others end quietly with 0: a process that exits non-zero makes mpirun kill the rest
  // of the job at once, rank 0 maybe before it has said why. Rank 0's code is mpirun's.
  if (world.rank() != 0) return 0;
  if (rank == 0 && mine) std::rethrow_exception(mine);
  throw_failure(failure, rank);
}

// Progress notes ("done total finished") from the other processes, summed on rank 0.
class ProgressSum {
 public:
  explicit ProgressSum(int ranks) : done_(ranks, 0), finished_(ranks, false) {}
  void take(Communicator& world) {
    for (const auto& [rank, note] : world.take_notes()) {
      const json j = json::parse(note);
      done_.at(rank) = j.at(0).get<size_t>();
      finished_.at(rank) = j.at(1).get<bool>();
    }
  }
  void set_own(size_t done, bool finished) { done_[0] = done, finished_[0] = finished; }
  size_t done() const {
    size_t sum = 0;
    for (size_t d : done_) sum += d;
    return sum;
  }
  bool all_finished() const {
    for (bool f : finished_)
      if (!f) return false;
    return true;
  }

 private:
  std::vector<size_t> done_;
  std::vector<bool> finished_;
};

// What this process sweeps, as 16 hex digits: FNV-1a (64 bits) over the bytes of the
// scenario and of every file it reads (its cluster's base: chain, its model's config), in
// that order, and the options that change the points. Contents, not paths: the same path
// may hold another file on another host, and another path the same file.
std::string inputs_digest(const Scenario& scenario, const evaluation::SweepOptions& options) {
  uint64_t hash = 14695981039346656037ull;
  const auto add = [&](const std::string& bytes) {
    for (unsigned char c : bytes + '\0') hash = (hash ^ c) * 1099511628211ull;
  };
  for (const std::string& file : files_read_for(scenario)) {
    std::ifstream in(file, std::ios::binary);
    add(in ? std::string(std::istreambuf_iterator<char>(in), {}) : "(unreadable)");
  }
  add(std::to_string(options.evaluation.fuse) + " " +
      std::to_string(options.evaluation.wall_clock_limit_s) + " " +
      std::to_string(options.max_time_s.value_or(-1)));
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(hash));
  return text;
}

}  // namespace

std::optional<int> agree_on_failure(Communicator& world, std::exception_ptr error) {
  const std::vector<std::string> failures = world.gather(failure_text(error));
  return settle(world, error, first_failure(failures));
}

std::optional<SweepRun> run_sweep_over(Communicator& world, const Scenario& scenario,
                                       evaluation::SweepOptions options, int& exit_code) {
  const auto start = std::chrono::steady_clock::now();
  const int rank = world.rank(), ranks = world.size();
  // Every process must sweep the same scenario: points from another (another file given to
  // one process, the same path holding other bytes on another host) would be merged into a
  // wrong answer. Rank 0 compares the digests before any point runs.
  {
    const std::vector<std::string> digests = world.gather(inputs_digest(scenario, options));
    std::pair<int, std::string> differs{-1, ""};
    for (int r = 1; rank == 0 && r < ranks && differs.first < 0; ++r)
      if (digests[r] != digests[0])
        differs = {r, "invalid\nit sweeps other inputs than process 0: the scenario, the "
                      "files it reads or the options differ (digest " + digests[r] +
                      ", process 0's " + digests[0] + "); give every process the same "
                      "files and options"};
    if (auto code = settle(world, nullptr, differs)) return exit_code = *code, std::nullopt;
  }
  options.evaluates = [rank, ranks](size_t i) { return static_cast<int>(i % ranks) == rank; };
  options.trace_best = false;
  // Rank 0 shows every process's points in its progress; the others send theirs to it.
  const auto show = options.on_progress;
  const size_t total_points = evaluation::sweep_points(scenario).size();
  ProgressSum sum(ranks);
  size_t sent_done = static_cast<size_t>(-1), own_done = 0;
  options.on_progress = [&](const evaluation::SweepProgress& p) {
    own_done = p.done;
    if (rank != 0) {
      if (p.done != sent_done || p.finished)
        world.send_note(json::array({p.done, p.finished}).dump());
      sent_done = p.done;
      return;
    }
    sum.take(world);
    sum.set_own(p.done, p.finished);
    if (show) show({sum.done(), total_points, false});
  };

  // This process's share; a failure is kept for the exchange, where every process learns it.
  std::exception_ptr error;
  SweepRun mine;
  try {
    mine = run_sweep(scenario, options);
  } catch (...) {
    error = std::current_exception();
    if (rank != 0) world.send_note(json::array({0, true}).dump());
  }
  if (rank == 0) {
    sum.set_own(own_done, true);
    for (sum.take(world); !sum.all_finished(); sum.take(world)) {
      if (show) show({sum.done(), total_points, false});
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }

  // The points to rank 0: [[index, encoded point], …], or the failure.
  json share = json::array();
  if (!error)
    for (size_t i = 0; i < mine.points.size(); ++i)
      if (options.evaluates(i))
        share.push_back({i, evaluation::encode_sweep_point(mine.points[i])});
  const std::vector<std::string> payloads =
      world.gather(error ? "E" + failure_text(error) : "P" + share.dump());
  std::pair<int, std::string> first{-1, ""};
  SweepRun run;
  if (rank == 0) {
    run.points = evaluation::sweep_points(scenario);
    for (int r = 0; r < ranks && first.first < 0; ++r) {
      if (payloads[r][0] == 'E') {
        first = {r, payloads[r].substr(1)};
        break;
      }
      try {
        for (const json& entry : json::parse(payloads[r].substr(1))) {
          const size_t i = entry.at(0).get<size_t>();
          run.points.at(i) = evaluation::decode_sweep_point(
              entry.at(1).get<std::string>(), "sweep point from process " + std::to_string(r));
        }
      } catch (...) {
        first = {r, failure_text(std::current_exception())};
      }
    }
  }
  if (auto code = settle(world, error, first)) return exit_code = *code, std::nullopt;

  // The best point, as the sweep's answer ranks it (run_sweep's ranking too), and its trace
  // from the process that simulated it.
  if (rank == 0) {
    if (show) show({total_points, total_points, true});
    run.best = evaluation::answer_sweep(run.points, options.max_time_s).best;
  }
  const std::string best_text = world.broadcast(run.best ? std::to_string(*run.best) : "");
  std::string trace;
  error = nullptr;
  if (!best_text.empty() && static_cast<int>(std::stoul(best_text) % ranks) == rank) {
    try {
      const size_t best = std::stoul(best_text);
      trace = evaluation::sweep_point_trace(scenario, mine.points.at(best), options.evaluation);
    } catch (...) {
      error = std::current_exception();
    }
  }
  const std::vector<std::string> traces =
      world.gather(error ? "E" + failure_text(error) : "T" + trace);
  if (rank == 0) {
    for (int r = 0; r < ranks && first.first < 0; ++r)
      if (traces[r][0] == 'E') first = {r, traces[r].substr(1)};
    if (run.best) run.best_trace_json = traces[*run.best % ranks].substr(1);
  }
  if (auto code = settle(world, error, first)) return exit_code = *code, std::nullopt;
  if (rank != 0) return std::nullopt;
  run.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return run;
}

}  // namespace symmesh::cli
