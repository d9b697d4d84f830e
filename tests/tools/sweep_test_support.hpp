#pragma once
// Helpers for the `symmesh sweep` tests: run the binary through a shell (so a test can set
// PATH or the working folder), fresh temporary folders, CSV parsing, tolerant JSON and CSV
// comparison.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/tools/run_symmesh.hpp"

namespace symmesh::testing {

namespace fs = std::filesystem;

inline const std::string kScenarioDir = std::string(SYMMESH_SOURCE_DIR) + "/scenarios/";
inline const std::string kGoldenDir = std::string(SYMMESH_SOURCE_DIR) + "/tests/tools/golden/";

// An empty folder under the temp dir, unique to this process and `name`.
inline fs::path fresh_dir(const std::string& name) {
  const fs::path dir =
      fs::temp_directory_path() / ("symmesh_sweep_" + std::to_string(getpid()) + "_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// A PATH with no gnuplot on it (the binary is called by absolute path).
inline std::string path_without_gnuplot() {
  return fresh_dir("empty_path").string();
}

// `shell_prefix` runs before the binary, e.g. "cd /tmp && PATH=/x"; `args` follow it.
inline RunResult run_sweep_shell(const std::string& shell_prefix, const std::string& args) {
  const fs::path out =
      fs::temp_directory_path() / ("symmesh_sweep_out_" + std::to_string(getpid()) + ".txt");
  const fs::path err =
      fs::temp_directory_path() / ("symmesh_sweep_err_" + std::to_string(getpid()) + ".txt");
  const std::string command = (shell_prefix.empty() ? "" : shell_prefix + " ") + SYMMESH_BINARY +
                              " sweep " + args + " >" + out.string() + " 2>" + err.string() +
                              " </dev/null";
  const int status = std::system(command.c_str());
  RunResult result;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  result.out = read_file(out.string());
  result.err = read_file(err.string());
  fs::remove(out);
  fs::remove(err);
  return result;
}

inline std::string write_temp_scenario(const std::string& name, const std::string& body) {
  const fs::path path = fresh_dir("scenario_" + name) / (name + ".yaml");
  std::ofstream(path) << body;
  return path.string();
}

// scenarios/quickstart.yaml up to its sweep: (no sweep, no objective), its cluster path
// still relative to scenarios/.
inline std::string quickstart_workload() {
  const std::string body = read_file(kScenarioDir + "quickstart.yaml");
  return body.substr(0, body.find("\nsweep:") + 1);
}

// The quickstart's workload with `sweep_and_objective` in place of its own sweep and
// objective, written to a temporary file.
inline std::string quickstart_with(const std::string& name,
                                   const std::string& sweep_and_objective) {
  std::string body = quickstart_workload();
  const std::string relative = "cluster: clusters/";
  body.replace(body.find(relative), relative.size(), "cluster: " + kScenarioDir + "clusters/");
  return write_temp_scenario(name, body + sweep_and_objective);
}

// The quickstart on one node only (its 4 meshes of 8 GPUs, with its 3.5 ms objective): for
// the tests of what the sweep command does with files, locks, jobs and images, which need a
// sweep of a few points, not the quickstart's 15 (a quarter of its time; ~18 s instead of
// ~70 s under ASan).
inline std::string quickstart_on_one_node(const std::string& name) {
  return quickstart_with(name, "sweep: {nodes: [1], mesh: auto}\nobjective: {max_time: 3.5 ms}\n");
}

// `all_reduces` all-reduces of 1 GiB over every GPU of `nodes` DGX H100 nodes (a 1-D
// mesh). On 64 nodes (512 GPUs, 1,024 SimGrid actors) it keeps a simulation busy for
// seconds.
inline std::string all_reduce_scenario(const std::string& name, int all_reduces, int nodes = 64) {
  std::string body = "name: " + name + "\ncluster: {base: " + kScenarioDir +
                     "clusters/dgx-h100.yaml, nodes: " + std::to_string(nodes) +
                     "}\nmesh: {shape: [" + std::to_string(nodes * 8) + "]}\nworkload:\n";
  for (int i = 0; i < all_reduces; ++i)
    body += "  - {name: r" + std::to_string(i) + ", op: all_reduce, bytes: 1 GiB, mesh_dim: 0}\n";
  return write_temp_scenario(name, body);
}

// Whether `pid` runs: it exists and is not a zombie (/proc/<pid>/stat, field 3).
inline bool process_alive(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;
  const size_t close = line.rfind(')');  // the command may hold spaces
  return close != std::string::npos && line.size() > close + 2 && line[close + 2] != 'Z';
}

// Starts the built symmesh with `args` (and `env` set) in the background, its output
// discarded; the caller kills and reaps it.
inline pid_t spawn_symmesh(const std::vector<std::string>& args,
                           const std::vector<std::pair<std::string, std::string>>& env = {}) {
  const pid_t pid = fork();
  if (pid != 0) return pid;
  for (const auto& [name, value] : env) setenv(name.c_str(), value.c_str(), 1);
  const int null_fd = open("/dev/null", O_RDWR);
  dup2(null_fd, STDOUT_FILENO);
  dup2(null_fd, STDERR_FILENO);
  std::vector<char*> argv{const_cast<char*>("symmesh")};
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  execv(SYMMESH_BINARY, argv.data());
  _exit(127);
}

// RFC 4180 rows: quoted cells may hold commas and doubled quotes.
inline std::vector<std::vector<std::string>> parse_csv(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> row;
  std::string cell;
  bool quoted = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        cell += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        cell += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      row.push_back(cell);
      cell.clear();
    } else if (c == '\n') {
      row.push_back(cell);
      rows.push_back(row);
      row.clear();
      cell.clear();
    } else {
      cell += c;
    }
  }
  return rows;
}

// The index of the column named `name` in a CSV's header row (its size when absent), so
// that tests read cells by the documented names, not by position.
inline size_t csv_column(const std::vector<std::vector<std::string>>& rows,
                         const std::string& name) {
  if (rows.empty()) return 0;
  return static_cast<size_t>(std::find(rows[0].begin(), rows[0].end(), name) - rows[0].begin());
}

// A CSV against its golden copy, cell by cell: numbers to 1e-9 relative (as
// expect_same_json), every other cell exactly. One failure lists the differences (the first
// 20), each with its line (1-based, the header being line 1), the row's first cells, the
// column's name and both values, so that a changed golden reads as a diff.
inline void expect_same_csv(const std::string& got_text, const std::string& want_text,
                            const std::string& name) {
  const auto got = parse_csv(got_text), want = parse_csv(want_text);
  ASSERT_FALSE(want.empty()) << name << ": the golden copy is empty";
  ASSERT_FALSE(got.empty()) << name << ": empty";
  const auto joined = [](const std::vector<std::string>& row, size_t cells) {
    std::string out;
    for (size_t c = 0; c < std::min(cells, row.size()); ++c) out += (c ? "," : "") + row[c];
    return out;
  };
  ASSERT_EQ(joined(got[0], got[0].size()), joined(want[0], want[0].size()))
      << name << ": the header differs";
  const size_t op = csv_column(want, "op");  // with the first 3 cells, names a row
  std::ostringstream diff;
  int differences = 0;
  const auto report = [&](const std::string& line) {
    if (++differences <= 20) diff << "\n  " << line;
  };
  for (size_t r = 1; r < std::max(got.size(), want.size()); ++r) {
    const std::string where = "line " + std::to_string(r + 1);
    if (r >= got.size()) {
      report(where + ": missing; the golden copy has " + joined(want[r], want[r].size()));
      continue;
    }
    if (r >= want.size()) {
      report(where + ": extra, not in the golden copy: " + joined(got[r], got[r].size()));
      continue;
    }
    if (got[r].size() != want[r].size()) {
      report(where + ": " + std::to_string(got[r].size()) + " cells, the golden copy has " +
             std::to_string(want[r].size()));
      continue;
    }
    for (size_t c = 0; c < want[r].size(); ++c) {
      const std::string& w = want[r][c];
      const std::string& g = got[r][c];
      char* end = nullptr;
      const double wv = std::strtod(w.c_str(), &end);
      const bool numeric = !w.empty() && *end == '\0';
      bool same = g == w;
      if (!same && numeric) {
        const double gv = std::strtod(g.c_str(), &end);
        same = !g.empty() && *end == '\0' && std::abs(gv - wv) <= 1e-9 * std::abs(wv) + 1e-15;
      }
      if (!same)
        report(where + " (" + joined(want[r], 3) + (op < want[r].size() ? " " + want[r][op] : "") +
               "), " + want[0][c] + ": got '" + g + "', golden '" + w + "'");
    }
  }
  EXPECT_EQ(differences, 0) << name << " differs from its golden copy in " << differences
                            << " place(s)" << (differences > 20 ? ", the first 20:" : ":")
                            << diff.str();
}

// Same structure and values; floating-point values to 1e-9 relative.
inline void expect_same_json(const nlohmann::json& got, const nlohmann::json& want,
                             const std::string& path) {
  if (want.is_number_float()) {
    ASSERT_TRUE(got.is_number()) << path;
    EXPECT_NEAR(got.get<double>(), want.get<double>(), 1e-9 * std::abs(want.get<double>()) + 1e-15)
        << path;
  } else if (want.is_object()) {
    ASSERT_TRUE(got.is_object()) << path;
    EXPECT_EQ(got.size(), want.size()) << path;
    for (auto it = want.begin(); it != want.end(); ++it) {
      ASSERT_TRUE(got.contains(it.key())) << path << "." << it.key();
      expect_same_json(got[it.key()], it.value(), path + "." + it.key());
    }
  } else if (want.is_array()) {
    ASSERT_EQ(got.size(), want.size()) << path;
    for (size_t i = 0; i < want.size(); ++i)
      expect_same_json(got[i], want[i], path + "[" + std::to_string(i) + "]");
  } else {
    EXPECT_EQ(got, want) << path;
  }
}

}  // namespace symmesh::testing
