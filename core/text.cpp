#include "core/text.hpp"

#include <cstdio>

namespace symmesh {

std::string format_bytes(int64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int u = 0;
  while (value >= 1024 && u < 4) value /= 1024, ++u;
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, u == 0 ? "%.0f %s" : "%.2f %s", value, units[u]);
  return buffer;
}

}  // namespace symmesh
