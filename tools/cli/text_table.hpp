#pragma once
// A plain aligned text table for terminal output: numeric-looking cells right-aligned.
#include <string>
#include <vector>

namespace symmesh::cli {

class TextTable {
 public:
  explicit TextTable(std::vector<std::string> headers) : headers_(std::move(headers)) {}
  void add_row(std::vector<std::string> cells) { rows_.push_back(std::move(cells)); }
  std::string render(const std::string& indent = "  ") const;

 private:
  std::vector<std::string> headers_;
  std::vector<std::vector<std::string>> rows_;
};

// Fixed-point with `digits` decimals; "inf" for infinity, "-" for NaN.
std::string format_fixed(double value, int digits);

}  // namespace symmesh::cli
