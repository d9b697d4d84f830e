#include "sim/forked_run.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "core/errors.hpp"
#include "sim/result_codec.hpp"
#include "sim/simulation.hpp"

namespace symmesh::sim {
namespace {

using Clock = std::chrono::steady_clock;

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", s);
  return buf;
}

// In the child: runs the simulation, writes the message, leaves without running the
// parent's atexit handlers or flushing its stdio buffers (they belong to the parent).
[[noreturn]] void child_main(int fd, const Program& program, const ClusterSpec& cluster,
                             const SimOptions& options) {
  std::string message;
  try {
    message = encode_result(simulate_in_this_process(program, cluster, options));
  } catch (...) {
    message = encode_error(std::current_exception());
  }
  const char* p = message.data();
  size_t left = message.size();
  while (left > 0) {
    const ssize_t n = write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) _exit(3);
    p += n;
    left -= static_cast<size_t>(n);
  }
  close(fd);
  _exit(0);
}

void close_other_descriptors(int keep) {
  const auto below = keep > 3 ? close_range(3, static_cast<unsigned>(keep - 1), 0) : 0;
  const auto above = close_range(static_cast<unsigned>(std::max(keep + 1, 3)), ~0U, 0);
  if (below == 0 && above == 0) return;
  // A kernel before 5.9 has no close_range: one by one, as far as the limit goes.
  const long limit = std::min(sysconf(_SC_OPEN_MAX), 65536L);
  for (int fd = 3; fd < limit; ++fd)
    if (fd != keep) close(fd);
}

int wait_for(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

}  // namespace

SimulationProcess::SimulationProcess(const Program& program, const ClusterSpec& cluster,
                                     const SimOptions& options)
    : limit_s_(options.wall_clock_limit_s) {
  options.validate();
  deadline_ = Clock::now() +
              std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(limit_s_));
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0)
    throw BackendError(std::string("pipe failed: ") + std::strerror(errno), "run_simulation");
  std::fflush(nullptr);  // nothing buffered is written twice
  const pid_t parent = getpid();
  pid_ = fork();
  if (pid_ < 0) {
    const int err = errno;
    close(fds[0]);
    close(fds[1]);
    throw BackendError(std::string("fork failed: ") + std::strerror(err), "run_simulation");
  }
  if (pid_ == 0) {
    // The child dies with its parent, however the parent ends (SIGKILL included): an
    // orphaned simulation would run on with gigabytes of memory. The parent may have died
    // between fork and prctl; then the child has been re-parented already.
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent) _exit(4);
    // Nothing of the parent's but the pipe: an inherited descriptor would keep the
    // parent's file locks (a sweep's lock on its output folder) and files alive.
    close_other_descriptors(fds[1]);
    child_main(fds[1], program, cluster, options);
  }
  close(fds[1]);
  fd_ = fds[0];
  fcntl(fd_, F_SETFL, fcntl(fd_, F_GETFL) | O_NONBLOCK);
}

SimulationProcess::~SimulationProcess() {
  if (pid_ > 0) kill(pid_, SIGKILL);
  reap();
}

void SimulationProcess::reap() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
  if (pid_ > 0) wait_for(pid_);
  pid_ = -1;
}

int SimulationProcess::ms_to_deadline() const {
  if (limit_s_ <= 0) return -1;
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline_ - Clock::now());
  return static_cast<int>(std::max<int64_t>(0, left.count()));
}

bool SimulationProcess::finished() const {
  return fd_ < 0 || ms_to_deadline() == 0;
}

void SimulationProcess::read_available() {
  char buf[1 << 16];
  while (fd_ >= 0) {
    const ssize_t n = read(fd_, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (n <= 0) {  // EOF (or a read error, judged by the child's status in result())
      close(fd_);
      fd_ = -1;
      return;
    }
    message_.append(buf, static_cast<size_t>(n));
  }
}

RunResult SimulationProcess::result() {
  if (pid_ < 0) throw BackendError("the result was already taken", "SimulationProcess::result");
  if (fd_ >= 0) {  // the wall-clock limit passed before the child finished
    kill(pid_, SIGKILL);
    reap();
    throw Timeout("simulation exceeded its wall-clock limit of " + seconds_text(limit_s_) + " s",
                  "run_simulation");
  }
  const int status = wait_for(pid_);
  pid_ = -1;
  if (WIFSIGNALED(status))
    throw BackendError("the simulation process died from signal " +
                           std::to_string(WTERMSIG(status)) + " (" + strsignal(WTERMSIG(status)) +
                           ")",
                       "run_simulation");
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw BackendError(
        "the simulation process exited with status " + std::to_string(WEXITSTATUS(status)),
        "run_simulation");
  RunResult result = decode_message(message_);
  message_.clear();
  return result;
}

void wait_for_any(const std::vector<SimulationProcess*>& running, int max_wait_ms) {
  std::vector<pollfd> fds;
  std::vector<SimulationProcess*> polled;
  int timeout_ms = max_wait_ms;
  for (SimulationProcess* p : running) {
    if (p->finished()) return;
    fds.push_back({p->fd_, POLLIN, 0});
    polled.push_back(p);
    const int left = p->ms_to_deadline();
    if (left >= 0) timeout_ms = timeout_ms < 0 ? left : std::min(timeout_ms, left);
  }
  if (fds.empty()) return;
  for (;;) {
    const int ready = poll(fds.data(), fds.size(), timeout_ms);
    if (ready < 0 && errno == EINTR) continue;
    break;
  }
  for (size_t i = 0; i < fds.size(); ++i)
    if (fds[i].revents != 0) polled[i]->read_available();
}

RunResult run_simulation(const Program& program, const ClusterSpec& cluster,
                         const SimOptions& options) {
  SimulationProcess process(program, cluster, options);
  while (!process.finished()) wait_for_any({&process}, -1);
  return process.result();
}

}  // namespace symmesh::sim
