// The one time-unit rule of every CLI table (reports/text_table.hpp): the unit in which
// the table's largest time is at least 1 and under 1000.
#include "reports/text_table.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace symmesh::reports {
namespace {

TEST(TimeUnit, TheLargestTimeHasOneToThreeDigitsBeforeThePoint) {
  // 999 us is under 1 ms: us, 999.000. 1 ms exactly: ms, 1.000. 20.64 us beside 3.33 us: us.
  EXPECT_EQ(time_unit_for({999e-6, 3e-6}).name, "us");
  EXPECT_EQ(time_unit_for({999e-6}).cell(999e-6), "999.000");
  EXPECT_EQ(time_unit_for({1e-3, 5e-6}).name, "ms");
  EXPECT_EQ(time_unit_for({1e-3, 5e-6}).cell(5e-6), "0.005");
  EXPECT_EQ(time_unit_for({0.9995, 0.1}).name, "ms");
  EXPECT_EQ(time_unit_for({2.5, 0.001}).name, "s");
  EXPECT_EQ(time_unit_for({2.5}).cell(2.5), "2.500");
  EXPECT_EQ(time_unit_for({2.5}).header("total"), "total (s)");
}

TEST(TimeUnit, IgnoresWhatIsNoTime) {
  // Nothing, zeros, NaN (an op never measured) and infinity leave the unit to the rest.
  EXPECT_EQ(time_unit_for({}).name, "us");
  EXPECT_EQ(time_unit_for({0, 0}).name, "us");
  EXPECT_EQ(time_unit_for({NAN, 2e-3, INFINITY}).name, "ms");
}

}  // namespace
}  // namespace symmesh::reports
