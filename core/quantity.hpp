#pragma once
// Quantities with units, as scenario files write them ("450 GB/s", "80 GiB", "1 us",
// "989.4 TFLOP/s"), parsed into SI values: bytes, bytes/s, seconds, FLOP/s. A number
// without a unit, a unit of the wrong kind, a negative, NaN or infinite value are errors,
// so nobody has to guess whether "50" meant gigabits or gigabytes.
//
//   size       B KB MB GB TB (powers of 1000), KiB MiB GiB TiB (powers of 1024) -> bytes
//   bandwidth  MB/s GB/s TB/s (bytes), Mb/s Gb/s Tb/s (bits, /8)               -> bytes/s
//   time       s ms us ns                                                       -> seconds
//   compute    GFLOP/s TFLOP/s PFLOP/s                                          -> FLOP/s
//
// The number is decimal with an optional fraction and exponent ("3.35 TB/s", "1e3 us");
// spaces between number and unit are optional ("450GB/s"). Units are case-sensitive
// (Gb/s is bits, GB/s bytes).
#include <cstdint>
#include <string>
#include <string_view>

namespace symmesh {

enum class QuantityKind { size, bandwidth, time, compute };

std::string to_string(QuantityKind kind);  // "size", "bandwidth", "time", "compute"
// A worked example of the kind, for messages: "64 MiB", "450 GB/s", "1 us", "989.4 TFLOP/s".
std::string example_of(QuantityKind kind);
// The units a kind accepts, for messages: "B, KB, MB, GB, TB, KiB, MiB, GiB, TiB".
std::string units_of(QuantityKind kind);

// Every parser throws InvalidArgument(message, where) on bad input. The message names the
// value and the expected kind with an example, e.g. "bandwidth '450' needs a unit, e.g.
// '450 GB/s'" or "'80 GiB' is a size, but a bandwidth is expected here, e.g. '450 GB/s'".

// Exact: "1.5 KB" is 1500, "0.5 KiB" is 512; fractional byte counts ("1.5 B") and counts
// beyond int64 are rejected.
int64_t parse_size_bytes(std::string_view text, std::string_view where = "size");
double parse_bandwidth_bytes_per_s(std::string_view text, std::string_view where = "bandwidth");
double parse_time_s(std::string_view text, std::string_view where = "time");
double parse_flops_per_s(std::string_view text, std::string_view where = "compute");
// Any kind; sizes come back as a double holding an exact byte count.
double parse_quantity(std::string_view text, QuantityKind kind,
                      std::string_view where = "quantity");

// The kind a unit belongs to, if it is one symmesh knows ("GB/s" -> bandwidth).
bool unit_kind(std::string_view unit, QuantityKind* kind);

}  // namespace symmesh
