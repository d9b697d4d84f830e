// Where a backend module is looked for (evaluation/module_search.hpp), on folders laid out
// here as the build and `cmake --install` lay them out.
#include "evaluation/module_search.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <vector>

namespace symmesh::evaluation {
namespace {

namespace fs = std::filesystem;

class ModuleSearchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/symmesh_modules_XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  fs::path touch(const std::string& name) const {
    const fs::path path = dir_ / name;
    fs::create_directories(path.parent_path());
    std::ofstream(path) << "";
    return path;
  }
  ModuleSearch search(const std::string& env, const std::string& exe_dir) const {
    return search_module(env, dir_ / exe_dir, "../lib/symmesh", dir_ / "build",
                         "libsymmesh_sim.so");
  }

  fs::path dir_;
};

TEST_F(ModuleSearchTest, NextToTheExecutableFirst) {
  touch("build/libsymmesh_sim.so");
  EXPECT_EQ(search("", "build").found, dir_ / "build/libsymmesh_sim.so");
}

TEST_F(ModuleSearchTest, AnInstallTreesLibSymmesh) {
  touch("prefix/bin/symmesh");
  touch("prefix/lib/symmesh/libsymmesh_sim.so");
  EXPECT_EQ(search("", "prefix/bin").found, dir_ / "prefix/lib/symmesh/libsymmesh_sim.so");
}

TEST_F(ModuleSearchTest, TheBuildFolderLast) {
  // A test program under build/tests: the module is in build/.
  touch("build/libsymmesh_sim.so");
  touch("build/tests/sim_tests");
  EXPECT_EQ(search("", "build/tests").found, dir_ / "build/libsymmesh_sim.so");
}

TEST_F(ModuleSearchTest, TheEnvironmentAsGivenEvenWhenMissing) {
  touch("build/libsymmesh_sim.so");
  const ModuleSearch found = search((dir_ / "nowhere.so").string(), "build");
  EXPECT_EQ(found.found, dir_ / "nowhere.so");
  EXPECT_EQ(found.looked, std::vector<fs::path>{dir_ / "nowhere.so"});
}

TEST_F(ModuleSearchTest, NoneFoundListsEveryPlaceInOrder) {
  touch("prefix/bin/symmesh");
  const ModuleSearch found = search("", "prefix/bin");
  EXPECT_TRUE(found.found.empty());
  const std::vector<fs::path> expected{dir_ / "prefix/bin/libsymmesh_sim.so",
                                       dir_ / "prefix/lib/symmesh/libsymmesh_sim.so",
                                       dir_ / "build/libsymmesh_sim.so"};
  EXPECT_EQ(found.looked, expected);
}

}  // namespace
}  // namespace symmesh::evaluation
