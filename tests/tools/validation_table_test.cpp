// tools/validation/validation_table.hpp on a small manifest written here: a collective
// summary row, a GEMM row and an HBM row, each predicted figure computed by hand.
#include "tools/validation/validation_table.hpp"

#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include "core/errors.hpp"
#include "core/program.hpp"
#include "core/roofline.hpp"
#include "scenario/cluster_writer.hpp"
#include "scenario/scenario_loader.hpp"

namespace symmesh::validation {
namespace {

namespace fs = std::filesystem;
const std::string kRoot = SYMMESH_SOURCE_DIR;

class ValidationTable : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("symmesh-validation-" + std::to_string(getpid()));
    fs::create_directories(dir_ / "published");
    fs::create_directories(dir_ / "clusters");
    // dgx-h100-datasheet with one intra-node all_reduce way: 10 us, 100 GB/s bus bandwidth.
    ClusterSpec c = load_cluster(kRoot + "/scenarios/clusters/dgx-h100-datasheet.yaml");
    c.collectives.intra_node.of(BandwidthCollective::all_reduce) = {
        {LibraryAlgorithm::ring, "Simple", 10e-6, 0, 100e9}};
    write("clusters/h100.yaml", scenario::cluster_file_text(c));
  }
  void TearDown() override { fs::remove_all(dir_); }
  void write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
  }
  std::vector<ValidationPoint> points() {
    return validation_points((dir_ / "manifest.yaml").string(), (dir_ / "published").string(),
                             (dir_ / "clusters").string());
  }
  fs::path dir_;
};

TEST_F(ValidationTable, PredictsEachKindAndSummarises) {
  write("published/collective_summary.csv",
        "id,gpu,gpus,nodes,collective,size_label,size_bytes,busbw_gb_per_s,env,source\n"
        "x_ar_132K,H100,8,1,all_reduce,132K,,20,\"NVLS, as stated\",u\n"
        "y_ar_1K,H100,8,1,all_reduce,1K,,1,,u\n");
  write("published/gemm.csv",
        "id,gpu,dtype,m,n,k,tflops,seconds,source\n"
        "g_bf16,H100,bf16,4096,4096,4096,500,,u\n");
  write("published/hbm.csv", "id,gpu,bytes,bandwidth_gb_per_s,source\nh_copy,H100,,3000,u\n");
  write("manifest.yaml",
        "collective_summary:\n"
        "  - {ids: x_ar_, cluster: h100.yaml, role: held-out, size_from_label: true}\n"
        "gemm:\n  - {ids: g_, cluster: h100.yaml, dtype: bf16, regime: bf16 GEMM, role: held-out}\n"
        "hbm:\n  - {ids: h_, cluster: h100.yaml, regime: HBM, role: held-out}\n");
  const std::vector<ValidationPoint> p = points();
  ASSERT_EQ(p.size(), 3u);  // y_ar_1K is not under the prefix x_ar_
  // '132K' = 132e3, nearest power of two 2^17 = 131072. Published: busbw 20 GB/s, factor
  // 2·7/8 = 1.75, time = 131072 × 1.75 / 20e9 = 11.4688 us. Predicted: 10 us + 131072 ×
  // 1.75 / 100e9 = 12.29376 us; error 12.29376 / 11.4688 - 1 = +7.193 %.
  EXPECT_EQ(p[0].size_bytes, 131072);
  EXPECT_NEAR(p[0].published_s, 11.4688e-6, 1e-12);
  EXPECT_NEAR(p[0].predicted_s, 12.29376e-6, 1e-12);
  EXPECT_NEAR(p[0].error(), 0.07193, 1e-5);
  EXPECT_EQ(p[0].regime, "NVLink collective <= 1 MiB");
  // GEMM: published 2 × 4096³ / 500e12 = 274.8779 us; predicted by the roofline for that work.
  EXPECT_NEAR(p[1].published_s, 274.877906944e-6, 1e-12);
  MatmulWork work;
  work.m = work.n = work.k = 4096;
  work.dtype = DType::bf16;
  EXPECT_DOUBLE_EQ(
      p[1].predicted_s,
      roofline::matmul_duration_s(load_cluster((dir_ / "clusters/h100.yaml").string()).gpu, work));
  // HBM: published 3000 GB/s, cluster 3.35 TB/s: a copy takes 3000 / 3350 - 1 = -10.45 %.
  EXPECT_NEAR(p[2].error(), 3000.0 / 3350 - 1, 1e-12);
  const std::vector<RegimeSummary> s = summarise(p);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].count, 1);
  EXPECT_NEAR(s[0].median_abs_error, 0.07193, 1e-5);
  const std::string report = validation_report(p);
  EXPECT_NE(report.find("+7.2%"), std::string::npos) << report;
  EXPECT_NE(report.find("bf16 GEMM"), std::string::npos);
}

TEST_F(ValidationTable, UnpricedCollectivesAreCountedNotFatal) {
  // The cluster lists no all_gather: the point is shown without a prediction.
  write("published/collective_summary.csv",
        "id,gpu,gpus,nodes,collective,size_label,size_bytes,busbw_gb_per_s,env,source\n"
        "ag,H100,8,1,all_gather,16GiB,17179869184,360,,u\n");
  write("manifest.yaml",
        "collective_summary:\n  - {ids: ag, cluster: h100.yaml, role: held-out}\n");
  const std::vector<ValidationPoint> p = points();
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].predicted_s, 0);
  EXPECT_NE(p[0].note.find("no prediction"), std::string::npos);
  EXPECT_EQ(summarise(p)[0].unpredicted, 1);
}

TEST_F(ValidationTable, BadDataNamesFileAndLine) {
  write("published/collective_summary.csv",
        "id,gpu,gpus,nodes,collective,size_label,size_bytes,busbw_gb_per_s,env,source\n"
        "ag,H100,8,1,all_gather,16GiB,17179869184,fast,,u\n");
  write("manifest.yaml",
        "collective_summary:\n  - {ids: ag, cluster: h100.yaml, role: held-out}\n");
  try {
    points();
    FAIL();
  } catch (const InvalidArgument& e) {
    EXPECT_NE(e.where().find("collective_summary.csv:2"), std::string::npos) << e.where();
  }
}

TEST(ValidationManifest, ShippedManifestLoadsAndCalibrates) {
  // The shipped manifest names clusters that exist and files that parse.
  const std::string manifest = kRoot + "/tools/validation/manifest.yaml";
  const std::string published = kRoot + "/tools/validation/published";
  const auto points = validation_points(manifest, published, kRoot + "/scenarios/clusters");
  EXPECT_GT(points.size(), 300u);
  EXPECT_EQ(calibrated_clusters(manifest), "dgx-h100.yaml\n");
  EXPECT_NE(calibration_arguments(manifest, published, "dgx-h100.yaml").find("--nvls\n"),
            std::string::npos);
  // The GEMM rows marked fit, as calibrate --gemm reads them: a header and three rows (one
  // bf16, two fp8: the manifest's gemm: entries with role fit).
  const std::string csv = gemm_fit_csv(manifest, published, "dgx-h100.yaml");
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 4) << csv;
  EXPECT_NE(csv.find("mamf_h100_bf16,2048,2048,13312,bf16,794.5,"), std::string::npos) << csv;
}

TEST(ValidationRun, OneCommandCalibratesAndPrintsTheTable) {
  // tools/validation/run --calibrate DIR: symmesh calibrate writes
  // DIR/dgx-h100.yaml (GEMMs, then collectives), the other shipped files are
  // copied beside it (dgx-h200.yaml builds on it), then every point is predicted
  // with them (none left unpredicted).
  const fs::path dir =
      fs::temp_directory_path() / ("symmesh-validation-run-" + std::to_string(getpid()));
  const std::string build = fs::path(SYMMESH_BINARY).parent_path().string();
  const std::string out = (dir.string() + ".txt");
  const std::string command = "timeout 120 " + kRoot + "/tools/validation/run --build " + build +
                              " --calibrate " + dir.string() + " >" + out + " 2>&1";
  const int status = std::system(command.c_str());
  std::ifstream in(out);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(status, 0) << text;
  EXPECT_TRUE(fs::exists(dir / "dgx-h100.yaml"));
  EXPECT_TRUE(fs::exists(dir / "dgx-h200.yaml"));
  // The summary (after its header line): every regime of the manifest, each with its
  // unpredicted count last, 0 once the clusters are calibrated.
  std::istringstream summary(text.substr(text.find("summary (")));
  std::string line;
  std::getline(summary, line);
  std::getline(summary, line);  // the column names
  int regimes = 0;
  while (std::getline(summary, line) && !line.empty()) {
    ++regimes;
    EXPECT_EQ(line.substr(line.find_last_of(' ') + 1), "0") << line;
  }
  // 4 collective regimes as fit and 4 held out; bf16 GEMM, fp8 GEMM and HBM fit; fp8 GEMM
  // and HBM held out (no bf16 point is held out: the manifest says why).
  EXPECT_EQ(regimes, 13) << text;
  EXPECT_NE(text.find("fp8 GEMM"), std::string::npos);
  fs::remove_all(dir);
  fs::remove(out);
}

}  // namespace
}  // namespace symmesh::validation
