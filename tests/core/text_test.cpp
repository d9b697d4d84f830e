// unprintable_reason: the first byte of a text that is not printable UTF-8. Expectations
// from the Unicode standard's definition of well-formed UTF-8 (Table 3-7: the valid byte
// sequences) and its C0/C1 control ranges.
#include "core/text.hpp"

#include <gtest/gtest.h>

namespace symmesh {
namespace {

TEST(UnprintableReason, PrintableUtf8IsAccepted) {
  EXPECT_EQ(unprintable_reason(""), "");
  EXPECT_EQ(unprintable_reason("plain ASCII `$(x)' \"|<&>"), "");
  EXPECT_EQ(unprintable_reason("caf\xC3\xA9"), "");       // U+00E9, 2 bytes
  EXPECT_EQ(unprintable_reason("\xE2\x9C\x93"), "");      // U+2713, 3 bytes
  EXPECT_EQ(unprintable_reason("\xF0\x9D\x84\x9E"), "");  // U+1D11E, 4 bytes
  EXPECT_EQ(unprintable_reason("\xC2\xA0"), "");          // U+00A0, just past C1
  EXPECT_EQ(unprintable_reason("\xF4\x8F\xBF\xBF"), "");  // U+10FFFF, the last
}

TEST(UnprintableReason, ControlCharactersAreNamedWithTheirPosition) {
  EXPECT_EQ(unprintable_reason("ab\x1B[2J"), "a control character (0x1B) at byte 3");
  EXPECT_EQ(unprintable_reason(std::string("a\0b", 3)), "a control character (0x00) at byte 2");
  EXPECT_EQ(unprintable_reason("\t"), "a control character (0x09) at byte 1");
  EXPECT_EQ(unprintable_reason("x\x7F"), "a control character (0x7F) at byte 2");
  // C1: U+0080..U+009F, encoded C2 80..C2 9F; U+009B is the 8-bit CSI.
  EXPECT_EQ(unprintable_reason("a\xC2\x9B"), "a control character (U+009B) at byte 2");
  EXPECT_EQ(unprintable_reason("\xC2\x80"), "a control character (U+0080) at byte 1");
}

TEST(UnprintableReason, IllFormedUtf8IsRefused) {
  EXPECT_EQ(unprintable_reason("a\x80"), "a byte that is not valid UTF-8 (0x80) at byte 2");
  EXPECT_EQ(unprintable_reason("\xC0\xAF"), "a byte that is not valid UTF-8 (0xC0) at byte 1");
  EXPECT_EQ(unprintable_reason("\xE0\x80\xAF"),  // overlong 3-byte form of '/'
            "a byte that is not valid UTF-8 (0xE0) at byte 1");
  EXPECT_EQ(unprintable_reason("\xED\xA0\x80"),  // U+D800, a surrogate
            "a byte that is not valid UTF-8 (0xED) at byte 1");
  EXPECT_EQ(unprintable_reason("\xF4\x90\x80\x80"),  // U+110000
            "a byte that is not valid UTF-8 (0xF4) at byte 1");
  EXPECT_EQ(unprintable_reason("\xF5\x80\x80\x80"),
            "a byte that is not valid UTF-8 (0xF5) at byte 1");
  EXPECT_EQ(unprintable_reason("ab\xE2\x9C"), "a truncated UTF-8 sequence (0xE2) at byte 3");
  EXPECT_EQ(unprintable_reason("\xE2"
                               "ab"),
            "a byte that is not valid UTF-8 (0x61) at byte 2");
}

}  // namespace
}  // namespace symmesh
