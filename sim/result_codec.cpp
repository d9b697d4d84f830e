#include "sim/result_codec.hpp"

#include <cstring>
#include <type_traits>

#include "core/errors.hpp"
#include "sim/deadlock_report.hpp"

namespace symmesh::sim {
namespace {

constexpr char kResultTag = 'R';
constexpr char kErrorTag = 'E';

// Error kinds, most derived first when encoding.
enum class ErrorKind : int32_t {
  deadlock,
  hazard,
  timeout,
  invalid_argument,
  unsupported,
  backend,
  error
};

class Writer {
 public:
  template <typename T>
  void put(T value) {
    static_assert(std::is_trivially_copyable_v<T>);
    out_.append(reinterpret_cast<const char*>(&value), sizeof(T));
  }
  void put(const std::string& s) {
    put<int64_t>(static_cast<int64_t>(s.size()));
    out_.append(s);
  }
  void put(const std::vector<unsigned char>& bytes) {
    put<int64_t>(static_cast<int64_t>(bytes.size()));
    out_.append(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

class Reader {
 public:
  explicit Reader(const std::string& in) : in_(in) {}
  template <typename T>
  T get() {
    static_assert(std::is_trivially_copyable_v<T>);
    need(sizeof(T));
    T value;
    std::memcpy(&value, in_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return value;
  }
  std::string get_string() {
    const size_t n = get_size();
    std::string s = in_.substr(pos_, n);
    pos_ += n;
    return s;
  }
  std::vector<unsigned char> get_bytes() {
    const size_t n = get_size();
    std::vector<unsigned char> v(in_.begin() + static_cast<std::ptrdiff_t>(pos_),
                                 in_.begin() + static_cast<std::ptrdiff_t>(pos_ + n));
    pos_ += n;
    return v;
  }
  size_t get_size() {
    const int64_t n = get<int64_t>();
    if (n < 0) fail();
    need(static_cast<size_t>(n));
    return static_cast<size_t>(n);
  }
  bool done() const { return pos_ == in_.size(); }

 private:
  void need(size_t n) const {
    if (in_.size() - pos_ < n) fail();
  }
  [[noreturn]] static void fail() {
    throw BackendError("the simulation process sent a truncated or malformed result",
                       "run_simulation");
  }
  const std::string& in_;
  size_t pos_ = 0;
};

void put_error_fields(Writer& w, ErrorKind kind, const Error& e) {
  w.put<char>(kErrorTag);
  w.put<int32_t>(static_cast<int32_t>(kind));
  w.put(e.message());
  w.put(e.where());
  w.put<int32_t>(e.rank() ? 1 : 0);
  w.put<int32_t>(e.rank().value_or(-1));
}

[[noreturn]] void throw_decoded(Reader& r) {
  const auto kind = static_cast<ErrorKind>(r.get<int32_t>());
  std::string message = r.get_string();
  std::string where = r.get_string();
  const bool has_rank = r.get<int32_t>() != 0;
  const int rank_value = r.get<int32_t>();
  const std::optional<int> rank = has_rank ? std::optional<int>(rank_value) : std::nullopt;
  switch (kind) {
    case ErrorKind::deadlock: {
      std::vector<BlockedStream> blocked(r.get_size());
      for (BlockedStream& b : blocked) {
        b.rank = r.get<int32_t>();
        b.stream = r.get_string();
        b.op_name = r.get_string();
        b.op_kind = r.get_string();
        b.handle = r.get<int32_t>();
        b.waits_for.resize(r.get_size());
        for (int& x : b.waits_for) x = r.get<int32_t>();
        b.description = r.get_string();
      }
      throw DeadlockError(std::move(blocked));
    }
    case ErrorKind::hazard:
      throw HazardError(message, where, rank);
    case ErrorKind::timeout:
      throw Timeout(message, where, rank);
    case ErrorKind::invalid_argument:
      throw InvalidArgument(message, where, rank);
    case ErrorKind::unsupported:
      throw Unsupported(message, where, rank);
    case ErrorKind::backend:
      throw BackendError(message, where, rank);
    case ErrorKind::error:
      throw Error(message, where, rank);
  }
  throw BackendError("the simulation process sent an unknown error kind", "run_simulation");
}

}  // namespace

std::string encode_result(const RunResult& result) {
  Writer w;
  w.put<char>(kResultTag);
  w.put<double>(result.makespan_s);
  w.put<int64_t>(static_cast<int64_t>(result.timeline.size()));
  for (const TimelineEntry& e : result.timeline) w.put<TimelineEntry>(e);
  w.put<int64_t>(static_cast<int64_t>(result.details.size()));
  for (const std::string& d : result.details) w.put(d);
  w.put<int64_t>(static_cast<int64_t>(result.label_spans.size()));
  for (const LabelSpan& s : result.label_spans) {
    w.put(s.name);
    w.put<double>(s.start_s);
    w.put<double>(s.end_s);
    w.put<double>(s.busiest_comm_s);
    w.put<double>(s.busiest_compute_s);
  }
  w.put<int64_t>(static_cast<int64_t>(result.peak_memory_bytes.size()));
  for (int64_t b : result.peak_memory_bytes) w.put<int64_t>(b);
  w.put<int64_t>(static_cast<int64_t>(result.hazards.size()));
  for (const Hazard& h : result.hazards) {
    w.put<int32_t>(h.receiver);
    w.put<int32_t>(h.handle);
    w.put<int32_t>(h.earlier_sender);
    w.put<int32_t>(h.later_sender);
    w.put<int64_t>(h.begin_bytes);
    w.put<int64_t>(h.end_bytes);
    w.put(h.earlier_label);
    w.put(h.later_label);
    w.put<double>(h.time_s);
  }
  w.put<int64_t>(static_cast<int64_t>(result.outputs.size()));
  for (const OutputBytes& o : result.outputs) {
    w.put(o.name);
    w.put<int32_t>(o.rank);
    w.put(o.bytes);
  }
  w.put<int64_t>(static_cast<int64_t>(result.warnings.size()));
  for (const std::string& s : result.warnings) w.put(s);
  w.put<int64_t>(result.backend_memory_bytes);
  w.put<double>(result.backend_wall_s);
  w.put<double>(result.backend_cpu_s);
  return w.take();
}

std::string encode_error(std::exception_ptr error) {
  Writer w;
  try {
    std::rethrow_exception(error);
  } catch (const DeadlockError& e) {
    put_error_fields(w, ErrorKind::deadlock, e);
    w.put<int64_t>(static_cast<int64_t>(e.blocked().size()));
    for (const BlockedStream& b : e.blocked()) {
      w.put<int32_t>(b.rank);
      w.put(b.stream);
      w.put(b.op_name);
      w.put(b.op_kind);
      w.put<int32_t>(b.handle);
      w.put<int64_t>(static_cast<int64_t>(b.waits_for.size()));
      for (int x : b.waits_for) w.put<int32_t>(x);
      w.put(b.description);
    }
  } catch (const HazardError& e) {
    put_error_fields(w, ErrorKind::hazard, e);
  } catch (const Timeout& e) {
    put_error_fields(w, ErrorKind::timeout, e);
  } catch (const InvalidArgument& e) {
    put_error_fields(w, ErrorKind::invalid_argument, e);
  } catch (const Unsupported& e) {
    put_error_fields(w, ErrorKind::unsupported, e);
  } catch (const BackendError& e) {
    put_error_fields(w, ErrorKind::backend, e);
  } catch (const Error& e) {
    put_error_fields(w, ErrorKind::error, e);
  } catch (const std::exception& e) {
    put_error_fields(w, ErrorKind::backend,
                     BackendError(std::string("simulation failed: ") + e.what(), "simulation"));
  } catch (...) {
    put_error_fields(w, ErrorKind::backend,
                     BackendError("simulation failed with a non-standard exception", "simulation"));
  }
  return w.take();
}

RunResult decode_message(const std::string& message) {
  Reader r(message);
  const char tag = r.get<char>();
  if (tag == kErrorTag) throw_decoded(r);
  if (tag != kResultTag)
    throw BackendError("the simulation process sent an unknown message", "run_simulation");
  RunResult result;
  result.makespan_s = r.get<double>();
  result.timeline.resize(r.get_size());
  for (TimelineEntry& e : result.timeline) e = r.get<TimelineEntry>();
  result.details.resize(r.get_size());
  for (std::string& d : result.details) d = r.get_string();
  result.label_spans.resize(r.get_size());
  for (LabelSpan& s : result.label_spans) {
    s.name = r.get_string();
    s.start_s = r.get<double>();
    s.end_s = r.get<double>();
    s.busiest_comm_s = r.get<double>();
    s.busiest_compute_s = r.get<double>();
  }
  result.peak_memory_bytes.resize(r.get_size());
  for (int64_t& b : result.peak_memory_bytes) b = r.get<int64_t>();
  result.hazards.resize(r.get_size());
  for (Hazard& h : result.hazards) {
    h.receiver = r.get<int32_t>();
    h.handle = r.get<int32_t>();
    h.earlier_sender = r.get<int32_t>();
    h.later_sender = r.get<int32_t>();
    h.begin_bytes = r.get<int64_t>();
    h.end_bytes = r.get<int64_t>();
    h.earlier_label = r.get_string();
    h.later_label = r.get_string();
    h.time_s = r.get<double>();
  }
  result.outputs.resize(r.get_size());
  for (OutputBytes& o : result.outputs) {
    o.name = r.get_string();
    o.rank = r.get<int32_t>();
    o.bytes = r.get_bytes();
  }
  result.warnings.resize(r.get_size());
  for (std::string& s : result.warnings) s = r.get_string();
  result.backend_memory_bytes = r.get<int64_t>();
  result.backend_wall_s = r.get<double>();
  result.backend_cpu_s = r.get<double>();
  if (!r.done()) throw BackendError("the simulation process sent trailing bytes", "run_simulation");
  return result;
}

}  // namespace symmesh::sim
