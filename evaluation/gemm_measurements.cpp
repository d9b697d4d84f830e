#include "evaluation/gemm_measurements.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>

#include "core/errors.hpp"
#include "core/input_file.hpp"
#include "core/text.hpp"

namespace symmesh::evaluation {
namespace {

struct Field {
  std::string text;
  int column = 1;  // 1-based character column of its first character
};

std::string trimmed(const std::string& s, int* skipped = nullptr) {
  const size_t first = s.find_first_not_of(" \t\r");
  if (first == std::string::npos) return "";
  if (skipped) *skipped = static_cast<int>(first);
  return s.substr(first, s.find_last_not_of(" \t\r") - first + 1);
}

std::vector<Field> split(const std::string& line) {
  std::vector<Field> out;
  size_t start = 0;
  for (;;) {
    const size_t comma = line.find(',', start);
    const std::string raw = line.substr(start, comma == std::string::npos ? comma : comma - start);
    int skipped = 0;
    std::string text = trimmed(raw, &skipped);
    out.push_back({std::move(text), static_cast<int>(start) + skipped + 1});
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

// "8192x8192x8192 bf16", for messages.
std::string row_text(const GemmMeasurement& row) {
  return std::to_string(row.m) + "x" + std::to_string(row.n) + "x" + std::to_string(row.k) + " " +
         to_string(row.dtype);
}

// The time columns, in the order one is preferred, and their unit in seconds (0: a rate).
const std::vector<std::pair<std::string, double>> kTimeColumns{
    {"seconds", 1.0}, {"time_ms", 1e-3}, {"time_us", 1e-6}, {"tflops", 0.0}};

}  // namespace

std::vector<GemmMeasurement> read_gemm_csv(const std::string& path) {
  std::istringstream in(read_input_file(path, "--gemm"));

  std::string line;
  int line_no = 0;
  std::map<std::string, size_t> column_of;
  std::vector<GemmMeasurement> rows;
  const auto at = [&](int column) {
    return path + ":" + std::to_string(line_no) + ":" + std::to_string(column);
  };
  std::optional<std::pair<std::string, double>> time_column;
  while (std::getline(in, line)) {
    ++line_no;
    const std::string content = trimmed(line);
    if (content.empty() || content[0] == '#') continue;
    const std::vector<Field> fields = split(line);
    if (column_of.empty()) {  // the header
      // A name is quoted only when it is one of the table's columns: until the header is
      // known to be one, the file may be anything (a password file named by mistake), and
      // none of its text is echoed.
      const auto is_column = [](const std::string& name) {
        return name == "m" || name == "n" || name == "k" || name == "dtype" ||
               std::any_of(kTimeColumns.begin(), kTimeColumns.end(),
                           [&](const auto& c) { return c.first == name; });
      };
      for (size_t i = 0; i < fields.size(); ++i)
        if (const auto [first, fresh] = column_of.emplace(fields[i].text, i); !fresh)
          throw InvalidArgument(
              (is_column(fields[i].text) ? "column '" + fields[i].text + "' twice"
                                         : "field " + std::to_string(i + 1) +
                                               " of the header repeats field " +
                                               std::to_string(first->second + 1)) +
                  " (a header needs m, n, k, dtype and one of seconds, time_ms, time_us, "
                  "tflops)",
              at(fields[i].column));
      for (const char* required : {"m", "n", "k", "dtype"})
        if (!column_of.count(required))
          throw InvalidArgument(std::string("header has no column '") + required +
                                    "' (needs m, n, k, dtype and one of seconds, time_ms, "
                                    "time_us, tflops)",
                                at(1));
      for (const auto& c : kTimeColumns)
        if (!time_column && column_of.count(c.first)) time_column = c;
      if (!time_column)
        throw InvalidArgument(
            "header has no time column (one of seconds, time_ms, time_us, tflops)", at(1));
      continue;
    }
    const auto field = [&](const std::string& name) -> const Field& {
      const size_t i = column_of.at(name);
      if (i >= fields.size())
        throw InvalidArgument("row has " + std::to_string(fields.size()) + " fields, no column '" +
                                  name + "' (field " + std::to_string(i + 1) + ")",
                              at(static_cast<int>(line.size()) + 1));
      return fields[i];
    };
    const auto dimension = [&](const std::string& name) {
      const Field& f = field(name);
      int64_t v = 0;
      const auto [end, err] = std::from_chars(f.text.data(), f.text.data() + f.text.size(), v);
      if (f.text.empty() || err != std::errc() || end != f.text.data() + f.text.size() || v < 1)
        throw InvalidArgument(
            name + ": expected an integer >= 1, got '" + printable_or_marked(f.text) + "'",
            at(f.column));
      return v;
    };
    GemmMeasurement row;
    row.m = dimension("m");
    row.n = dimension("n");
    row.k = dimension("k");
    const Field& dtype = field("dtype");
    try {
      row.dtype = parse_dtype(dtype.text, "dtype");
    } catch (const InvalidArgument& e) {
      throw InvalidArgument("dtype: " + e.message(), at(dtype.column));
    }
    // The first time column this row fills, in the order of kTimeColumns.
    const std::pair<std::string, double>* unit = nullptr;
    for (const auto& c : kTimeColumns)
      if (!unit && column_of.count(c.first) && column_of.at(c.first) < fields.size() &&
          !fields[column_of.at(c.first)].text.empty())
        unit = &c;
    const Field& t = field(unit ? unit->first : time_column->first);
    double value = 0;
    const auto [end, err] = std::from_chars(t.text.data(), t.text.data() + t.text.size(), value);
    if (t.text.empty() || err != std::errc() || end != t.text.data() + t.text.size() ||
        !std::isfinite(value) || !(value > 0))
      throw InvalidArgument((unit ? unit->first : time_column->first) +
                                ": expected a finite number > 0, got '" +
                                printable_or_marked(t.text) + "'",
                            at(t.column));
    const double flops =
        2.0 * static_cast<double>(row.m) * static_cast<double>(row.n) * static_cast<double>(row.k);
    row.seconds = unit->second > 0 ? value * unit->second : flops / (value * 1e12);
    // A figure no GPU could give (a rate of 1e308 TFLOP/s makes a time of 0): refused here,
    // where its column is known, rather than fitted into an efficiency of 1 and an
    // infinite error.
    const double rate = flops / row.seconds;
    if (!(row.seconds > 0) || !std::isfinite(rate) || rate > kMostGemmFlopsPerS) {
      char text[64];
      std::snprintf(text, sizeof text, "%.4g", rate * 1e-12);
      throw InvalidArgument((unit ? unit->first : time_column->first) + ": '" +
                                printable_or_marked(t.text) + "' makes " + row_text(row) +
                                " run at " + text + " TFLOP/s, more than any GPU (at most " +
                                std::to_string(static_cast<int64_t>(kMostGemmFlopsPerS * 1e-12)) +
                                " TFLOP/s); check the column's unit",
                            at(t.column));
    }
    row.where = path + ":" + std::to_string(line_no);
    rows.push_back(row);
  }
  if (rows.empty())
    throw InvalidArgument(column_of.empty()
                              ? "empty: expected a header (m,n,k,dtype,seconds) and rows"
                              : "no rows after the header",
                          path);
  return rows;
}

}  // namespace symmesh::evaluation
