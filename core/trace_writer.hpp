#pragma once
// A run's timeline as a Chrome trace-event JSON document, which Perfetto
// (ui.perfetto.dev) and chrome://tracing open: one process per rank (pid = rank, named
// "rank R"), one thread per stream (tid = stream index, named by the stream), one complete
// ("X") event per op with ts and dur in microseconds, the op's category and its label,
// kind, detail and bytes as args. Hazards appear as instant ("i") events on the receiver.
// Names come from the Program that ran (the timeline holds indices only); the JSON is
// written here directly, so that any backend's result can be traced.
#include <string>

#include "core/program.hpp"
#include "core/run_result.hpp"

namespace symmesh {

std::string chrome_trace_json(const Program& program, const RunResult& result);
// A trace with no events (a run that recorded none).
std::string empty_chrome_trace();

// JSON text helpers (also for other writers of the core): a quoted, escaped string, and
// the shortest text that reads back as the same double (finite values only).
std::string json_string(const std::string& text);
std::string json_number(double value);

}  // namespace symmesh
