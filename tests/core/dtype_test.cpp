// Element types: sizes (IEEE / OCP FP8 definitions), canonical names, aliases, errors.
#include "core/dtype.hpp"

#include <gtest/gtest.h>

#include "tests/thrown.hpp"

#include <string>
#include <vector>

#include "core/errors.hpp"

namespace symmesh {
namespace {

const std::vector<DType> kAll = {DType::bf16, DType::fp16,     DType::fp32,
                                 DType::fp64, DType::fp8_e4m3, DType::fp8_e5m2,
                                 DType::int8, DType::int32,    DType::int64};

using testing::thrown;

TEST(DType, SixteenBitTypesAreTwoBytes) {
  EXPECT_EQ(element_size_bytes(DType::bf16), 2);
  EXPECT_EQ(element_size_bytes(DType::fp16), 2);
}

TEST(DType, Fp32IsFourBytesFp64IsEight) {
  EXPECT_EQ(element_size_bytes(DType::fp32), 4);
  EXPECT_EQ(element_size_bytes(DType::fp64), 8);
}

TEST(DType, Fp8VariantsAreOneByte) {
  EXPECT_EQ(element_size_bytes(DType::fp8_e4m3), 1);
  EXPECT_EQ(element_size_bytes(DType::fp8_e5m2), 1);
}

TEST(DType, IntegerSizes) {
  EXPECT_EQ(element_size_bytes(DType::int8), 1);
  EXPECT_EQ(element_size_bytes(DType::int32), 4);
  EXPECT_EQ(element_size_bytes(DType::int64), 8);
}

TEST(DType, CanonicalNames) {
  EXPECT_EQ(to_string(DType::bf16), "bf16");
  EXPECT_EQ(to_string(DType::fp16), "fp16");
  EXPECT_EQ(to_string(DType::fp32), "fp32");
  EXPECT_EQ(to_string(DType::fp64), "fp64");
  EXPECT_EQ(to_string(DType::fp8_e4m3), "fp8_e4m3");
  EXPECT_EQ(to_string(DType::fp8_e5m2), "fp8_e5m2");
  EXPECT_EQ(to_string(DType::int8), "int8");
  EXPECT_EQ(to_string(DType::int32), "int32");
  EXPECT_EQ(to_string(DType::int64), "int64");
}

TEST(DType, EveryCanonicalNameRoundTrips) {
  for (DType d : kAll) EXPECT_EQ(parse_dtype(to_string(d)), d) << to_string(d);
}

TEST(DType, CanonicalNamesAreDistinct) {
  for (size_t i = 0; i < kAll.size(); ++i)
    for (size_t j = i + 1; j < kAll.size(); ++j) EXPECT_NE(to_string(kAll[i]), to_string(kAll[j]));
}

TEST(DType, TorchStyleAliases) {
  EXPECT_EQ(parse_dtype("bfloat16"), DType::bf16);
  EXPECT_EQ(parse_dtype("float16"), DType::fp16);
  EXPECT_EQ(parse_dtype("half"), DType::fp16);
  EXPECT_EQ(parse_dtype("float32"), DType::fp32);
  EXPECT_EQ(parse_dtype("float"), DType::fp32);
  EXPECT_EQ(parse_dtype("float64"), DType::fp64);
  EXPECT_EQ(parse_dtype("double"), DType::fp64);
}

TEST(DType, Fp8Aliases) {
  EXPECT_EQ(parse_dtype("fp8"), DType::fp8_e4m3);
  EXPECT_EQ(parse_dtype("e4m3"), DType::fp8_e4m3);
  EXPECT_EQ(parse_dtype("e5m2"), DType::fp8_e5m2);
}

TEST(DType, PeakKeyGroupsFp8Variants) {
  EXPECT_EQ(peak_key(DType::fp8_e4m3), "fp8");
  EXPECT_EQ(peak_key(DType::fp8_e5m2), "fp8");
}

TEST(DType, PeakKeyOfOtherTypesIsTheirName) {
  // The scenario format's peak table uses keys bf16, fp16, fp32, fp8 (scenario-format.md).
  EXPECT_EQ(peak_key(DType::bf16), "bf16");
  EXPECT_EQ(peak_key(DType::fp16), "fp16");
  EXPECT_EQ(peak_key(DType::fp32), "fp32");
  EXPECT_EQ(peak_key(DType::fp64), "fp64");
  EXPECT_EQ(peak_key(DType::int8), "int8");
}

TEST(DType, UnknownDtypeIsInvalidArgumentNamingWhere) {
  const auto e = thrown<InvalidArgument>([] { parse_dtype("fp4", "workload[2].dtype"); });
  EXPECT_EQ(e.where(), "workload[2].dtype");
  EXPECT_NE(std::string(e.what()).find("workload[2].dtype"), std::string::npos);
  EXPECT_NE(e.message().find("fp4"), std::string::npos);
}

TEST(DType, UnknownDtypeDefaultWhereIsDtype) {
  const auto e = thrown<InvalidArgument>([] { parse_dtype("complex64"); });
  EXPECT_EQ(e.where(), "dtype");
}

TEST(DType, UnknownDtypeMessageListsEveryKnownName) {
  const auto e = thrown<InvalidArgument>([] { parse_dtype("bf32"); });
  for (DType d : kAll) EXPECT_NE(e.message().find(to_string(d)), std::string::npos) << to_string(d);
}

TEST(DType, EmptyTextIsRejected) {
  EXPECT_THROW(parse_dtype(""), InvalidArgument);
}

}  // namespace
}  // namespace symmesh
