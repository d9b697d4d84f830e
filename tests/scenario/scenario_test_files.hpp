#pragma once
// Scenario files written to a fresh temporary folder, the error a load throws, and the
// fixture the loader's error tests share.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include "core/errors.hpp"
#include "scenario/scenario_loader.hpp"

namespace symmesh::testing {

class ScenarioFiles {
 public:
  ScenarioFiles() {
    char pattern[] = "/tmp/symmesh_scenario_XXXXXX";
    const char* made = mkdtemp(pattern);
    if (made == nullptr) throw std::runtime_error("mkdtemp failed");
    dir_ = made;
  }
  ~ScenarioFiles() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  ScenarioFiles(const ScenarioFiles&) = delete;
  ScenarioFiles& operator=(const ScenarioFiles&) = delete;

  // Writes `text` to dir/name (creating folders) and returns the full path.
  std::string write(const std::string& name, const std::string& text) const {
    const std::filesystem::path path = std::filesystem::path(dir_) / name;
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path) << text;
    return path.string();
  }
  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
};

// The InvalidArgument `load` throws; a failure (and an empty error) if it throws none.
inline InvalidArgument error_of(const std::function<void()>& load) {
  try {
    load();
  } catch (const InvalidArgument& e) {
    return e;
  }
  ADD_FAILURE() << "expected InvalidArgument";
  return InvalidArgument("", "");
}

// Loads `yaml` as dir/scenario.yaml (beside any other file a test writes there); at() names
// a position in it, at_in() one in another file of the folder.
class ScenarioFileTest : public ::testing::Test {
 protected:
  Scenario load(const std::string& yaml) {
    path_ = files_.write("scenario.yaml", yaml);
    return load_scenario(path_);
  }
  InvalidArgument load_error(const std::string& yaml) {
    path_ = files_.write("scenario.yaml", yaml);
    return error_of([&] { load_scenario(path_); });
  }
  std::string at(int line, int column) const {
    return path_ + ":" + std::to_string(line) + ":" + std::to_string(column);
  }
  std::string at_in(const std::string& file, int line, int column) const {
    return files_.dir() + "/" + file + ":" + std::to_string(line) + ":" + std::to_string(column);
  }

  ScenarioFiles files_;
  std::string path_;
};

}  // namespace symmesh::testing
