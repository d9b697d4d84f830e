#pragma once
// A simulation's timeline as a Chrome trace-event JSON document, which Perfetto
// (ui.perfetto.dev) and chrome://tracing open: one process per rank (pid = rank, named
// "rank R"), one thread per stream (tid = stream index, named by the stream), one complete
// ("X") event per op with ts and dur in microseconds, the op's category and its label,
// kind, detail and bytes as args. Hazards appear as instant ("i") events on the receiver.
#include <iosfwd>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "sim/run_result.hpp"

namespace symmesh::sim {

nlohmann::json chrome_trace_json(const RunResult& result);
void write_chrome_trace(const RunResult& result, std::ostream& out);
// Writes the trace to `path`; throws InvalidArgument when the file cannot be written.
void write_chrome_trace_file(const RunResult& result, const std::string& path);

}  // namespace symmesh::sim
