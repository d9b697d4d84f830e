#include "sim/simgrid_info.hpp"

#include <gtest/gtest.h>

// The linked SimGrid is the Debian 3.32 the design is written against.
TEST(SimgridInfo, ReportsTheLinkedVersion) {
  EXPECT_EQ(symmesh::sim::simgrid_description().rfind("SimGrid 3.32", 0), 0u)
      << symmesh::sim::simgrid_description();
}
