// The running executable's folder: CMake says where it put this test program
// ($<TARGET_FILE_DIR:core_tests>, SYMMESH_CORE_TESTS_DIR), an independent source.
#include "core/executable_dir.hpp"

#include <gtest/gtest.h>

#include <filesystem>

namespace symmesh {
namespace {

TEST(ExecutableDir, IsTheFolderCMakeBuiltThisTestIn) {
  EXPECT_TRUE(std::filesystem::equivalent(executable_dir(), SYMMESH_CORE_TESTS_DIR));
}

}  // namespace
}  // namespace symmesh
