// One report schema (reports/report_schema.hpp, report_columns.cpp): every column of
// `symmesh sweep` and `symmesh layouts` is one row, and every output is written from the
// rows, so a column has one key, and the same figure in CSV as in JSON. On sweeps and
// layouts built by hand, so that every expected cell below is computed by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>

#include "reports/layouts_report.hpp"
#include "reports/report_columns.hpp"
#include "scenario/scenario_loader.hpp"

namespace symmesh::reports {
namespace {

using evaluation::OpReport;
using evaluation::SweepPoint;
using nlohmann::json;

std::string source_file(const std::string& path) {
  return std::string(SYMMESH_SOURCE_DIR) + "/" + path;
}

// RFC 4180 lines as cells: quoted cells may hold commas, and "" for a quote.
std::vector<std::vector<std::string>> parse_csv(const std::string& text) {
  std::vector<std::vector<std::string>> rows(1, std::vector<std::string>(1));
  bool quoted = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted && c == '"' && i + 1 < text.size() && text[i + 1] == '"')
      rows.back().back() += '"', ++i;
    else if (c == '"')
      quoted = !quoted;
    else if (!quoted && c == ',')
      rows.back().emplace_back();
    else if (!quoted && c == '\n')
      rows.emplace_back(1);
    else
      rows.back().back() += c;
  }
  rows.pop_back();  // after the last line break
  return rows;
}

// A model scenario's sweep of two points: one simulated at 250 ms (its plan priced at
// 0.5 s) with two ops (a matmul and a gradient all-reduce), every layer recomputed; one
// skipped. The objective is 300 ms.
struct HandMadeSweep {
  Scenario scenario = load_scenario(source_file("scenarios/llama3-8b-train.yaml"));
  evaluation::SweepRun run;
  evaluation::SweepAnswer answer;

  HandMadeSweep() {
    SweepPoint& ok = run.points.emplace_back();
    ok.nodes = 1, ok.gpus = 8, ok.mesh = {1, 8};
    ok.report.total_time_s = 0.25;
    ok.report.step = evaluation::StepReport{};
    ok.report.step->priced_step_s = 0.5;
    ok.report.model = evaluation::ModelThroughput{};
    ok.report.model->tokens_per_s_per_gpu = 1500.25;
    ok.report.model->mfu = 0.375;
    ok.report.model->recompute = Recompute::full;
    OpReport& mm = ok.report.ops.emplace_back();
    mm.name = "up", mm.op = "mm", mm.time_s = 0.125, mm.comm_time_s = 0.0625;
    mm.compute_time_s = 0.0625, mm.peak_memory_bytes_per_rank = 1024;
    mm.input_placements = std::vector<Placements>{parse_placements("R,R"), parse_placements("R,S(1)")};
    mm.output_placements = parse_placements("R,S(1)");
    OpReport& ar = ok.report.ops.emplace_back();
    ar.name = "up.grad", ar.op = "all_reduce", ar.time_s = 0.03125, ar.bytes = 4096;
    SweepPoint& skipped = run.points.emplace_back();
    skipped.nodes = 2, skipped.gpus = 16, skipped.mesh = {2, 8};
    skipped.skip_reason = "out of memory, by 3 GiB";
    answer.max_time_s = 0.3, answer.best = 0, answer.met = true;
    answer.simulated = answer.skipped = answer.meeting = 1;
    answer.fastest_per_gpu_count = {0};
  }
  SweepOutcome outcome() const { return {scenario, run, answer, {}}; }
};

template <typename Row>
void expect_one_row_per_key(const std::vector<Column<Row>>& columns) {
  std::set<std::string> csv, pointers;
  for (const auto& c : columns) {
    EXPECT_NE(c.get, nullptr) << c.key;
    EXPECT_NE(c.outputs & kAllOutputs, 0u) << c.key << " is in no output";
    if (c.outputs & kCsv) {
      EXPECT_TRUE(csv.insert(c.key).second) << "two CSV columns " << c.key;
    }
    if (c.outputs & kJson) {
      EXPECT_TRUE(pointers.insert(json_pointer_of(c)).second) << "two JSON keys " << c.key;
    }
    if (c.outputs & kTables) {
      EXPECT_TRUE(!c.header.empty() || c.header_of) << c.key;
    }
  }
}

TEST(ReportSchema, EveryKeyHasOneRow) {
  expect_one_row_per_key(sweep_columns());
  expect_one_row_per_key(layout_columns());
}

// The stable CSV header (docs/commands.md) is the schema's, in its order.
TEST(ReportSchema, TheSweepCsvHeaderIsTheGoldenOne) {
  std::ifstream golden(source_file("tests/tools/golden/sweep-quickstart-results.csv"));
  std::string first;
  std::getline(golden, first);
  EXPECT_EQ(csv_header(sweep_columns()), first + "\n");
  const HandMadeSweep sweep;
  const std::string csv = sweep_results_csv(sweep.outcome());
  EXPECT_EQ(csv.substr(0, csv.find('\n') + 1), first + "\n");
}

TEST(ReportSchema, TheSweepCsvRowsAreTheHandComputedOnes) {
  const HandMadeSweep sweep;
  const auto rows = parse_csv(sweep_results_csv(sweep.outcome()));
  ASSERT_EQ(rows.size(), 4u);  // the header, two ops, the skipped point
  const std::string header =
      "nodes,gpus,mesh,status,total_time_s,priced_time_s,meets_objective,tokens_per_s_per_gpu,"
      "mfu,recompute,"
      "op,kind,time_s,comm_time_s,compute_time_s,peak_memory_bytes_per_rank,bytes,"
      "input_placements,output_placements,reason";
  // Per op, the point's figures again; the matmul's placements instead of its bytes; a
  // skipped point's one row with its reason (quoted: it holds a comma).
  EXPECT_EQ(sweep_results_csv(sweep.outcome()),
            header +
                "\n"
                "1,8,1x8,ok,0.25,0.5,true,1500.25,0.375,full,up,mm,0.125,0.0625,0.0625,1024,,"
                "\"R,R x R,S(1)\",\"R,S(1)\",\n"
                "1,8,1x8,ok,0.25,0.5,true,1500.25,0.375,full,up.grad,all_reduce,0.03125,0,0,0,4096,"
                ",,\n"
                "2,16,2x8,skipped,,,,,,,,,,,,,,,,\"out of memory, by 3 GiB\"\n");
}

// A cell of CSV and the value at the column's JSON key say the same: a number reads back
// as the same double (to the CSV's decimals where it has fixed ones), a flag as true or
// false, text as itself, and an empty cell where the key is missing or null.
void expect_same_value(const std::string& cell, const json& object, const std::string& pointer,
                       int csv_digits, const std::string& where) {
  const json::json_pointer p(pointer);
  if (!object.contains(p) || object[p].is_null()) {
    EXPECT_EQ(cell, "") << where;
  } else if (object[p].is_boolean()) {
    EXPECT_EQ(cell, object[p].get<bool>() ? "true" : "false") << where;
  } else if (object[p].is_number()) {
    ASSERT_FALSE(cell.empty()) << where;
    const double tolerance = csv_digits < 0 ? 0 : 0.5 * std::pow(10.0, -csv_digits);
    EXPECT_NEAR(std::stod(cell), object[p].get<double>(), tolerance) << where;
  } else {
    EXPECT_EQ(cell, object[p].get<std::string>()) << where;
  }
}

TEST(ReportSchema, ASweepColumnSaysInCsvWhatItSaysInJson) {
  const HandMadeSweep sweep;
  const auto rows = parse_csv(sweep_results_csv(sweep.outcome()));
  const json j = sweep_results_json(sweep.outcome());
  const auto& columns = sweep_columns();
  // CSV rows 1 and 3 are the two points' first rows.
  for (const auto& [row, point] : {std::pair{1, 0}, std::pair{3, 1}}) {
    size_t cell = 0;
    for (const auto& c : columns) {
      if (!(c.outputs & kCsv)) continue;
      const std::string& text = rows[row][cell++];
      // The mesh alone has a JSON value of its own: its dims, of which CSV's text is made.
      if (c.json) continue;
      if (c.outputs & kJson)
        expect_same_value(text, j["points"][point], json_pointer_of(c), c.csv_digits,
                          c.key + " of point " + std::to_string(point));
    }
  }
  EXPECT_EQ(j["points"][0]["mesh"], json({1, 8}));
  EXPECT_EQ(j["points"][0]["model"]["recompute"], "full");
  EXPECT_FALSE(j["points"][1].contains("total_time_s"));
  EXPECT_FALSE(j["points"][1].contains("meets_objective"));
  EXPECT_EQ(j["points"][1]["status"], "skipped");
}

// The tables show the columns the schema gives them, with the headers it gives.
TEST(ReportSchema, TheSweepTablesAreTheSchemasHeaders) {
  const HandMadeSweep sweep;
  const std::string md = sweep_summary_markdown(sweep.outcome());
  // 250 ms: the table is in ms; the objective 300 ms; the answer's total in bold; the MFU
  // of a point whose every layer is recomputed says so.
  EXPECT_NE(md.find("| nodes | GPUs | mesh | total (ms) | meets 300 ms | tokens/s/GPU | MFU | "
                    "up (ms) | up strategy | up.grad (ms) |\n"
                    "|---:|---:|---|---:|---|---:|---:|---:|---|---:|\n"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| 1 | 8 | 1x8 | **250.000** | yes | 1500 | 37.5% (recompute) | 125.000 |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| 2 | 16 | 2x8 | skipped |\n"), std::string::npos) << md;
  const std::string terminal = sweep_terminal_text(sweep.outcome());
  const auto shown = table_columns(sweep_columns(), kTerminal, sweep.outcome());
  ASSERT_EQ(shown.size(), 7u);
  size_t at = 0;
  for (const auto* c : shown) {
    at = terminal.find(table_header(*c, sweep.outcome(), time_unit_for({0.25})), at);
    EXPECT_NE(at, std::string::npos) << c->key << " in\n" << terminal;
  }
}

// Without an objective or a model the tables leave those columns out; CSV keeps them, empty.
TEST(ReportSchema, ColumnsAreShownWhereTheRunHasThem) {
  HandMadeSweep sweep;
  sweep.scenario.model.reset();
  sweep.answer.max_time_s.reset();
  std::vector<std::string> keys;
  for (const auto* c : table_columns(sweep_columns(), kMarkdown, sweep.outcome()))
    keys.push_back(c->key);
  EXPECT_EQ(keys, (std::vector<std::string>{"nodes", "gpus", "mesh", "total_time_s"}));
  const auto rows = parse_csv(sweep_results_csv(sweep.outcome()));
  EXPECT_EQ(rows[1][6], "");  // meets_objective
  EXPECT_TRUE(sweep_results_json(sweep.outcome())["points"][0]["meets_objective"].is_null());
}

// Two layouts at 16 GPUs: the first priced at 0.222 s and simulated at 0.223 s, the second
// priced only.
evaluation::TrainingLayoutsRun hand_made_layouts() {
  evaluation::TrainingLayoutsRun run;
  auto& size = run.sizes.emplace_back();
  size.gpus = 16, size.priced = 5, size.too_big = 1;
  for (double step_s : {0.222, 0.25}) {
    auto& e = size.best.emplace_back();
    e.layout.tp = 4, e.layout.pp = 2, e.layout.dp = 2;
    e.step_s = step_s, e.tokens_per_s = 1234.56, e.tokens_per_s_per_gpu = 77.16;
    e.mfu = 0.41234, e.bubble_fraction = 0.125, e.exposed_comm_s = 0.0015;
    e.memory.weights_bytes = 1 << 30, e.memory.activations_bytes = 1 << 29;
  }
  auto& step = size.simulated.emplace_back();
  step.estimate = size.best[0];
  step.step_s = step.pipeline_s = 0.223;
  step.mfu = 0.4;
  return run;
}

TEST(ReportSchema, ALayoutColumnSaysInCsvWhatItSaysInJson) {
  const auto run = hand_made_layouts();
  const auto scenario = load_scenario(source_file("scenarios/llama3-8b-train.yaml"));
  const auto rows = parse_csv(layouts_csv(run));
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(layouts_csv(run).substr(0, layouts_csv(run).find('\n') + 1),
            csv_header(layout_columns()));
  // By hand: rank 1 is simulated; memory 1.5 GiB in bytes; CSV's fixed decimals.
  EXPECT_EQ(rows[1], (std::vector<std::string>{"16", "1", "4", "2", "2", "1", "1", "none", "0",
                                               "0.222000", "1234.6", "77.16", "0.4123",
                                               "1610612736", "0.1250", "0.001500", "0.223000",
                                               "0.4000"}));
  EXPECT_EQ(rows[2][16], "");
  const json j = layouts_json(scenario, run);
  for (size_t r = 1; r < rows.size(); ++r) {
    size_t cell = 0;
    for (const auto& c : layout_columns()) {
      if (!(c.outputs & kCsv)) continue;
      const std::string& text = rows[r][cell++];
      if (c.outputs & kJson)
        expect_same_value(text, j["sizes"][0]["best"][r - 1], json_pointer_of(c), c.csv_digits,
                          c.key + " of rank " + std::to_string(r));
    }
  }
  EXPECT_FALSE(j["sizes"][0]["best"][1].contains("simulated"));
  std::ostringstream text;
  print_layouts(text, scenario, run, "symmesh layouts");
  EXPECT_NE(text.str().find("GPUs  layout"), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("1.5 (1.0+0.0+0.0+0.5)"), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("4/5"), std::string::npos) << text.str();
}

// The manual lists the layouts CSV's columns (docs/scenario-format.md, `symmesh sweep` of a
// model's layouts): the list is the schema's, in its order, so a new column cannot land
// without its documentation.
TEST(ReportSchema, TheManualListsTheLayoutCsvColumnsInOrder) {
  std::ifstream in(source_file("docs/scenario-format.md"));
  const std::string doc((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string start = "`results.csv` (one row per GPU count and layout kept:";
  const size_t from = doc.find(start);
  ASSERT_NE(from, std::string::npos);
  const size_t to = doc.find("the last two", from);
  ASSERT_NE(to, std::string::npos);
  std::vector<std::string> listed;
  for (size_t at = doc.find('`', from + start.size()); at < to; at = doc.find('`', at + 1)) {
    const size_t end = doc.find('`', at + 1);
    listed.push_back(doc.substr(at + 1, end - at - 1));
    at = end;
  }
  std::vector<std::string> keys;
  for (const auto& c : layout_columns())
    if (c.outputs & kCsv) keys.push_back(c.key);
  EXPECT_EQ(listed, keys);
}

}  // namespace
}  // namespace symmesh::reports
