// Quantities with units (core/quantity.hpp): conversions computed by hand, rejections.
#include "core/quantity.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "core/errors.hpp"

using namespace symmesh;
using ::testing::HasSubstr;

namespace {

// The InvalidArgument a parse throws, so tests can look at its message and where.
template <typename Parse>
InvalidArgument error_of(Parse&& parse) {
  try {
    parse();
  } catch (const InvalidArgument& e) {
    return e;
  }
  ADD_FAILURE() << "expected InvalidArgument";
  return InvalidArgument("", "");
}

}  // namespace

TEST(QuantitySize, DecimalUnitsArePowersOf1000) {
  EXPECT_EQ(parse_size_bytes("1 B"), 1);
  EXPECT_EQ(parse_size_bytes("2 KB"), 2000);
  EXPECT_EQ(parse_size_bytes("3 MB"), 3000000);
  EXPECT_EQ(parse_size_bytes("141 GB"), 141000000000);
  EXPECT_EQ(parse_size_bytes("1 TB"), 1000000000000);
}

TEST(QuantitySize, BinaryUnitsArePowersOf1024) {
  EXPECT_EQ(parse_size_bytes("1 KiB"), 1024);
  EXPECT_EQ(parse_size_bytes("64 MiB"), 67108864);      // 64 * 1048576
  EXPECT_EQ(parse_size_bytes("80 GiB"), 85899345920);   // 80 * 1073741824
  EXPECT_EQ(parse_size_bytes("1 TiB"), 1099511627776);  // 2^40
}

TEST(QuantitySize, FractionsAndExponentsAreExact) {
  EXPECT_EQ(parse_size_bytes("1.5 KB"), 1500);
  EXPECT_EQ(parse_size_bytes("1.1 KB"), 1100);  // 1.1 * 1000 is not 1100 in binary floating point
  EXPECT_EQ(parse_size_bytes("0.5 KiB"), 512);
  EXPECT_EQ(parse_size_bytes("2.5 KiB"), 2560);
  EXPECT_EQ(parse_size_bytes("1e3 B"), 1000);
  EXPECT_EQ(parse_size_bytes("1.000 B"), 1);
  EXPECT_EQ(parse_size_bytes("0 B"), 0);
  EXPECT_EQ(parse_size_bytes("0.000000001 TB"), 1000);
}

TEST(QuantitySize, SpacesAreOptional) {
  EXPECT_EQ(parse_size_bytes("64MiB"), 67108864);
  EXPECT_EQ(parse_size_bytes("  64   MiB  "), 67108864);
}

TEST(QuantitySize, RejectsFractionalBytes) {
  EXPECT_THAT(error_of([] { parse_size_bytes("1.5 B"); }).message(), HasSubstr("whole number"));
  EXPECT_THAT(error_of([] { parse_size_bytes("0.001 KiB"); }).message(),
              HasSubstr("whole number"));  // 1.024 bytes
  EXPECT_THAT(error_of([] { parse_size_bytes("1.0001 KB"); }).message(), HasSubstr("whole number"));
}

TEST(QuantitySize, Int64LimitIsExact) {
  EXPECT_EQ(parse_size_bytes("9223372036854775807 B"), 9223372036854775807);  // 2^63 - 1
  // 8388607 TiB = 2^63 - 2^40 fits; 8388608 TiB = 2^63 does not.
  EXPECT_EQ(parse_size_bytes("8388607 TiB"), 9223370937343148032);
  EXPECT_THAT(error_of([] { parse_size_bytes("9223372036854775808 B"); }).message(),
              HasSubstr("64 bits"));
  EXPECT_THAT(error_of([] { parse_size_bytes("8388608 TiB"); }).message(), HasSubstr("64 bits"));
  EXPECT_THAT(error_of([] { parse_size_bytes("1e30 B"); }).message(), HasSubstr("64 bits"));
  EXPECT_THAT(error_of([] { parse_size_bytes("123456789012345678901234 B"); }).message(),
              HasSubstr("64 bits"));
}

TEST(QuantityBandwidth, BytesAndBits) {
  EXPECT_DOUBLE_EQ(parse_bandwidth_bytes_per_s("450 GB/s"), 4.5e11);
  EXPECT_DOUBLE_EQ(parse_bandwidth_bytes_per_s("450GB/s"), 4.5e11);
  EXPECT_DOUBLE_EQ(parse_bandwidth_bytes_per_s("3.35 TB/s"), 3.35e12);
  EXPECT_DOUBLE_EQ(parse_bandwidth_bytes_per_s("64 MB/s"), 6.4e7);
  EXPECT_DOUBLE_EQ(parse_bandwidth_bytes_per_s("400 Gb/s"), 5e10);  // 400e9 / 8
  EXPECT_DOUBLE_EQ(parse_bandwidth_bytes_per_s("100 Mb/s"), 1.25e7);
  EXPECT_DOUBLE_EQ(parse_bandwidth_bytes_per_s("1 Tb/s"), 1.25e11);
}

TEST(QuantityTime, Units) {
  EXPECT_DOUBLE_EQ(parse_time_s("2 s"), 2.0);
  EXPECT_DOUBLE_EQ(parse_time_s("20 ms"), 0.02);
  EXPECT_DOUBLE_EQ(parse_time_s("1.5 ms"), 1.5e-3);
  EXPECT_DOUBLE_EQ(parse_time_s("1 us"), 1e-6);
  EXPECT_DOUBLE_EQ(parse_time_s("1e3 us"), 1e-3);
  EXPECT_DOUBLE_EQ(parse_time_s("1e3us"), 1e-3);
  EXPECT_DOUBLE_EQ(parse_time_s("5 ns"), 5e-9);
  EXPECT_DOUBLE_EQ(parse_time_s("0 s"), 0.0);
}

TEST(QuantityCompute, Units) {
  EXPECT_DOUBLE_EQ(parse_flops_per_s("989.4 TFLOP/s"), 9.894e14);
  EXPECT_DOUBLE_EQ(parse_flops_per_s("67 TFLOP/s"), 6.7e13);
  EXPECT_DOUBLE_EQ(parse_flops_per_s("500 GFLOP/s"), 5e11);
  EXPECT_DOUBLE_EQ(parse_flops_per_s("1 PFLOP/s"), 1e15);
}

TEST(QuantityAnyKind, ParseQuantityDispatches) {
  EXPECT_DOUBLE_EQ(parse_quantity("1 KiB", QuantityKind::size), 1024.0);
  EXPECT_DOUBLE_EQ(parse_quantity("400 Gb/s", QuantityKind::bandwidth), 5e10);
  QuantityKind kind = QuantityKind::size;
  EXPECT_TRUE(unit_kind("GB/s", &kind));
  EXPECT_EQ(kind, QuantityKind::bandwidth);
  EXPECT_FALSE(unit_kind("Gbps", &kind));
}

TEST(QuantityErrors, NumberWithoutUnitNamesValueKindAndExample) {
  const auto e = error_of([] { parse_bandwidth_bytes_per_s("450", "intra_node.bandwidth"); });
  EXPECT_EQ(e.message(), "bandwidth '450' needs a unit, e.g. '450 GB/s'");
  EXPECT_EQ(e.where(), "intra_node.bandwidth");
  EXPECT_THAT(error_of([] { parse_size_bytes("4096"); }).message(),
              HasSubstr("size '4096' needs a unit, e.g. '4096 MiB'"));
  EXPECT_THAT(error_of([] { parse_time_s("3"); }).message(), HasSubstr("time '3' needs a unit"));
  EXPECT_THAT(error_of([] { parse_flops_per_s("989.4"); }).message(),
              HasSubstr("compute '989.4' needs a unit"));
}

TEST(QuantityErrors, WrongKindOfUnit) {
  const auto e = error_of([] { parse_bandwidth_bytes_per_s("80 GiB"); });
  EXPECT_THAT(e.message(), HasSubstr("'80 GiB' is a size"));
  EXPECT_THAT(e.message(), HasSubstr("bandwidth is expected"));
  EXPECT_THAT(e.message(), HasSubstr("450 GB/s"));
  EXPECT_THAT(error_of([] { parse_size_bytes("450 GB/s"); }).message(),
              HasSubstr("is a bandwidth"));
  EXPECT_THAT(error_of([] { parse_time_s("1 GB"); }).message(), HasSubstr("is a size"));
  EXPECT_THAT(error_of([] { parse_flops_per_s("1 ms"); }).message(), HasSubstr("is a time"));
}

TEST(QuantityErrors, UnknownUnitListsTheKnownOnes) {
  const auto e = error_of([] { parse_bandwidth_bytes_per_s("400 Gbps"); });
  EXPECT_THAT(e.message(), HasSubstr("unknown unit 'Gbps'"));
  EXPECT_THAT(e.message(), HasSubstr("Gb/s"));
  // Units are case-sensitive: bits and bytes differ by a factor of 8.
  EXPECT_THAT(error_of([] { parse_bandwidth_bytes_per_s("400 gb/s"); }).message(),
              HasSubstr("unknown unit 'gb/s'"));
}

TEST(QuantityErrors, NegativeNanInfinityGarbage) {
  EXPECT_THAT(error_of([] { parse_bandwidth_bytes_per_s("-1 GB/s"); }).message(),
              HasSubstr("must not be negative"));
  EXPECT_THAT(error_of([] { parse_size_bytes("-64 MiB"); }).message(),
              HasSubstr("must not be negative"));
  EXPECT_THAT(error_of([] { parse_bandwidth_bytes_per_s("nan GB/s"); }).message(),
              HasSubstr("finite"));
  EXPECT_THAT(error_of([] { parse_time_s("inf s"); }).message(), HasSubstr("finite"));
  EXPECT_THAT(error_of([] { parse_time_s("Infinity ms"); }).message(), HasSubstr("finite"));
  EXPECT_THAT(error_of([] { parse_time_s("fast"); }).message(), HasSubstr("not a number"));
  EXPECT_THAT(error_of([] { parse_time_s(""); }).message(), HasSubstr("empty time"));
  EXPECT_THAT(error_of([] { parse_time_s("1 ms extra"); }).message(), HasSubstr("unknown unit"));
  EXPECT_THAT(error_of([] { parse_bandwidth_bytes_per_s("1e400 GB/s"); }).message(),
              HasSubstr("out of range"));
}
