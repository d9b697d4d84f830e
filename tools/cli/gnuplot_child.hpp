#pragma once
// gnuplot as a child process of `symmesh sweep`, with a time limit. A gnuplot that never
// exits (a script or a build that hangs, a terminal it waits on) would hold the sweep
// forever: past the limit it is killed with its process group (anything it started) and
// the sweep goes on without images, saying why (the sweep's other outputs are whole).
#include <string>

namespace symmesh::cli {

// The time limit on one gnuplot run, in seconds: 60, or SYMMESH_GNUPLOT_TIME_LIMIT (a
// number > 0). Throws InvalidArgument naming the variable when it is not one.
double gnuplot_time_limit_s();

struct GnuplotRun {
  int status = -1;         // its exit status; -1 when it could not start or died by a signal
  bool timed_out = false;  // killed at the time limit
  std::string errors;      // what it printed on stderr
};

// Runs `gnuplot -e assignments script` inside `dir` (the assignments already quoted as
// gnuplot data: "data='…'; svg_out='…'"), in a process group of its own that is killed at
// the time limit, on SIGINT, SIGTERM or SIGHUP to symmesh (interrupt_cleanup), or when
// symmesh dies (PR_SET_PDEATHSIG).
GnuplotRun run_gnuplot(const std::string& gnuplot, const std::string& dir,
                       const std::string& script, const std::string& assignments);

}  // namespace symmesh::cli
