// unprintable_reason: the first byte of a text that is not printable UTF-8. Expectations
// from the Unicode standard's definition of well-formed UTF-8 (Table 3-7: the valid byte
// sequences) and its C0/C1 control ranges. format_fixed and format_gib: printf's rounding
// and 2^30 bytes a GiB, worked by hand below.
#include "core/text.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

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

TEST(UnprintableReason, InvisibleFormatCharactersAreRefused) {
  // UTF-8 of U+200B (E2 80 8B), U+202E (E2 80 AE), U+2066 (E2 81 A6), U+FEFF (EF BB BF).
  EXPECT_EQ(unprintable_reason("a\xE2\x80\x8B"),
            "an invisible format character (U+200B) at byte 2");
  EXPECT_EQ(unprintable_reason("ab\xE2\x80\xAE"),
            "an invisible format character (U+202E) at byte 3");
  EXPECT_EQ(unprintable_reason("\xE2\x81\xA6x"),
            "an invisible format character (U+2066) at byte 1");
  EXPECT_EQ(unprintable_reason("\xEF\xBB\xBFname"),
            "an invisible format character (U+FEFF) at byte 1");
  // Visible neighbours stay printable: U+2010 (hyphen, E2 80 90), U+00E9 (C3 A9).
  // (A hex escape takes every hex digit after it: literals are split before a letter.)
  EXPECT_EQ(unprintable_reason("a\xE2\x80\x90"
                               "b \xC3\xA9"),
            "");
}

TEST(PrintableOrMarked, EachRefusedByteBecomesAQuestionMark) {
  EXPECT_EQ(printable_or_marked("plain `$(x)' caf\xC3\xA9"), "plain `$(x)' caf\xC3\xA9");
  EXPECT_EQ(printable_or_marked("a\nb\x1B"), "a?b?");
  EXPECT_EQ(printable_or_marked("a\xC2\x9B"
                                "b"),
            "a??b");                                            // C1: two bytes, two marks
  EXPECT_EQ(printable_or_marked("x\xE2\x80\xAEy"), "x???y");    // U+202E: three bytes
  EXPECT_EQ(printable_or_marked("\xFF\xC3\xA9"), "?\xC3\xA9");  // a bad byte, then é
  // What it makes is always printable.
  EXPECT_EQ(unprintable_reason(printable_or_marked("\xE2\x80\x8B\xC0\xAF\x7F\xF4\x90")), "");
}

// printf's %.*f, by hand: 3.14159 to 3 decimals is 3.142; 0.5 to 0 decimals rounds to even.
TEST(FormatFixed, PrintsTheGivenDecimalsAndNamesWhatIsNotANumber) {
  EXPECT_EQ(format_fixed(3.14159, 3), "3.142");
  EXPECT_EQ(format_fixed(0.5, 0), "0");
  EXPECT_EQ(format_fixed(-2.25, 1), "-2.2");
  EXPECT_EQ(format_fixed(std::numeric_limits<double>::infinity(), 2), "inf");
  EXPECT_EQ(format_fixed(-std::numeric_limits<double>::infinity(), 2), "-inf");
  EXPECT_EQ(format_fixed(std::nan(""), 2), "-");
}

// 80 GiB = 80 · 2^30 bytes = 85,899,345,920; an H100's 80 GB (8e10 bytes) is 74.51 GiB.
TEST(FormatGib, BinaryGigabytesWithTwoDecimals) {
  EXPECT_EQ(format_gib(85899345920.0), "80.00 GiB");
  EXPECT_EQ(format_gib(8e10), "74.51 GiB");
}

}  // namespace
}  // namespace symmesh
