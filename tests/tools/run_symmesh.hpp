#pragma once
// Runs the built symmesh binary as a user would and captures what it printed.
#include <sys/wait.h>
#include <unistd.h>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace symmesh::testing {

struct RunResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

inline std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// `args` is a shell fragment, e.g. "plan --op mm --a 6x8 ..."; quote placements yourself.
// `env` is prepended to the command ("LD_DEBUG=files").
inline RunResult run_symmesh(const std::string& args, const std::string& env = "") {
  char out_path[] = "/tmp/symmesh_test_out_XXXXXX";
  char err_path[] = "/tmp/symmesh_test_err_XXXXXX";
  const int out_fd = mkstemp(out_path);
  const int err_fd = mkstemp(err_path);
  close(out_fd);
  close(err_fd);
  const std::string command = (env.empty() ? "" : env + " ") + std::string(SYMMESH_BINARY) + " " +
                              args + " >" + out_path + " 2>" + err_path + " </dev/null";
  const int status = std::system(command.c_str());
  RunResult result;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  result.out = read_file(out_path);
  result.err = read_file(err_path);
  std::remove(out_path);
  std::remove(err_path);
  return result;
}

}  // namespace symmesh::testing
