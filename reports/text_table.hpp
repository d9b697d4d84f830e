#pragma once
// A plain aligned text table for terminal output: numeric-looking cells right-aligned.
#include <string>
#include <vector>

#include "core/text.hpp"  // format_fixed, which every table uses

namespace symmesh::reports {

class TextTable {
 public:
  explicit TextTable(std::vector<std::string> headers) : headers_(std::move(headers)) {}
  void add_row(std::vector<std::string> cells) { rows_.push_back(std::move(cells)); }
  std::string render(const std::string& indent = "  ") const;

 private:
  std::vector<std::string> headers_;
  std::vector<std::vector<std::string>> rows_;
};


// The one time unit of a table, chosen by one rule for every table the CLI prints: the
// unit in which the table's largest time is at least 1 and under 1000 — us below 1 ms,
// ms below 1 s, s from there on — so the largest cell has one to three digits before the
// point; it is stated in the header ("time (ms)"), with 3 decimals (a nanosecond in us).
// CSV and JSON stay in seconds; the nccl-tests table keeps nccl-tests' own us.
struct TimeUnit {
  std::string name;  // "us" | "ms" | "s"
  double per_second = 1;
  int decimals = 3;
  std::string cell(double seconds) const { return format_fixed(seconds * per_second, decimals); }
  // "label (unit)"
  std::string header(const std::string& label) const { return label + " (" + name + ")"; }
};
// The unit for a table whose times (in seconds) are `seconds`; infinite, NaN and
// negative values are ignored; none at all (or all zero) gives us.
TimeUnit time_unit_for(const std::vector<double>& seconds);

}  // namespace symmesh::reports
