#include "reports/text_table.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace symmesh::reports {
namespace {

bool looks_numeric(const std::string& cell) {
  if (cell.empty()) return false;
  return std::all_of(cell.begin(), cell.end(),
                     [](char c) {
                       return (c >= '0' && c <= '9') || c == '.' || c == '-' || c == 'e' ||
                              c == '+';
                     }) ||
         cell == "inf";
}

}  // namespace

TimeUnit time_unit_for(const std::vector<double>& seconds) {
  double largest = 0;
  for (double s : seconds)
    if (std::isfinite(s) && s > largest) largest = s;
  if (largest < 1e-3) return {"us", 1e6, 3};
  if (largest < 1) return {"ms", 1e3, 3};
  return {"s", 1, 3};
}

std::string TextTable::render(const std::string& indent) const {
  std::vector<size_t> width(headers_.size(), 0);
  for (size_t c = 0; c < headers_.size(); ++c) width[c] = headers_[c].size();
  for (const auto& row : rows_)
    for (size_t c = 0; c < row.size() && c < width.size(); ++c)
      width[c] = std::max(width[c], row[c].size());

  auto line = [&](const std::vector<std::string>& cells, bool header) {
    std::string out = indent;
    for (size_t c = 0; c < width.size(); ++c) {
      const std::string cell = c < cells.size() ? cells[c] : "";
      const std::string pad(width[c] - cell.size(), ' ');
      const bool right = !header && looks_numeric(cell);
      out += right ? pad + cell : cell + (c + 1 < width.size() ? pad : "");
      if (c + 1 < width.size()) out += "  ";
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out + "\n";
  };
  std::string out = line(headers_, true);
  for (const auto& row : rows_) out += line(row, false);
  return out;
}

}  // namespace symmesh::reports
