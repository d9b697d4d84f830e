// Fuzz target: quantities with units. Every parser documents InvalidArgument for bad input;
// an accepted value is finite and >= 0, and parse_quantity agrees with the parser of its
// kind.
#include <cmath>
#include <cstdint>
#include <optional>

#include "core/errors.hpp"
#include "core/quantity.hpp"
#include "tests/fuzz/fuzz_targets.hpp"

namespace symmesh::fuzz {
namespace {

template <typename T>
void require_same(const std::optional<T>& x, const std::optional<double>& y, QuantityKind kind) {
  require(x.has_value() == y.has_value(),
          "parse_quantity and the " + to_string(kind) + " parser disagree on accepting it");
  if (!x) return;
  require(static_cast<double>(*x) == *y,
          "parse_quantity and the " + to_string(kind) + " parser give different values");
  require(std::isfinite(*y) && *y >= 0, to_string(kind) + " is negative or not finite");
}

}  // namespace

void quantity(std::string_view data) {
  const auto bytes = answered<InvalidArgument>([&] { return parse_size_bytes(data); });
  require_same(bytes,
               answered<InvalidArgument>([&] { return parse_quantity(data, QuantityKind::size); }),
               QuantityKind::size);
  require_same(
      answered<InvalidArgument>([&] { return parse_bandwidth_bytes_per_s(data); }),
      answered<InvalidArgument>([&] { return parse_quantity(data, QuantityKind::bandwidth); }),
      QuantityKind::bandwidth);
  require_same(answered<InvalidArgument>([&] { return parse_time_s(data); }),
               answered<InvalidArgument>([&] { return parse_quantity(data, QuantityKind::time); }),
               QuantityKind::time);
  require_same(
      answered<InvalidArgument>([&] { return parse_flops_per_s(data); }),
      answered<InvalidArgument>([&] { return parse_quantity(data, QuantityKind::compute); }),
      QuantityKind::compute);
  QuantityKind kind;
  if (unit_kind(data, &kind)) require(!units_of(kind).empty(), "a unit of no kind");
}

}  // namespace symmesh::fuzz
