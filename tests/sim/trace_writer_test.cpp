// The Chrome trace-event JSON: one track per rank and stream, "X" events in microseconds.
#include "core/trace_writer.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "sim/forked_run.hpp"
#include "sim_test_support.hpp"

namespace symmesh::sim {
namespace {

using namespace testing;

TEST(TraceWriter, OneTrackPerRankAndStreamWithMicrosecondEvents) {
  Program p(2);
  const SymmetricHandle h = p.symm_alloc(p.world_group(), 1 << 20);
  const StreamId comm = p.stream(0, "comm");
  p.stream(0, "compute");
  p.put_signal(0, comm, p.local_alloc(0, 1 << 20), h, 0, 1, {"send", OpCategory::comm, "step 1/1"});
  p.put_signal(0, comm, p.local_alloc(0, 1 << 20), h, 0, 1, {"again", OpCategory::comm, ""});
  const StreamId s1 = p.stream(1, "main");
  const BufferRef scratch = p.local_alloc(1, 64 << 20);
  p.copy(1, s1, CopyWork{scratch, scratch, 1, 1, 64 << 20, 0, 0, 0, 0},
         {"busy", OpCategory::compute, ""});
  p.wait_signal(1, s1, h, 0, {"recv", OpCategory::comm, ""});
  const TracedRun r = traced(p, test_cluster(1, 8));
  ASSERT_EQ(r.hazards.size(), 1u);

  const auto doc = nlohmann::json::parse(chrome_trace_json(p, r));
  const auto& events = doc.at("traceEvents");
  int complete = 0, instants = 0;
  bool named_rank0 = false, named_comm = false;
  for (const auto& e : events) {
    const std::string ph = e.at("ph");
    if (ph == "X") {
      ++complete;
      // Slices are named by what they are, with the workload op as an argument.
      if (e.at("args").at("op") == "send") {
        EXPECT_EQ(e.at("name"), "put");
        EXPECT_EQ(e.at("args").at("kind"), "put_signal");
        EXPECT_EQ(e.at("pid"), 0);
        EXPECT_EQ(e.at("tid"), comm);
        EXPECT_EQ(e.at("cat"), "comm");
        EXPECT_EQ(e.at("args").at("detail"), "step 1/1");
        EXPECT_EQ(e.at("args").at("bytes"), 1 << 20);
        const TimelineEntry& t = entry(r, 0, "send");
        EXPECT_DOUBLE_EQ(e.at("ts").get<double>(), t.start_s * 1e6);
        EXPECT_DOUBLE_EQ(e.at("dur").get<double>(), (t.end_s - t.start_s) * 1e6);
      }
    } else if (ph == "i") {
      ++instants;
      EXPECT_EQ(e.at("pid"), 1);
    } else if (ph == "M") {
      if (e.at("name") == "process_name" && e.at("pid") == 0)
        named_rank0 = e.at("args").at("name") == "rank 0";
      if (e.at("name") == "thread_name" && e.at("pid") == 0 && e.at("tid") == comm)
        named_comm = e.at("args").at("name") == "comm";
    }
  }
  EXPECT_EQ(complete, 4);
  EXPECT_EQ(instants, 1);
  EXPECT_TRUE(named_rank0);
  EXPECT_TRUE(named_comm);
  EXPECT_DOUBLE_EQ(doc.at("otherData").at("makespan_s").get<double>(), r.makespan_s);
  // ts is in microseconds (the Trace Event Format's unit), so it is displayed as such.
  EXPECT_EQ(doc.at("displayTimeUnit"), "ms");
}

// The JSON is written by hand (core/ has no JSON library): names that need escaping read
// back as they were, numbers as the doubles they were.
TEST(TraceWriter, EscapesNamesAndKeepsNumbersExact) {
  Program p(1);
  const std::string odd = "a \"quoted\" name\\ with\ttab\nnewline \x01 and é";
  const BufferRef b = p.local_alloc(0, 1 << 10);
  p.copy(0, p.stream(0, "str\"eam"), CopyWork{b, b, 1, 1, 1 << 10, 0, 0, 0, 0},
         {odd, OpCategory::compute, odd});
  const TracedRun r = traced(p, test_cluster(1, 8));
  const auto doc = nlohmann::json::parse(chrome_trace_json(p, r));
  bool seen = false;
  for (const auto& e : doc.at("traceEvents")) {
    if (e.at("ph") == "X") {
      seen = true;
      EXPECT_EQ(e.at("name"), "copy");
      EXPECT_EQ(e.at("args").at("op"), odd);
      EXPECT_EQ(e.at("args").at("detail"), odd);
      EXPECT_EQ(e.at("dur").get<double>(), (r.timeline[0].end_s - r.timeline[0].start_s) * 1e6);
    }
    if (e.at("ph") == "M" && e.at("name") == "thread_name") {
      EXPECT_EQ(e.at("args").at("name"), "str\"eam");
    }
  }
  EXPECT_TRUE(seen);
  EXPECT_EQ(doc.at("otherData").at("makespan_s").get<double>(), r.makespan_s);
  EXPECT_TRUE(nlohmann::json::parse(empty_chrome_trace()).at("traceEvents").empty());
}

}  // namespace
}  // namespace symmesh::sim
