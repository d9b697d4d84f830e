#pragma once
// The sweep's progress bar on stderr, redrawn in place:
//   sweep [########................] 7/15 points  1.2 s elapsed  ~1.4 s left
// The estimate assumes the remaining points cost what the finished ones did on average.
// Disabled (draws nothing) when stderr is not a terminal. The sweep reports progress at
// least once a second while it waits (evaluation/sweep_runner.hpp), so the elapsed time
// moves during long points; there is no ticker thread (a sweep forks, and forks only from
// a single-threaded process).
#include <chrono>
#include <cstddef>

namespace symmesh::cli {

class ProgressBar {
 public:
  ProgressBar(bool enabled, size_t total);
  ~ProgressBar();
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  void show(size_t done);  // `done` points finished; the elapsed time updated
  // Replaces the bar with "sweep: N points in T"; idempotent.
  void finish();

 private:
  void draw();

  const bool enabled_;
  const size_t total_;
  const std::chrono::steady_clock::time_point start_;
  size_t done_ = 0;
  bool finished_ = false;
};

}  // namespace symmesh::cli
