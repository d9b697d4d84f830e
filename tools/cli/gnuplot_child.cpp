#include "tools/cli/gnuplot_child.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include "core/errors.hpp"
#include "tools/cli/interrupt_cleanup.hpp"

namespace symmesh::cli {

double gnuplot_time_limit_s() {
  const char* text = std::getenv("SYMMESH_GNUPLOT_TIME_LIMIT");
  if (!text || !*text) return 60;
  char* end = nullptr;
  const double value = std::strtod(text, &end);
  if (*end != '\0' || !(value > 0) || value > 1e6)
    throw InvalidArgument("expected a number of seconds > 0, got '" + std::string(text) + "'",
                          "SYMMESH_GNUPLOT_TIME_LIMIT");
  return value;
}

GnuplotRun run_gnuplot(const std::string& gnuplot, const std::string& dir,
                       const std::string& script, const std::string& assignments) {
  GnuplotRun run;
  const double limit_s = gnuplot_time_limit_s();
  char log_path[] = "/tmp/symmesh_gnuplot_XXXXXX";
  const int log_fd = mkstemp(log_path);
  if (log_fd < 0) return run;
  remember_path(log_path);
  const pid_t pid = fork();
  if (pid == 0) {
    // Its own process group, so that what it starts is killed with it.
    setpgid(0, 0);
    // gnuplot dies with symmesh, even when SIGKILL leaves no handler to kill it.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() == 1) _exit(127);  // the parent is already gone
    const int null_fd = open("/dev/null", O_RDWR);
    dup2(null_fd, STDIN_FILENO);
    dup2(null_fd, STDOUT_FILENO);
    dup2(log_fd, STDERR_FILENO);
    if (chdir(dir.c_str()) != 0) _exit(127);
    execl(gnuplot.c_str(), "gnuplot", "-e", assignments.c_str(), script.c_str(), nullptr);
    _exit(127);
  }
  int status = -1;
  if (pid > 0) {
    // In the parent too: the group exists before either goes on, whichever runs first.
    setpgid(pid, pid);
    remember_child(pid);  // its group killed on SIGINT/SIGTERM/SIGHUP (interrupt_cleanup)
    const auto deadline = std::chrono::steady_clock::now() +
                          std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                              std::chrono::duration<double>(limit_s));
    // Polled without reaping (WNOWAIT): until gnuplot is reaped its pid, and so its group
    // id, cannot be reused, so the group kill below reaches only what it started.
    for (;;) {
      siginfo_t info{};
      const int polled = waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT);
      if (polled < 0 && errno == EINTR) continue;
      if (polled < 0 || info.si_pid == pid) break;
      if (std::chrono::steady_clock::now() >= deadline) {
        kill(pid, SIGKILL);
        run.timed_out = true;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    kill(-pid, SIGKILL);  // what it started and left running (nothing, normally)
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    forget_child(pid);
  }
  close(log_fd);
  std::ifstream in(log_path);
  std::stringstream text;
  text << in.rdbuf();
  run.errors = text.str();
  std::remove(log_path);
  forget_path(log_path);
  if (pid > 0 && !run.timed_out) run.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

}  // namespace symmesh::cli
