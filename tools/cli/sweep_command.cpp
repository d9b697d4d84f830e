// symmesh sweep: the capacity-planning answer. Every node count x mesh shape of the
// scenario's `sweep:` is evaluated as `symmesh simulate` would (several at once), and the
// smallest cluster meeting `objective.max_time` is reported with its strategies; the
// tables, CSV, JSON, plots and the best point's trace go to an output folder.
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <thread>

#include "core/errors.hpp"
#include "core/library_collectives.hpp"
#include "core/trace_writer.hpp"
#include "evaluation/host_memory.hpp"
#include "evaluation/scenario_evaluation.hpp"
#include "evaluation/training_layouts.hpp"
#include "reports/layouts_report.hpp"
#include "reports/sweep_report.hpp"
#include "scenario/scenario_loader.hpp"
#include "tools/cli/atomic_file.hpp"
#include "tools/cli/command.hpp"
#include "tools/cli/interrupt_cleanup.hpp"
#include "tools/cli/mpi_launch.hpp"
#include "tools/cli/mpi_sweep.hpp"
#include "tools/cli/sweep_plots.hpp"
#include "tools/cli/sweep_progress.hpp"

namespace symmesh::cli {

using namespace evaluation;
namespace {

namespace fs = std::filesystem;

struct SweepArgs {
  std::string scenario;
  std::string out;
  int jobs = 0;             // 0: one per core
  double time_limit_s = 0;  // per point; 0: none
  bool no_fuse = false;
  std::string collectives;  // --collectives; empty: the default
};

// "sweep-<name>" with anything but letters, digits, '.', '_' and '-' replaced, and at most
// 100 characters of the name (a file name may have 255 bytes).
std::string default_out_dir(const std::string& scenario_name) {
  std::string out = "sweep-";
  for (char c : scenario_name.substr(0, 100))
    out +=
        (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-') ? c : '-';
  return out;
}

// The output folder this sweep made: removed again, if still empty, when the sweep ends
// without writing its results (refused input, every point skipped), so that nothing is
// left behind. A folder that existed before is never touched.
class MadeFolder {
 public:
  MadeFolder(std::string dir, bool made) : dir_(std::move(dir)), made_(made) {
    if (made_) remember_path(dir_);  // rmdir'ed on SIGINT/SIGTERM too (interrupt_cleanup)
  }
  ~MadeFolder() {
    std::error_code ec;
    if (made_ && !kept_) fs::remove(dir_, ec);  // fails, harmlessly, on a non-empty folder
    if (made_) forget_path(dir_);
  }
  MadeFolder(const MadeFolder&) = delete;
  MadeFolder& operator=(const MadeFolder&) = delete;
  void keep() {
    kept_ = true;
    if (made_) forget_path(dir_);
  }

 private:
  std::string dir_;
  bool made_ = false, kept_ = false;
};

// Holds an exclusive lock on the output folder for the command's life: two sweeps into
// one folder would leave the summary of one beside the results of the other.
class FolderLock {
 public:
  explicit FolderLock(const std::string& dir) {
    fd_ = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd_ < 0) return;  // prepare_out_dir says why the folder is unusable
    if (flock(fd_, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK)
      throw InvalidArgument("another symmesh sweep is writing into '" + dir +
                                "'; wait for it to finish or give another --out",
                            "--out");
  }
  ~FolderLock() {
    if (fd_ >= 0) close(fd_);  // closing releases the lock
  }
  FolderLock(const FolderLock&) = delete;
  FolderLock& operator=(const FolderLock&) = delete;

 private:
  int fd_ = -1;
};

// Creates the folder and checks that a file can be written in it, before any work; true
// when it made the folder. `what` names where the folder came from in messages.
bool prepare_out_dir(const std::string& dir, const std::string& what) {
  std::error_code ec;
  const bool existed = fs::exists(dir, ec);
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir, ec))
    throw InvalidArgument("cannot create the output folder '" + dir + "'" +
                              (ec ? ": " + ec.message() : std::string(": not a folder")),
                          what);
  const fs::path probe = fs::path(dir) / ".symmesh-sweep-write-test";
  const bool writable = static_cast<bool>(std::ofstream(probe));
  fs::remove(probe, ec);
  if (!writable) {
    if (!existed) fs::remove(dir, ec);
    throw InvalidArgument("the output folder '" + dir + "' is not writable", what);
  }
  return !existed;
}

std::string without_trailing_slashes(std::string dir) {
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  return dir;
}

// "Outputs in DIR/: …", the files every sweep writes (the images when gnuplot rendered them,
// else their data and scripts), and why the plots were not rendered, if they were not.
void print_outputs(const std::string& dir, const PlotOutput& plots) {
  std::cout << "Outputs in " << without_trailing_slashes(dir)
            << "/: summary.md, results.csv, results.json, best-trace.json, "
            << (plots.rendered ? "step-time.svg/.png, breakdown.svg/.png"
                               : "step-time.dat/.gp, breakdown.dat/.gp")
            << "\n";
  if (!plots.note.empty()) std::cerr << "symmesh sweep: " << plots.note << "\n";
}

// A sweep of training layouts (`sweep.layouts`): every layout priced at each node count, the
// fastest simulated, as `symmesh layouts --simulate K` reports them; the report, CSV and
// JSON staged into the output folder together.
int run_layouts_sweep(const Scenario& scenario, const std::string& dir, const std::string& what,
                      MadeFolder& made) {
  const std::vector<std::string> inputs = files_read_for(scenario);
  for (const char* name : {"summary.md", "results.csv", "results.json"})
    check_output_path((fs::path(dir) / name).string(), what, inputs);
  for (const std::string& name : sweep_plot_file_names())
    check_output_path((fs::path(dir) / name).string(), what, inputs);
  check_output_path((fs::path(dir) / "best-trace.json").string(), what, inputs);
  const TrainingLayoutsRun run = sweep_training_layouts(scenario);
  std::ostringstream text;
  reports::print_layouts(text, scenario, run, "symmesh sweep");
  StagedOutputs staged("--out");
  staged.stage((fs::path(dir) / "results.csv").string(), reports::layouts_csv(run));
  staged.stage((fs::path(dir) / "results.json").string(),
               reports::layouts_json(scenario, run).dump(2) + "\n");
  // The report as an indented code block: no line of it can end the block or be markup.
  std::string summary = "# symmesh sweep: " + reports::markdown_text(scenario.name) + "\n\n";
  std::istringstream lines(text.str());
  for (std::string line; std::getline(lines, line);) summary += "    " + line + "\n";
  staged.stage((fs::path(dir) / "summary.md").string(), summary);
  const PlotOutput plots = write_layouts_plots(dir, scenario, run, staged);
  // The best point's trace, as any sweep writes it: the answer's layout (else the fastest
  // of the largest count), one data-parallel replica's simulated pipeline.
  std::string trace_note;
  std::string trace = empty_chrome_trace();
  const TrainingLayoutsAtSize* best = run.answer ? &run.sizes[*run.answer] : nullptr;
  if (!best)
    for (const TrainingLayoutsAtSize& size : run.sizes)
      if (size.answer_layout()) best = &size;
  if (best) {
    std::string why;
    std::string json = training_step_trace_json(*scenario.model, scenario.model->global_batch,
                                                scenario.cluster, *best->answer_layout(), why);
    if (json.empty())
      trace_note = "best-trace.json is empty: " + why;
    else
      trace = std::move(json);
  }
  staged.stage((fs::path(dir) / "best-trace.json").string(), trace);
  staged.commit();
  made.keep();
  std::cout << text.str();
  print_outputs(dir, plots);
  if (!trace_note.empty()) std::cerr << "symmesh sweep: " << trace_note << "\n";
  return 0;
}

// This process's share of the host's cores and memory: all of them, or under mpirun an
// equal part for each of the `ranks_on_node` processes sharing this machine.
void share_host(SweepOptions& options, int jobs, int ranks_on_node) {
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  options.jobs = jobs > 0 ? jobs : std::max(1, cores / ranks_on_node);
  if (ranks_on_node <= 1) return;
  std::optional<HostMemory> memory = host_memory();
  if (!memory) return;
  memory->available_bytes /= ranks_on_node;
  memory->source = (memory->source.empty() ? "MemAvailable" : memory->source) + ", shared by " +
                   std::to_string(ranks_on_node) + " processes of this node";
  options.evaluation.host_memory = memory;
}

// The sweep in this process (`world` null) or as one process of an MPI job: then every
// process loads the scenario and evaluates its share of the points, and rank 0 alone
// prepares the output folder, prints and writes (tools/cli/mpi_sweep.hpp).
int run_sweep_in(const SweepArgs& args, Communicator* world, int ranks_on_node) {
  const bool writes = !world || world->rank() == 0;
  std::optional<Scenario> loaded;
  std::string dir, what;
  std::optional<MadeFolder> made;
  std::optional<FolderLock> lock;
  std::exception_ptr error;
  try {
    loaded = load_scenario(args.scenario);
    if (!args.collectives.empty())
      loaded->cluster =
          cluster_for_collectives(loaded->cluster, parse_collectives(args.collectives));
    if (writes) {
      dir = args.out.empty() ? default_out_dir(loaded->name) : args.out;
      what = args.out.empty()
                 ? "the default output folder (named after the scenario; --out picks one)"
                 : "--out";
      made.emplace(dir, prepare_out_dir(dir, what));
      lock.emplace(dir);
      if (!(loaded->sweep && loaded->sweep->layouts)) {
        // No output may land on the scenario or its cluster files (a scenario kept in its
        // own output folder as results.json, say), nor on anything but a regular file.
        std::vector<std::string> outputs{"summary.md", "results.csv", "results.json",
                                         "best-trace.json"};
        for (const std::string& name : sweep_plot_file_names()) outputs.push_back(name);
        const std::vector<std::string> inputs = files_read_for(*loaded);
        for (const std::string& name : outputs)
          check_output_path((fs::path(dir) / name).string(), what, inputs);
      }
    }
  } catch (...) {
    if (!world) throw;
    error = std::current_exception();
  }
  if (world)
    if (const std::optional<int> code = agree_on_failure(*world, error)) return *code;
  const Scenario& scenario = *loaded;
  if (scenario.sweep && scenario.sweep->layouts) {
    // Priced in one process: the layouts are ranked by an analytic estimate, not simulated
    // point by point.
    if (!writes) return 0;
    if (world && world->size() > 1)
      std::cerr << "symmesh sweep: note: a sweep of layouts runs in process 0 only\n";
    return run_layouts_sweep(scenario, dir, what, *made);
  }
  if (writes && !scenario.sweep)
    std::cerr << "symmesh sweep: note: " << reports::sweep_scope_text(scenario) << "\n";

  SweepOptions options;
  share_host(options, args.jobs, ranks_on_node);
  const bool terminal = isatty(STDERR_FILENO) != 0;
  std::optional<ProgressBar> bar;
  options.on_progress = [&bar, terminal](const evaluation::SweepProgress& p) {
    if (!bar) bar.emplace(terminal, p.total);
    if (p.finished)
      bar->finish();
    else
      bar->show(p.done);
  };
  options.evaluation.wall_clock_limit_s = args.time_limit_s;
  options.evaluation.fuse = !args.no_fuse;
  if (scenario.objective) options.max_time_s = scenario.objective->max_time_s;
  std::optional<SweepRun> ran;
  if (world) {
    int exit_code = 0;
    ran = run_sweep_over(*world, scenario, options, exit_code);
    if (!ran) return exit_code;  // rank 0 writes; a failure, rank 0 says it
  } else {
    ran = run_sweep(scenario, options);
  }
  const SweepRun& run = *ran;
  const SweepAnswer answer = answer_sweep(run.points, options.max_time_s);
  if (!answer.best) throw_all_skipped(run, scenario.path);

  // The whole set is staged first and renamed into place together: a sweep that fails
  // while writing leaves the previous set whole, never a mix of two runs.
  reports::SweepOutcome outcome{scenario, run, answer, {}};
  StagedOutputs staged("--out");
  auto write = [&](const std::string& name, const std::string& text) {
    staged.stage((fs::path(dir) / name).string(), text);
    outcome.files.push_back(name);
  };
  write("results.csv", reports::sweep_results_csv(outcome));
  write("results.json", reports::sweep_results_json(outcome).dump(2) + "\n");
  write("best-trace.json",
        run.best_trace_json.empty() ? empty_chrome_trace() : run.best_trace_json);
  const PlotOutput plots = write_sweep_plots(dir, outcome, staged);
  outcome.files.insert(outcome.files.end(), plots.files.begin(), plots.files.end());
  staged.stage((fs::path(dir) / "summary.md").string(), reports::sweep_summary_markdown(outcome));
  staged.commit();
  made->keep();

  std::cout << reports::sweep_terminal_text(outcome);
  print_outputs(dir, plots);
  return 0;
}

int run_sweep_command(const SweepArgs& args) {
  const MpiLaunch launch = mpi_launch();
  if (!launch.launched || (!mpi_built() && launch.world_size == 1))
    return run_sweep_in(args, nullptr, 1);
  // N processes without MPI (or without its module) would run N identical sweeps into one
  // folder: refused, said once, by rank 0, whose exit code mpirun's is; the others exit 0
  // (a non-zero exit makes mpirun kill rank 0, maybe before it has said why).
  std::unique_ptr<Communicator> world;
  try {
    world = open_mpi("symmesh sweep");
  } catch (const Unavailable&) {
    if (launch.rank != 0) return 0;
    throw;
  }
  return run_sweep_in(args, world.get(), launch.ranks_on_node);
}

}  // namespace

void add_sweep_command(CLI::App& app, CommandAction& selected) {
  auto args = std::make_shared<SweepArgs>();
  CLI::App* cmd = app.add_subcommand(
      "sweep",
      "Evaluate a scenario over its sweep of node counts and mesh shapes; report the smallest "
      "cluster meeting its objective");
  cmd->add_option("scenario", args->scenario, "scenario file (YAML)")->required();
  cmd->add_option("--out", args->out,
                  "output folder (default: sweep-<scenario name> in the current folder)");
  cmd->add_option(
         "--jobs,-j", args->jobs,
         "points simulated at once, per process under mpirun (default: one per core; under "
         "mpirun, the node's cores shared among its processes)")
      ->check(positive_number());
  cmd->add_flag("--no-fuse", args->no_fuse,
                "price and run every matmul unfused (no overlapped all-gather + mm), to compare");
  cmd->add_option("--collectives", args->collectives, kCollectivesHelp);
  cmd->add_option("--time-limit", args->time_limit_s,
                  "wall-clock limit per point's simulation, in seconds (0: none); a point "
                  "past it is skipped with that reason")
      ->check(non_negative_number());
  cmd->callback([args, &selected] { selected = [args] { return run_sweep_command(*args); }; });
}

}  // namespace symmesh::cli
