// One value of a report column in each output (report_schema.hpp).
#include "reports/report_schema.hpp"

#include <charconv>
#include <cstdlib>

namespace symmesh::reports {
namespace {

// Shortest text that reads back as the same double.
std::string shortest_text(double value) {
  char buffer[64];
  const auto end = std::to_chars(buffer, buffer + sizeof buffer, value).ptr;
  return std::string(buffer, end);
}

bool is_number(const std::string& cell) {
  char* end = nullptr;
  std::strtod(cell.c_str(), &end);
  return !cell.empty() && end == cell.c_str() + cell.size();
}

// RFC 4180: quote cells holding a comma, a quote or a line break; double the quotes. A
// text cell that a spreadsheet would run as a formula (=, +, - or @ first: names come
// from the scenario) is prefixed with ', as OWASP's CSV-injection guidance says.
std::string csv_cell(const std::string& text) {
  const bool formula =
      !text.empty() && std::string("=+-@").find(text[0]) != std::string::npos && !is_number(text);
  const std::string cell = formula ? "'" + text : text;
  if (cell.find_first_of(",\"\n\r") == std::string::npos) return cell;
  std::string out = "\"";
  for (char c : cell) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

// Dispatch on the value's alternative (the usual overload set for std::visit).
template <typename... F>
struct Overloaded : F... {
  using F::operator()...;
};
template <typename... F>
Overloaded(F...) -> Overloaded<F...>;

}  // namespace

std::string csv_line(const std::vector<std::string>& cells) {
  std::string out;
  for (size_t i = 0; i < cells.size(); ++i) out.append(i ? "," : "").append(csv_cell(cells[i]));
  return out + "\n";
}

std::string csv_text(const Value& value, int digits) {
  return std::visit(
      Overloaded{[](std::monostate) { return std::string(); },
                 [](Null) { return std::string(); },
                 [](bool b) { return std::string(b ? "true" : "false"); },
                 [](int64_t n) { return std::to_string(n); },
                 [&](double x) { return digits < 0 ? shortest_text(x) : format_fixed(x, digits); },
                 [](const std::string& text) { return text; }},
      value);
}

nlohmann::json json_of(const Value& value) {
  return std::visit(
      Overloaded{[](std::monostate) { return nlohmann::json(nlohmann::json::value_t::discarded); },
                 [](Null) { return nlohmann::json(); },
                 [](bool b) { return nlohmann::json(b); },
                 [](int64_t n) { return nlohmann::json(n); },
                 [](double x) { return nlohmann::json(x); },
                 [](const std::string& text) { return nlohmann::json(text); }},
      value);
}

std::string table_text(const Value& value, Unit unit, const TimeUnit& time) {
  return std::visit(
      Overloaded{[](std::monostate) { return std::string("-"); },
                 [](Null) { return std::string("-"); },
                 [](bool b) { return std::string(b ? "yes" : "no"); },
                 [](int64_t n) { return std::to_string(n); },
                 [&](double x) {
                   switch (unit) {
                     case Unit::seconds:
                       return time.cell(x);
                     case Unit::fraction:
                       return format_fixed(100 * x, 1) + "%";
                     case Unit::tokens_per_s:
                       return format_fixed(x, 0);
                     default:
                       return shortest_text(x);
                   }
                 },
                 [](const std::string& text) { return text; }},
      value);
}

}  // namespace symmesh::reports
