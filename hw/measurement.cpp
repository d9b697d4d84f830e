#include "hw/measurement.hpp"

#include <algorithm>
#include <limits>

namespace symmesh::hw {

double timeline_span_s(const std::vector<MeasuredOp>& timeline) {
  if (timeline.empty()) return 0;
  double first = std::numeric_limits<double>::infinity();
  double last = -first;
  for (const MeasuredOp& op : timeline) {
    first = std::min(first, op.start_s);
    last = std::max(last, op.end_s);
  }
  return last - first;
}

}  // namespace symmesh::hw
