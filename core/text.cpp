#include "core/text.hpp"

#include <sstream>

#include <cmath>
#include <cstdio>

namespace symmesh {

std::string number_text(double value) {
  std::ostringstream text;
  text << value;
  return text.str();
}

std::string format_fixed(double value, int digits) {
  if (std::isnan(value)) return "-";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", digits, value);
  return buffer;
}

std::string format_gib(double bytes) {
  return format_fixed(bytes / (1024.0 * 1024 * 1024), 2) + " GiB";
}

std::string format_bytes(int64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int u = 0;
  while (value >= 1024 && u < 4) value /= 1024, ++u;
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, u == 0 ? "%.0f %s" : "%.2f %s", value, units[u]);
  return buffer;
}

namespace {

std::string hex_byte(unsigned char c) {
  const char* digits = "0123456789ABCDEF";
  std::string out = "0x";
  out += digits[c >> 4];
  out += digits[c & 15];
  return out;
}

}  // namespace

namespace {

// The character at text[i]: its length in bytes when it is printable UTF-8, else 0 and
// `why` says what it is (see unprintable_reason).
size_t printable_length(std::string_view text, size_t i, std::string& why) {
  const auto at = [i] { return " at byte " + std::to_string(i + 1); };
  const auto c = static_cast<unsigned char>(text[i]);
  if (is_ascii_control(text[i])) return why = "a control character (" + hex_byte(c) + ")" + at(), 0;
  if (c < 0x80) return 1;
  // Lead byte: the sequence length and the smallest code point it may encode.
  size_t length = 0;
  uint32_t code = 0, least = 0;
  if (c >= 0xC2 && c <= 0xDF) {
    length = 2, code = c & 0x1F, least = 0x80;
  } else if (c >= 0xE0 && c <= 0xEF) {
    length = 3, code = c & 0x0F, least = 0x800;
  } else if (c >= 0xF0 && c <= 0xF4) {
    length = 4, code = c & 0x07, least = 0x10000;
  } else {
    return why = "a byte that is not valid UTF-8 (" + hex_byte(c) + ")" + at(), 0;
  }
  if (i + length > text.size())
    return why = "a truncated UTF-8 sequence (" + hex_byte(c) + ")" + at(), 0;
  for (size_t k = 1; k < length; ++k) {
    const auto next = static_cast<unsigned char>(text[i + k]);
    if ((next & 0xC0) != 0x80)
      return why = "a byte that is not valid UTF-8 (" + hex_byte(next) + ") at byte " +
                   std::to_string(i + k + 1),
             0;
    code = code << 6 | (next & 0x3F);
  }
  if (code < least || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF))
    return why = "a byte that is not valid UTF-8 (" + hex_byte(c) + ")" + at(), 0;
  if (code >= 0x80 && code <= 0x9F)
    return why = "a control character (U+00" +
                 hex_byte(static_cast<unsigned char>(code)).substr(2) + ")" + at(),
           0;
  // Invisible format characters: zero-width spaces and joiners, bidirectional overrides
  // and isolates (they reorder what a terminal or a table shows, the "Trojan Source"
  // trick), word joiners, and the byte-order mark, which would make "name" and
  // "\uFEFFname" two keys that print alike.
  if ((code >= 0x200B && code <= 0x200F) || (code >= 0x2028 && code <= 0x202E) ||
      (code >= 0x2060 && code <= 0x2069) || code == 0xFEFF) {
    char hex[8];
    std::snprintf(hex, sizeof hex, "%04X", static_cast<unsigned>(code));
    return why = std::string("an invisible format character (U+") + hex + ")" + at(), 0;
  }
  return length;
}

}  // namespace

std::string unprintable_reason(std::string_view text) {
  std::string why;
  for (size_t i = 0; i < text.size();) {
    const size_t length = printable_length(text, i, why);
    if (length == 0) return why;
    i += length;
  }
  return "";
}

std::string without_input_quote(std::string message) {
  const size_t at = message.find("; last read: ");
  if (at != std::string::npos) message.erase(at);
  return message;
}

std::string printable_or_marked(std::string_view text) {
  std::string out, why;
  for (size_t i = 0; i < text.size();) {
    const size_t length = printable_length(text, i, why);
    if (length == 0) {
      out += '?';
      ++i;
    } else {
      out.append(text.substr(i, length));
      i += length;
    }
  }
  return out;
}

}  // namespace symmesh
