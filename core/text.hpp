#pragma once
// Small text helpers shared by every to_string and report. Built with append() on purpose: GCC 12
// warns falsely (-Wrestrict) on `"literal" + std::string` patterns in optimised builds.
#include <cstdint>
#include <string>
#include <string_view>

namespace symmesh {

// Joins to_text(item) for every item of `items`, separated by `separator`.
template <typename Range, typename ToText>
std::string join(const Range& items, std::string_view separator, ToText&& to_text) {
  std::string out;
  bool first = true;
  for (const auto& item : items) {
    if (!first) out.append(separator);
    out.append(to_text(item));
    first = false;
  }
  return out;
}

// "512 B", "1.50 KiB", "2.00 MiB": binary units, two decimals above bytes.
std::string format_bytes(int64_t bytes);

// Fixed-point with `digits` decimals ("3.142"); "inf" for infinity, "-" for NaN. Every
// table and message that prints a figure to a chosen precision uses it.
std::string format_fixed(double value, int digits);
// Bytes in GiB with two decimals: "80.00 GiB" (memory figures of a GPU or a step).
std::string format_gib(double bytes);

// A number as a person wrote it ("0", "-450e9", "0.5"): the stream's shortest form, not
// std::to_string's "0.000000". For messages about a figure.
std::string number_text(double value);

// A C0 control character or DEL: what no name may hold (a line break, an escape).
inline bool is_ascii_control(char c) {
  return static_cast<unsigned char>(c) < 0x20 || c == 0x7F;
}

// Why `text` may not reach a terminal, a table or a file as it is, or "" when it may: the
// first byte that is not printable UTF-8 — a control character (C0, DEL, or C1 such as
// U+009B, which terminals read as an escape), an invisible format character (zero-width
// spaces and joiners, bidirectional overrides and isolates, U+2028/9, the byte-order
// mark), or a byte that is not valid UTF-8 (a stray continuation, an overlong or
// truncated sequence, a surrogate, beyond U+10FFFF). E.g. "a control character (0x1B) at
// byte 3".
std::string unprintable_reason(std::string_view text);
// `text` with every character unprintable_reason would name replaced by '?', one per byte:
// for text measured on a machine (a GPU's name) written where the loader would refuse it.
std::string printable_or_marked(std::string_view text);
// A JSON parser's message (nlohmann's "...invalid literal; last read: 'secr'") without
// the text it quotes from the input: the file may not be JSON at all (a password file
// named by mistake), and its content has no place in an error message.
std::string without_input_quote(std::string message);

}  // namespace symmesh
