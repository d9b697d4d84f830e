// The GEMM CSV reader (evaluation/gemm_measurements.cpp): columns by name in any order,
// the time in any of its units, extra columns ignored; each bad row named FILE:LINE:COLUMN.
#include "evaluation/gemm_measurements.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "core/errors.hpp"

namespace symmesh::evaluation {
namespace {

std::string csv(const std::string& text) {
  static int count = 0;
  const auto path =
      std::filesystem::temp_directory_path() /
      ("symmesh_gemm_" + std::to_string(getpid()) + "_" + std::to_string(count++) + ".csv");
  std::ofstream(path) << text;
  return path.string();
}

TEST(GemmCsv, ReadsEveryTimeUnitAndIgnoresOtherColumns) {
  const std::string path =
      csv("# published H100 numbers\n"
          "id, gpu, dtype, m, n, k, time_us, source\n"
          "\n"
          "a, H100, bf16, 8192, 8192, 8192, 1500, paper\n"
          "b, H100, fp8, 1, 4096, 4096, 12.5, blog\n");
  const auto rows = read_gemm_csv(path);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].dtype, DType::bf16);
  EXPECT_EQ(rows[0].m, 8192);
  EXPECT_DOUBLE_EQ(rows[0].seconds, 1.5e-3);
  EXPECT_EQ(rows[0].where, path + ":4");
  EXPECT_EQ(rows[1].dtype, DType::fp8_e4m3);
  EXPECT_DOUBLE_EQ(rows[1].seconds, 12.5e-6);
  // tflops: 2 × 1024³ FLOP at 500 TFLOP/s = 4.294967 µs.
  const auto rate = read_gemm_csv(csv("m,n,k,dtype,tflops\n1024,1024,1024,bf16,500\n"));
  EXPECT_DOUBLE_EQ(rate[0].seconds, 2.0 * 1024 * 1024 * 1024 / 500e12);
  // seconds preferred over tflops when both are there.
  const auto both = read_gemm_csv(csv("m,n,k,dtype,tflops,seconds\n8,8,8,bf16,500,0.25\n"));
  EXPECT_DOUBLE_EQ(both[0].seconds, 0.25);
  EXPECT_DOUBLE_EQ(read_gemm_csv(csv("m,n,k,dtype,time_ms\n8,8,8,bf16,2\n"))[0].seconds, 2e-3);
  // Each row its own: an empty seconds field falls back to the row's tflops.
  const auto mixed = read_gemm_csv(csv("m,n,k,dtype,seconds,tflops\n8,8,8,bf16,,1\n"));
  EXPECT_DOUBLE_EQ(mixed[0].seconds, 1024 / 1e12);
}

TEST(GemmCsv, BadRowsNameFileLineAndColumn) {
  struct Case {
    std::string text, where, message;
  };
  const std::vector<Case> cases{
      {"m,n,k,dtype,seconds\n8,8,x,bf16,1\n", ":2:5", "k: expected an integer >= 1, got 'x'"},
      {"m,n,k,dtype,seconds\n8,0,8,bf16,1\n", ":2:3", "n: expected an integer >= 1, got '0'"},
      {"m,n,k,dtype,seconds\n8,8,8,bf17,1\n", ":2:7", "dtype: unknown dtype 'bf17'"},
      {"m,n,k,dtype,seconds\n8,8,8,bf16,-1\n", ":2:12", "seconds: expected a finite number > 0"},
      {"m,n,k,dtype,seconds,tflops\n8,8,8,bf16,,\n", ":2:12",
       "seconds: expected a finite number > 0, got ''"},
      {"m,n,k,dtype,seconds\n8,8,8,bf16,nan\n", ":2:12", "seconds: expected a finite number > 0"},
      {"m,n,k,dtype,seconds\n8,8\n", ":2:4", "row has 2 fields, no column 'k'"},
      {"m,n,dtype,seconds\n8,8,bf16,1\n", ":1:1", "header has no column 'k'"},
      {"m,n,k,dtype\n8,8,8,bf16\n", ":1:1", "header has no time column"},
      {"m,n,k,dtype,m,seconds\n", ":1:13", "column 'm' twice"},
      // A repeated name that is no column of the table is not quoted: the file may be
      // anything (a password file: "root:x,root:x" would echo a secret).
      {"s3cret,s3cret\n", ":1:8", "field 2 of the header repeats field 1 (a header needs"},
      // Rates no GPU reaches: 1e308 TFLOP/s (a time of 0), and 1e6 TFLOP/s as a time.
      {"m,n,k,dtype,tflops\n8192,8192,8192,bf16,1e308\n", ":2:21",
       "tflops: '1e308' makes 8192x8192x8192 bf16 run at inf TFLOP/s, more than any GPU (at "
       "most 100000 TFLOP/s)"},
      {"m,n,k,dtype,time_us\n8192,8192,8192,bf16,0.0011\n", ":2:21",
       "time_us: '0.0011' makes 8192x8192x8192 bf16 run at 9.996e+08 TFLOP/s"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    const std::string path = csv(c.text);
    try {
      read_gemm_csv(path);
      ADD_FAILURE() << "expected InvalidArgument";
    } catch (const InvalidArgument& e) {
      EXPECT_EQ(e.where(), path + c.where) << e.message();
      EXPECT_NE(e.message().find(c.message), std::string::npos) << e.message();
    }
  }
  try {
    read_gemm_csv(csv("s3cret,s3cret\n"));
    ADD_FAILURE() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(e.message().find("s3cret"), std::string::npos) << e.message();
  }
  EXPECT_THROW(read_gemm_csv(csv("m,n,k,dtype,seconds\n")), InvalidArgument);  // no rows
  EXPECT_THROW(read_gemm_csv(csv("")), InvalidArgument);
  EXPECT_THROW(read_gemm_csv("/no/such.csv"), InvalidArgument);
  EXPECT_THROW(read_gemm_csv(std::filesystem::temp_directory_path().string()), InvalidArgument);
}

}  // namespace
}  // namespace symmesh::evaluation
