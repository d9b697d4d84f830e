#include "tools/cli/sweep_progress.hpp"

#include <cstdio>
#include <string>

namespace symmesh::cli {
namespace {

std::string seconds_text(double s) {
  char buffer[32];
  if (s < 60)
    std::snprintf(buffer, sizeof buffer, "%.1f s", s);
  else
    std::snprintf(buffer, sizeof buffer, "%dm%02ds", static_cast<int>(s) / 60,
                  static_cast<int>(s) % 60);
  return buffer;
}

}  // namespace

ProgressBar::ProgressBar(bool enabled, size_t total)
    : enabled_(enabled), total_(total), start_(std::chrono::steady_clock::now()) {
  if (enabled_) draw();
}

ProgressBar::~ProgressBar() {
  finish();
}

void ProgressBar::show(size_t done) {
  done_ = done;
  if (enabled_ && !finished_) draw();
}

void ProgressBar::finish() {
  if (!enabled_ || finished_) return;
  finished_ = true;
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  std::fprintf(stderr, "\r\033[Ksweep: %zu points in %s\n", total_, seconds_text(elapsed).c_str());
  std::fflush(stderr);
}

void ProgressBar::draw() {
  constexpr size_t kWidth = 24;
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const size_t filled = total_ ? kWidth * done_ / total_ : kWidth;
  std::string line = "\r\033[Ksweep [" + std::string(filled, '#') +
                     std::string(kWidth - filled, '.') + "] " + std::to_string(done_) + "/" +
                     std::to_string(total_) + " points  " + seconds_text(elapsed) + " elapsed";
  if (done_ > 0 && done_ < total_)
    line += "  ~" + seconds_text(elapsed / done_ * (total_ - done_)) + " left";
  std::fputs(line.c_str(), stderr);
  std::fflush(stderr);
}

}  // namespace symmesh::cli
