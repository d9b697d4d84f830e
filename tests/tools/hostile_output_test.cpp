// Names from a scenario reach every output of a sweep: gnuplot scripts (run by gnuplot),
// CSV (opened by spreadsheets), Markdown (rendered as HTML), SVG (XML), JSON and the
// terminal. A scenario from someone else must not run code or forge structure through
// any of them. The names below hold each printable hostile class: shell command
// substitution in backquotes and $( ), both quotes, a backslash, Markdown's table bar,
// HTML, an entity, and a spreadsheet formula. (Control characters and invalid UTF-8 are
// refused by the loader: see bad_input/cases.txt, "Text that is not printable UTF-8".)
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/tools/sweep_test_support.hpp"

namespace {

using namespace symmesh::testing;
using ::testing::HasSubstr;
using ::testing::Not;

class HostileNames : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fresh_dir("hostile");
    marker_ = dir_ / "marker";
    const std::string m = marker_.string();
    // YAML single-quoted strings: '' is one quote, nothing else is special.
    const std::string body = "name: 'q`touch " + m + ".name`$(touch " + m +
                             ".dollar)\"''\\<script>x</script>&amp;'\n"
                             "cluster: " +
                             kScenarioDir +
                             "clusters/dgx-h100.yaml\n"
                             "mesh: {shape: [8], names: ['dp`touch " +
                             m +
                             ".mesh`|<b>']}\n"
                             "workload:\n"
                             "  - {name: '=HYPERLINK(\"http://x\",\"y\")|`touch " +
                             m +
                             ".op`', op: all_reduce,\n"
                             "     bytes: 64 MiB, mesh_dim: 0}\n"
                             "  - {name: '@SUM(A1)', op: all_reduce, bytes: 1 MiB, mesh_dim: 0}\n"
                             "sweep: {nodes: [1, 2]}\n";
    const std::string scenario = write_temp_scenario("hostile", body);
    have_gnuplot_ = std::system("command -v gnuplot >/dev/null 2>&1") == 0;
    run_ = run_sweep_shell("", scenario + " --out " + (dir_ / "out").string());
  }
  void SetUp() override { ASSERT_EQ(run_.exit_code, 0) << run_.err; }
  static std::string out_file(const char* name) {
    return read_file((dir_ / "out" / name).string());
  }

  static inline fs::path dir_, marker_;
  static inline RunResult run_;
  static inline bool have_gnuplot_ = false;
};

TEST_F(HostileNames, NoCommandInANameEverRuns) {
  // gnuplot substitutes `...` inside double-quoted strings by running a shell; the titles
  // hold the scenario and mesh names. Nothing may have created a marker.
  if (!have_gnuplot_) GTEST_SKIP() << "gnuplot is not installed (tools/setup installs gnuplot-nox)";
  for (const char* suffix : {".name", ".dollar", ".mesh", ".op"})
    EXPECT_FALSE(fs::exists(marker_.string() + suffix)) << suffix;
  // And the plots were drawn, titled with the name as text.
  EXPECT_THAT(out_file("step-time.svg"), HasSubstr("</svg>"));
  EXPECT_THAT(out_file("breakdown.svg"), HasSubstr("</svg>"));
  EXPECT_THAT(run_.err, Not(HasSubstr("gnuplot")));
}

TEST_F(HostileNames, GnuplotScriptsHoldNamesAsSingleQuotedData) {
  // Single quotes are gnuplot's literal strings: no substitution, '' for a quote.
  const std::string gp = out_file("step-time.gp");
  EXPECT_THAT(gp, HasSubstr("set title 'q`touch " + marker_.string() + ".name`$(touch " +
                            marker_.string() + ".dollar)\"''\\<script>x</script>&amp;"));
  EXPECT_THAT(gp, Not(HasSubstr("set title \"")));
}

TEST_F(HostileNames, SvgHasNoRawMarkup) {
  if (!have_gnuplot_) GTEST_SKIP() << "gnuplot is not installed";
  for (const char* svg : {"step-time.svg", "breakdown.svg"}) {
    const std::string text = out_file(svg);
    EXPECT_THAT(text, Not(HasSubstr("<script>"))) << svg;
    EXPECT_THAT(text, Not(HasSubstr("<b>"))) << svg;
  }
}

TEST_F(HostileNames, CsvCellsAreNeverFormulas) {
  // OWASP's CSV injection guidance: a text cell starting with = + - @ gets a leading '.
  const auto rows = parse_csv(out_file("results.csv"));
  ASSERT_EQ(rows.size(), 1 + 2 * 2u);  // header, 2 points x 2 ops
  const size_t column = csv_column(rows, "op");
  ASSERT_LT(column, rows[0].size());
  for (size_t r = 1; r < rows.size(); ++r) {
    ASSERT_EQ(rows[r].size(), rows[0].size()) << r;
    const std::string& op = rows[r][column];
    EXPECT_TRUE(op.rfind("'=HYPERLINK(", 0) == 0 || op == "'@SUM(A1)") << op;
  }
}

TEST_F(HostileNames, MarkdownHasNoRawHtmlAndKeepsItsTableShape) {
  const std::string md = out_file("summary.md");
  // A backtick would open a code span: escaped, as the other markup characters are.
  EXPECT_THAT(md, HasSubstr("# symmesh sweep: q\\`touch"));
  EXPECT_THAT(md, HasSubstr("&lt;script>x&lt;/script>&amp;amp;"));
  EXPECT_THAT(md, Not(HasSubstr("<script>")));
  EXPECT_THAT(md, Not(HasSubstr("<b>")));
  // Every row of the points table has the header's number of cells: the | in the names
  // is escaped.
  std::istringstream in(md);
  std::string line;
  int columns = -1, rows = 0;
  const auto cells = [](const std::string& row) {
    int n = 0;
    for (size_t i = 0; i < row.size(); ++i) n += row[i] == '|' && (i == 0 || row[i - 1] != '\\');
    return n;
  };
  while (std::getline(in, line) && line != "## Points") {
  }
  while (std::getline(in, line)) {
    if (line.empty()) {
      if (columns >= 0) break;
      continue;
    }
    if (columns < 0) columns = cells(line);
    EXPECT_EQ(cells(line), columns) << line;
    ++rows;
  }
  EXPECT_EQ(rows, 2 + 2);  // header, alignment, 2 points
}

TEST_F(HostileNames, JsonCarriesTheNamesExactly) {
  const auto j = nlohmann::json::parse(out_file("results.json"));
  EXPECT_EQ(j["scenario"], "q`touch " + marker_.string() + ".name`$(touch " + marker_.string() +
                               ".dollar)\"'\\<script>x</script>&amp;");
  EXPECT_EQ(j["points"][0]["ops"][1]["name"], "@SUM(A1)");
}

}  // namespace
