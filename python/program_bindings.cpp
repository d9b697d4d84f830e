// _symmesh.Program: a core Program (core/program.hpp) built op by op from Python, one rank's
// ops at a time, and _symmesh.simulate_program, which runs it on the simulator (the sim
// backend, evaluation/backends.hpp) and returns what the run found as Python data: the
// makespan and every op's span, the hazards, the warnings, and — when some wait can never be
// satisfied — the deadlock report instead of a time. python/symmesh/symm_mem.py is the
// torch-shaped front; these calls take buffer ids, stream ids and indices.
#include "python/program_bindings.hpp"

#include <pybind11/stl.h>

#include <optional>

#include "core/cluster_spec.hpp"
#include "core/errors.hpp"
#include "core/program.hpp"
#include "evaluation/backends.hpp"
#include "python/library_mutex.hpp"
#include "scenario/scenario_loader.hpp"
#include "sim/deadlock_report.hpp"

namespace py = pybind11;

namespace symmesh::python {
namespace {

OpCategory category(const std::string& text) {
  if (text == "comm") return OpCategory::comm;
  if (text == "compute") return OpCategory::compute;
  if (text == "sync") return OpCategory::sync;
  if (text.empty()) return OpCategory::none;
  throw InvalidArgument("unknown op category '" + text + "' (comm, compute, sync)", "label");
}

LabelId label(Program& p, const std::string& name, const std::string& kind) {
  return p.label(OpLabel{name, category(kind), ""});
}

py::dict hazard_dict(const Hazard& h) {
  py::dict d;
  d["receiver"] = h.receiver;
  d["buffer"] = h.handle;
  d["earlier_sender"] = h.earlier_sender;
  d["later_sender"] = h.later_sender;
  d["begin_bytes"] = h.begin_bytes;
  d["end_bytes"] = h.end_bytes;
  d["earlier_label"] = h.earlier_label;
  d["later_label"] = h.later_label;
  d["time_s"] = h.time_s;
  d["message"] = h.to_string();
  return d;
}

py::dict blocked_dict(const sim::BlockedStream& b) {
  py::dict d;
  d["rank"] = b.rank;
  d["stream"] = b.stream;
  d["op"] = b.op_name;
  d["kind"] = b.op_kind;
  d["buffer"] = b.handle >= 0 ? py::cast(b.handle) : py::none();
  d["waits_for"] = b.waits_for;
  d["description"] = b.description;
  return d;
}

py::dict timeline_dict(const Program& p, const TimelineEntry& e) {
  const Stream& stream = p.streams(e.rank).at(e.stream);
  const StreamOp& op = stream.ops.at(e.op_index);
  py::dict d;
  d["rank"] = e.rank;
  d["stream"] = stream.name;
  d["op"] = e.op_index;
  d["kind"] = to_string(op.kind());
  d["label"] = p.label_of(op.label()).name;
  d["start_s"] = e.start_s;
  d["end_s"] = e.end_s;
  d["bytes"] = e.bytes;
  return d;
}

// Runs `program` on the cluster file at `cluster_path`. A deadlock is a result, not an
// error: "completed" is False, "time_s" None and "deadlock" says who waits on whom. Other
// failures raise (bad input: ScenarioError; a run past its limit: SimulationError).
py::dict simulate_program(const Program& program, const std::string& cluster_path,
                          double time_limit_s) {
  if (!(time_limit_s >= 0))
    throw InvalidArgument("expected a number >= 0, got " + std::to_string(time_limit_s),
                          "time_limit_s");
  RunResult result;
  std::optional<std::vector<sim::BlockedStream>> blocked;
  std::string deadlock_text;
  {
    py::gil_scoped_release unlocked;
    const std::lock_guard<std::mutex> one_at_a_time(library_mutex());
    const ClusterSpec cluster = load_cluster(cluster_path);
    RunRequest request;
    request.record_timeline = true;
    request.wall_clock_limit_s = time_limit_s;
    request.command = "symmesh.symm_mem.simulate";
    const auto backend = evaluation::make_backend("sim", &cluster, request.command);
    try {
      result = backend->run(program, request);
    } catch (const sim::DeadlockError& e) {
      blocked = e.blocked();
      deadlock_text = e.message();
    }
  }
  py::dict out;
  out["completed"] = !blocked.has_value();
  py::list hazards, warnings, timeline;
  if (blocked) {
    out["time_s"] = py::none();
    py::list streams;
    for (const sim::BlockedStream& b : *blocked) streams.append(blocked_dict(b));
    py::dict deadlock;
    deadlock["message"] = deadlock_text;
    deadlock["blocked"] = streams;
    out["deadlock"] = deadlock;
    out["peak_memory_bytes"] = py::list();
  } else {
    out["time_s"] = result.makespan_s;
    out["deadlock"] = py::none();
    for (const Hazard& h : result.hazards) hazards.append(hazard_dict(h));
    for (const std::string& w : result.warnings) warnings.append(w);
    for (const TimelineEntry& e : result.timeline) timeline.append(timeline_dict(program, e));
    out["peak_memory_bytes"] = result.peak_memory_bytes;
  }
  out["hazards"] = hazards;
  out["warnings"] = warnings;
  out["timeline"] = timeline;
  return out;
}

}  // namespace

void register_program(py::module_& m) {
  py::class_<BufferRef>(m, "BufferRef", "Bytes of one buffer: (symmetric, id, offset, size).")
      .def(py::init([](bool symmetric, int id, int64_t offset, int64_t size) {
             return BufferRef{symmetric ? BufferRef::Space::symmetric : BufferRef::Space::local,
                              id, offset, size};
           }),
           py::arg("symmetric"), py::arg("id"), py::arg("offset"), py::arg("size"))
      .def_property_readonly(
          "symmetric", [](const BufferRef& r) { return r.space == BufferRef::Space::symmetric; })
      .def_readonly("id", &BufferRef::id)
      .def_readonly("offset", &BufferRef::offset_bytes)
      .def_readonly("size", &BufferRef::size_bytes);

  // Every call checks its arguments as core/program.hpp does (InvalidArgument → ScenarioError
  // naming the call and the rank). Labels are (name, "comm" | "compute" | "sync").
  py::class_<Program>(m, "Program", "A core Program, built op by op (symmesh.symm_mem).")
      .def(py::init<int>(), py::arg("world_size"))
      .def_property_readonly("world_size", &Program::world_size)
      .def("world_group", &Program::world_group)
      .def("add_group", &Program::add_group, py::arg("ranks"))
      .def(
          "group_ranks", [](const Program& p, int group) { return p.group(group).ranks; },
          py::arg("group"))
      .def(
          "symm_alloc",
          [](Program& p, int group, int64_t bytes) { return p.symm_alloc(group, bytes).id; },
          py::arg("group"), py::arg("bytes"))
      .def(
          "local_alloc",
          [](Program& p, int rank, int64_t bytes) { return p.local_alloc(rank, bytes).id; },
          py::arg("rank"), py::arg("bytes"))
      .def("stream", &Program::stream, py::arg("rank"), py::arg("name"))
      .def(
          "put_signal",
          [](Program& p, int rank, int stream, const BufferRef& src, int handle,
             int64_t dst_offset, int peer, int signal, const std::string& name) {
            p.put_signal(rank, stream, src, p.symmetric(handle), dst_offset, peer,
                         label(p, name, "comm"), signal);
          },
          py::arg("rank"), py::arg("stream"), py::arg("src"), py::arg("handle"),
          py::arg("dst_offset"), py::arg("peer"), py::arg("signal"), py::arg("label"))
      .def(
          "wait_signal",
          [](Program& p, int rank, int stream, int handle, int peer, int signal,
             const std::string& name) {
            p.wait_signal(rank, stream, p.symmetric(handle), peer, label(p, name, "comm"),
                          signal);
          },
          py::arg("rank"), py::arg("stream"), py::arg("handle"), py::arg("peer"),
          py::arg("signal"), py::arg("label"))
      .def(
          "wait_group_signal",
          [](Program& p, int rank, int stream, int group, int peer, int signal,
             const std::string& name) {
            p.wait_signal(rank, stream, static_cast<GroupId>(group), peer,
                          label(p, name, "comm"), signal);
          },
          py::arg("rank"), py::arg("stream"), py::arg("group"), py::arg("peer"),
          py::arg("signal"), py::arg("label"))
      .def(
          "signal",
          [](Program& p, int rank, int stream, int group, int peer, int signal,
             const std::string& name) {
            p.signal(rank, stream, group, peer, label(p, name, "comm"), signal);
          },
          py::arg("rank"), py::arg("stream"), py::arg("group"), py::arg("peer"),
          py::arg("signal"), py::arg("label"))
      .def(
          "get",
          [](Program& p, int rank, int stream, const BufferRef& dst, int handle,
             int64_t src_offset, int peer, const std::string& name) {
            p.get(rank, stream, dst, p.symmetric(handle), src_offset, peer,
                  label(p, name, "comm"));
          },
          py::arg("rank"), py::arg("stream"), py::arg("dst"), py::arg("handle"),
          py::arg("src_offset"), py::arg("peer"), py::arg("label"))
      .def(
          "copy",
          [](Program& p, int rank, int stream, const BufferRef& dst, const BufferRef& src,
             const std::string& name) {
            if (dst.size_bytes != src.size_bytes)
              throw InvalidArgument("copy of " + std::to_string(src.size_bytes) +
                                        " bytes into a range of " +
                                        std::to_string(dst.size_bytes),
                                    "copy", rank);
            p.copy(rank, stream, CopyWork{dst, src, 1, 1, src.size_bytes, 0, 0, 0, 0},
                   label(p, name, "compute"));
          },
          py::arg("rank"), py::arg("stream"), py::arg("dst"), py::arg("src"), py::arg("label"))
      .def(
          "record_event",
          [](Program& p, int rank, int stream, const std::string& name) {
            return p.record_event(rank, stream, label(p, name, "sync"));
          },
          py::arg("rank"), py::arg("stream"), py::arg("label"))
      .def(
          "wait_event",
          [](Program& p, int rank, int stream, int event, const std::string& name) {
            p.wait_event(rank, stream, event, label(p, name, "sync"));
          },
          py::arg("rank"), py::arg("stream"), py::arg("event"), py::arg("label"))
      .def(
          "barrier",
          [](Program& p, int rank, int stream, int group, const std::string& name) {
            p.barrier(rank, stream, group, label(p, name, "sync"));
          },
          py::arg("rank"), py::arg("stream"), py::arg("group"), py::arg("label"))
      .def(
          "stream_names",
          [](const Program& p, int rank) {
            std::vector<std::string> names;
            for (const Stream& s : p.streams(rank)) names.push_back(s.name);
            return names;
          },
          py::arg("rank"));

  m.def("simulate_program", &simulate_program, py::arg("program"), py::arg("cluster"),
        py::arg("time_limit_s"));
}

}  // namespace symmesh::python
