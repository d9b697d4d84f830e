#pragma once
// nccl-tests' plain-text output (all_reduce_perf, all_gather_perf, reduce_scatter_perf,
// alltoall_perf, sendrecv_perf, …) read back into numbers, so that published or measured
// runs can be fitted (evaluation/collective_fit.hpp) and compared with symmesh's estimates.
//
// The layout is the one nccl-tests' src/common.cu prints: a "# Collective test starting:
// <program>" line, "#  Rank  N Group  G Pid P on HOST device D ..." lines (one per GPU),
// and data rows of 13 columns — size (B), count (elements), type, redop, root, then for
// out-of-place and in-place each: time (us), algbw and busbw (GB/s), #wrong. Lines of
// `mpirun --tag-output` ("[1,0]<stdout>:") are read with the tag removed; NCCL's own log
// lines ("host:pid:tid [0] NCCL INFO …") are skipped.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/bus_bandwidth.hpp"

namespace symmesh::evaluation {

struct NcclTestsRow {
  int64_t bytes = 0;  // nccl-tests' size column
  int64_t count = 0;
  std::string type, redop;
  int root = -1;
  double time_s = 0;  // out-of-place
  double algbw_gb_per_s = 0, busbw_gb_per_s = 0;
  double in_place_time_s = 0;
  int line = 0;  // 1-based line in the file
};

struct NcclTestsRun {
  std::string file;
  BandwidthCollective collective = BandwidthCollective::all_reduce;
  int gpus = 0;   // ranks of the run
  int nodes = 0;  // distinct hosts of the Rank lines; 0 when the file lists none
  std::vector<NcclTestsRow> rows;
};

// The most data rows one fit takes (a file, and each fitted scope, collective and
// algorithm over all files): the envelope fit tries some 1,100 starts over every point,
// about 2 s per 10,000 points, so a table of 10^6 rows would run for minutes. A real run
// has tens of rows (8 B to 8 GiB by factor 2: 31).
inline constexpr int kMostNcclTestsRows = 10000;

// The collective comes from "# Collective test starting: X_perf", else a "#% collective:
// X_perf" metadata line, else `fallback`. The GPU count from the Rank lines, else a
// "#% gpus: N" line, else nThread × nGpus of the "# nThread" line. Throws InvalidArgument
// naming "file:line" for a row that is not 13 columns of the right kinds, and naming the
// file when the collective or GPU count cannot be found or there is no data row, and naming
// the line of a second "# Collective test starting:" for another program (one run per file),
// and naming the line of a data row past kMostNcclTestsRows (read no further).
NcclTestsRun parse_nccl_tests_output(const std::string& text, const std::string& file,
                                     std::optional<BandwidthCollective> fallback = {});
// Reads `path` (a regular file) and parses it.
NcclTestsRun read_nccl_tests_file(const std::string& path,
                                  std::optional<BandwidthCollective> fallback = {});

}  // namespace symmesh::evaluation
