#include "core/quantity.hpp"

#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>

#include "core/errors.hpp"

namespace symmesh {
namespace {

// A unit scales the number by 10^pow10 · 2^pow2, then divides by 8 for bits.
struct Unit {
  const char* text;
  QuantityKind kind;
  int pow10;
  int pow2;
  bool bits;
};

constexpr std::array<Unit, 24> kUnits{{
    {"B", QuantityKind::size, 0, 0, false},
    {"KB", QuantityKind::size, 3, 0, false},
    {"MB", QuantityKind::size, 6, 0, false},
    {"GB", QuantityKind::size, 9, 0, false},
    {"TB", QuantityKind::size, 12, 0, false},
    {"KiB", QuantityKind::size, 0, 10, false},
    {"MiB", QuantityKind::size, 0, 20, false},
    {"GiB", QuantityKind::size, 0, 30, false},
    {"TiB", QuantityKind::size, 0, 40, false},
    {"MB/s", QuantityKind::bandwidth, 6, 0, false},
    {"GB/s", QuantityKind::bandwidth, 9, 0, false},
    {"TB/s", QuantityKind::bandwidth, 12, 0, false},
    {"Mb/s", QuantityKind::bandwidth, 6, 0, true},
    {"Gb/s", QuantityKind::bandwidth, 9, 0, true},
    {"Tb/s", QuantityKind::bandwidth, 12, 0, true},
    {"s", QuantityKind::time, 0, 0, false},
    {"ms", QuantityKind::time, -3, 0, false},
    {"us", QuantityKind::time, -6, 0, false},
    {"\xC2\xB5s", QuantityKind::time, -6, 0, false},  // µs, micro sign
    {"\xCE\xBCs", QuantityKind::time, -6, 0, false},  // μs, Greek mu
    {"ns", QuantityKind::time, -9, 0, false},
    {"GFLOP/s", QuantityKind::compute, 9, 0, false},
    {"TFLOP/s", QuantityKind::compute, 12, 0, false},
    {"PFLOP/s", QuantityKind::compute, 15, 0, false},
}};

const Unit* find_unit(std::string_view text) {
  for (const Unit& unit : kUnits)
    if (text == unit.text) return &unit;
  return nullptr;
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())))
    text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
    text.remove_suffix(1);
  return text;
}

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

// "3.35e2 TB/s" split into its decimal number and its unit.
struct Split {
  std::string_view integer;   // "3"
  std::string_view fraction;  // "35"
  int exponent = 0;           // 2
  std::string_view unit;      // "TB/s"
};

class QuantityParser {
 public:
  QuantityParser(std::string_view text, QuantityKind kind, std::string_view where)
      : text_(trim(text)), original_(text), kind_(kind), where_(where) {}

  Split split() const {
    if (text_.empty())
      fail("empty " + to_string(kind_) + "; expected a number with a unit, e.g. '" +
           example_of(kind_) + "'");
    if (text_.front() == '-') fail(label() + " must not be negative");
    if (starts_with_word("inf") || starts_with_word("+inf") || starts_with_word("nan") ||
        starts_with_word("+nan"))
      fail(label() + " must be a finite number, e.g. '" + example_of(kind_) + "'");
    Split out;
    size_t i = 0;
    const size_t n = text_.size();
    const size_t int_start = i;
    while (i < n && is_digit(text_[i])) ++i;
    out.integer = text_.substr(int_start, i - int_start);
    if (i < n && text_[i] == '.') {
      const size_t frac_start = ++i;
      while (i < n && is_digit(text_[i])) ++i;
      out.fraction = text_.substr(frac_start, i - frac_start);
    }
    if (out.integer.empty() && out.fraction.empty())
      fail(label() + " is not a number with a unit; expected e.g. '" + example_of(kind_) + "'");
    // An exponent only when 'e' is followed by digits: "1e3us" but "5 e" is a bad unit.
    if (i < n && (text_[i] == 'e' || text_[i] == 'E')) {
      size_t j = i + 1;
      bool negative = false;
      if (j < n && (text_[j] == '+' || text_[j] == '-')) negative = text_[j++] == '-';
      if (j < n && is_digit(text_[j])) {
        long exponent = 0;
        while (j < n && is_digit(text_[j])) {
          if (exponent < 100000) exponent = exponent * 10 + (text_[j] - '0');
          ++j;
        }
        out.exponent = static_cast<int>(negative ? -exponent : exponent);
        i = j;
      }
    }
    out.unit = trim(text_.substr(i));
    if (out.unit.empty()) fail(label() + " needs a unit, e.g. '" + with_unit_example(text_) + "'");
    return out;
  }

  const Unit& unit_of(const Split& split) const {
    const Unit* unit = find_unit(split.unit);
    if (unit == nullptr)
      fail("unknown unit '" + std::string(split.unit) + "' in " + label() + "; expected one of " +
           units_of(kind_) + ", e.g. '" + example_of(kind_) + "'");
    if (unit->kind != kind_)
      fail("'" + std::string(text_) + "' is a " + to_string(unit->kind) + ", but a " +
           to_string(kind_) + " is expected here, e.g. '" + example_of(kind_) + "'");
    return *unit;
  }

  // Correctly rounded: the unit's power of ten is folded into the decimal exponent.
  double real_value() const {
    const Split s = split();
    const Unit& unit = unit_of(s);
    std::string decimal(s.integer.empty() ? "0" : s.integer);
    if (!s.fraction.empty()) decimal.append(".").append(s.fraction);
    decimal.append("e").append(std::to_string(s.exponent + unit.pow10));
    double value = 0;
    auto [ptr, ec] = std::from_chars(decimal.data(), decimal.data() + decimal.size(), value);
    if (ec != std::errc() || ptr != decimal.data() + decimal.size() || !std::isfinite(value))
      fail(label() + " is out of range");
    if (unit.bits) value /= 8;
    return value;
  }

  // Exact integer arithmetic: value = D · 10^T · 2^pow2 with D the decimal digits.
  int64_t byte_count() const {
    const Split s = split();
    const Unit& unit = unit_of(s);
    uint64_t digits = 0;
    int exponent = s.exponent + unit.pow10;
    const uint64_t max_before_digit = (std::numeric_limits<uint64_t>::max() - 9) / 10;
    auto too_large = [&] {
      fail(label() + " is too large or too precise: byte counts must fit in 64 bits");
    };
    for (char c : s.integer) {
      if (digits <= max_before_digit)
        digits = digits * 10 + static_cast<uint64_t>(c - '0');
      else if (c == '0')
        ++exponent;
      else
        too_large();
    }
    for (char c : s.fraction) {
      if (digits <= max_before_digit) {
        digits = digits * 10 + static_cast<uint64_t>(c - '0');
        --exponent;
      } else if (c != '0') {
        too_large();
      }
    }
    if (digits == 0) return 0;
    while (digits % 10 == 0) {
      digits /= 10;
      ++exponent;
    }
    const uint64_t limit = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
    auto multiply = [&](uint64_t& value, uint64_t factor) {
      if (value > limit / factor) too_large();
      value *= factor;
    };
    auto fractional = [&] { fail(label() + " is not a whole number of bytes"); };
    int twos = unit.pow2;
    if (exponent >= 0) {
      for (int k = 0; k < exponent; ++k) multiply(digits, 10);
    } else {
      // Dividing by 10^j: the fives must come from the digits, the twos from 2^pow2 or
      // the digits.
      for (int k = 0; k < -exponent; ++k) {
        if (digits % 5 != 0) fractional();
        digits /= 5;
      }
      twos += exponent;
    }
    if (twos >= 0) {
      for (int k = 0; k < twos; ++k) multiply(digits, 2);
    } else {
      for (int k = 0; k < -twos; ++k) {
        if (digits % 2 != 0) fractional();
        digits /= 2;
      }
    }
    if (digits > limit) too_large();
    return static_cast<int64_t>(digits);
  }

 private:
  [[noreturn]] void fail(const std::string& message) const {
    throw InvalidArgument(message, std::string(where_));
  }
  std::string label() const { return to_string(kind_) + " '" + std::string(original_) + "'"; }
  bool starts_with_word(std::string_view word) const {
    if (text_.size() < word.size()) return false;
    for (size_t i = 0; i < word.size(); ++i)
      if (std::tolower(static_cast<unsigned char>(text_[i])) != word[i]) return false;
    return true;
  }
  // "450" -> "450 GB/s": the user's own number with the kind's usual unit.
  std::string with_unit_example(std::string_view number) const {
    const std::string example = example_of(kind_);
    return std::string(number) + example.substr(example.find(' '));
  }

  std::string_view text_;
  std::string_view original_;
  QuantityKind kind_;
  std::string_view where_;
};

}  // namespace

std::string to_string(QuantityKind kind) {
  switch (kind) {
    case QuantityKind::size:
      return "size";
    case QuantityKind::bandwidth:
      return "bandwidth";
    case QuantityKind::time:
      return "time";
    case QuantityKind::compute:
      return "compute";
  }
  return "?";
}

std::string example_of(QuantityKind kind) {
  switch (kind) {
    case QuantityKind::size:
      return "64 MiB";
    case QuantityKind::bandwidth:
      return "450 GB/s";
    case QuantityKind::time:
      return "1 us";
    case QuantityKind::compute:
      return "989.4 TFLOP/s";
  }
  return "?";
}

std::string units_of(QuantityKind kind) {
  std::string out;
  for (const Unit& unit : kUnits) {
    if (unit.kind != kind || static_cast<unsigned char>(unit.text[0]) >= 0x80) continue;
    if (!out.empty()) out.append(", ");
    out.append(unit.text);
  }
  return out;
}

bool unit_kind(std::string_view unit, QuantityKind* kind) {
  const Unit* found = find_unit(unit);
  if (found != nullptr && kind != nullptr) *kind = found->kind;
  return found != nullptr;
}

int64_t parse_size_bytes(std::string_view text, std::string_view where) {
  return QuantityParser(text, QuantityKind::size, where).byte_count();
}

double parse_bandwidth_bytes_per_s(std::string_view text, std::string_view where) {
  return QuantityParser(text, QuantityKind::bandwidth, where).real_value();
}

double parse_time_s(std::string_view text, std::string_view where) {
  return QuantityParser(text, QuantityKind::time, where).real_value();
}

double parse_flops_per_s(std::string_view text, std::string_view where) {
  return QuantityParser(text, QuantityKind::compute, where).real_value();
}

double parse_quantity(std::string_view text, QuantityKind kind, std::string_view where) {
  if (kind == QuantityKind::size)
    return static_cast<double>(QuantityParser(text, kind, where).byte_count());
  return QuantityParser(text, kind, where).real_value();
}

}  // namespace symmesh
