#pragma once
// One report schema: a report's columns as a table of rows, each naming the column's
// CSV/JSON key, its header in the human tables (Markdown, terminal), its unit, a getter from
// one result row to a value, and the outputs that show it. The writers here iterate those
// rows, so that the CSV header and cells, the JSON keys and the table headers and cells of
// one column all come from its one row: a new column is one row in report_columns.cpp (and
// the result field it reads, where that is new). The tables of rows: report_columns.hpp.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "reports/text_table.hpp"

namespace symmesh::reports {

// A column's value in one row. Absent (monostate): an empty CSV cell, no JSON key, "-" in a
// table. Null: a figure that exists but has no value here (meets_objective without an
// objective): an empty CSV cell and JSON null.
struct Null {};
using Value = std::variant<std::monostate, Null, bool, int64_t, double, std::string>;

// Which outputs show a column (a bit set).
enum Output : unsigned {
  kCsv = 1,
  kJson = 2,
  kMarkdown = 4,
  kTerminal = 8,
  kTables = kMarkdown | kTerminal,
  kAllOutputs = kCsv | kJson | kTables,
};

// What a number counts. CSV and JSON keep the value as it is (seconds, a fraction); the
// tables print seconds in the table's one time unit (text_table.hpp) with the unit in the
// header, fractions as percents with one decimal, token rates without decimals. Every unit
// but `none` (text, flags) is right-aligned in Markdown.
enum class Unit { none, count, seconds, fraction, tokens_per_s, bytes };

template <typename Row>
struct Column {
  using Context = typename Row::Context;
  std::string key{};     // CSV header; the JSON key unless json_key says otherwise
  std::string header{};  // tables' header, before the time unit: "total" -> "total (ms)"
  Unit unit = Unit::none;
  unsigned outputs = kAllOutputs;
  Value (*get)(const Row&) = nullptr;
  // Optional, where the defaults above do not say it:
  int csv_digits = -1;   // fixed decimals in CSV; -1: the shortest text that reads back
  std::string json_key{};  // a JSON pointer below the row's object ("/model/mfu"); "": "/key"
  nlohmann::json (*json)(const Row&) = nullptr;    // JSON value other than get's (a list)
  std::string (*cell)(const Row&) = nullptr;       // table text other than the unit's
  bool (*shown)(const Context&) = nullptr;         // tables show it only where this holds
  std::string (*header_of)(const Context&) = nullptr;  // a header that depends on the run
};

// One value in each output (report_schema.cpp).
std::string csv_text(const Value& value, int digits);
nlohmann::json json_of(const Value& value);  // discarded where the value is absent
std::string table_text(const Value& value, Unit unit, const TimeUnit& time);
// RFC 4180 cells and lines, with spreadsheet formulas defused (report_schema.cpp says how).
std::string csv_line(const std::vector<std::string>& cells);

template <typename Row>
std::string csv_header(const std::vector<Column<Row>>& columns) {
  std::vector<std::string> keys;
  for (const auto& c : columns)
    if (c.outputs & kCsv) keys.push_back(c.key);
  return csv_line(keys);
}

template <typename Row>
std::string csv_row(const std::vector<Column<Row>>& columns, const Row& row) {
  std::vector<std::string> cells;
  for (const auto& c : columns)
    if (c.outputs & kCsv) cells.push_back(csv_text(c.get(row), c.csv_digits));
  return csv_line(cells);
}

template <typename Row>
std::string json_pointer_of(const Column<Row>& c) {
  return c.json_key.empty() ? "/" + c.key : c.json_key;
}

// Sets the row's JSON keys in `object` (nested objects are made as the pointers need them).
template <typename Row>
void write_json(const std::vector<Column<Row>>& columns, const Row& row, nlohmann::json& object) {
  for (const auto& c : columns) {
    if (!(c.outputs & kJson)) continue;
    nlohmann::json value = c.json ? c.json(row) : json_of(c.get(row));
    if (!value.is_discarded())
      object[nlohmann::json::json_pointer(json_pointer_of(c))] = std::move(value);
  }
}

// The columns a table (kMarkdown or kTerminal) shows for this run, in order.
template <typename Row>
std::vector<const Column<Row>*> table_columns(const std::vector<Column<Row>>& columns,
                                              Output table, const typename Row::Context& context) {
  std::vector<const Column<Row>*> out;
  for (const auto& c : columns)
    if ((c.outputs & table) && (!c.shown || c.shown(context))) out.push_back(&c);
  return out;
}

template <typename Row>
std::string table_header(const Column<Row>& c, const typename Row::Context& context,
                         const TimeUnit& time) {
  const std::string label = c.header_of ? c.header_of(context) : c.header;
  return c.unit == Unit::seconds ? time.header(label) : label;
}

template <typename Row>
std::string table_cell(const Column<Row>& c, const Row& row, const TimeUnit& time) {
  return c.cell ? c.cell(row) : table_text(c.get(row), c.unit, time);
}

// "|---:|---|": Markdown's alignment row for these columns.
template <typename Row>
std::string markdown_alignment(const std::vector<const Column<Row>*>& columns) {
  std::string out = "|";
  for (const auto* c : columns) out += c->unit == Unit::none ? "---|" : "---:|";
  return out;
}

}  // namespace symmesh::reports
