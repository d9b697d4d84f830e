#pragma once
// The sweep's progress bar on stderr, redrawn in place:
//   sweep [########................] 7/15 points  1.2 s elapsed  ~1.4 s left
// The estimate assumes the remaining points cost what the finished ones did on average.
// Disabled (draws nothing) when stderr is not a terminal. While enabled, a ticker redraws
// it every second so that the elapsed time moves during long points.
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <thread>

namespace symmesh::cli {

class ProgressBar {
 public:
  ProgressBar(bool enabled, size_t total);
  ~ProgressBar();
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  void advance();  // one more point done
  // Replaces the bar with "sweep: N points in T"; idempotent.
  void finish();

 private:
  void draw_locked();

  const bool enabled_;
  const size_t total_;
  const std::chrono::steady_clock::time_point start_;
  std::mutex mutex_;
  std::condition_variable_any tick_;
  size_t done_ = 0;
  bool finished_ = false;
  std::jthread ticker_;
};

}  // namespace symmesh::cli
