#include "sim/forked_run.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>

#include "core/errors.hpp"
#include "sim/result_codec.hpp"
#include "sim/simulation.hpp"

namespace symmesh::sim {
namespace {

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

int wait_for(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

}  // namespace

RunResult run_simulation(const Program& program, const ClusterSpec& cluster,
                         const SimOptions& options) {
  options.validate();
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0)
    throw BackendError(std::string("pipe failed: ") + std::strerror(errno), "run_simulation");
  std::fflush(nullptr);  // nothing buffered is written twice
  const pid_t pid = fork();
  if (pid < 0) {
    const int err = errno;
    close(fds[0]);
    close(fds[1]);
    throw BackendError(std::string("fork failed: ") + std::strerror(err), "run_simulation");
  }
  if (pid == 0) {
    close(fds[0]);
    child_main(fds[1], program, cluster, options);
  }
  close(fds[1]);

  using Clock = std::chrono::steady_clock;
  const bool limited = options.wall_clock_limit_s > 0;
  const auto deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(
                         std::chrono::duration<double>(options.wall_clock_limit_s));
  std::string message;
  char buf[1 << 16];
  for (;;) {
    int timeout_ms = -1;
    if (limited) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      timeout_ms = static_cast<int>(std::max<int64_t>(0, left.count()));
    }
    pollfd pfd{fds[0], POLLIN, 0};
    const int ready = poll(&pfd, 1, timeout_ms);
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) {  // the wall-clock limit passed
      kill(pid, SIGKILL);
      wait_for(pid);
      close(fds[0]);
      throw Timeout("simulation exceeded its wall-clock limit of " +
                        seconds_text(options.wall_clock_limit_s) + " s",
                    "run_simulation");
    }
    const ssize_t n = read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // EOF (or a read error, judged by the child's status below)
    message.append(buf, static_cast<size_t>(n));
  }
  close(fds[0]);
  const int status = wait_for(pid);
  if (WIFSIGNALED(status))
    throw BackendError("the simulation process died from signal " +
                           std::to_string(WTERMSIG(status)) + " (" + strsignal(WTERMSIG(status)) +
                           ")",
                       "run_simulation");
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw BackendError(
        "the simulation process exited with status " + std::to_string(WEXITSTATUS(status)),
        "run_simulation");
  RunResult result = decode_message(message);
  attach_labels(program, result);
  return result;
}

}  // namespace symmesh::sim
