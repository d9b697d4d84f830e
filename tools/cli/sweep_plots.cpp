#include "tools/cli/sweep_plots.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>

#include "core/text.hpp"
#include "evaluation/scenario_evaluation.hpp"
#include "evaluation/training_layouts.hpp"
#include "tools/cli/atomic_file.hpp"
#include "tools/cli/gnuplot_child.hpp"

namespace symmesh::cli {

using namespace evaluation;
namespace {

namespace fs = std::filesystem;

const char* const kPlots[] = {"step-time", "breakdown"};

// gnuplot strings are double-quoted; keep names printable and quote-free.
// Text from the scenario (its name, mesh names, op names) is data, never gnuplot code.
// In a script it is a single-quoted string: gnuplot substitutes `command` (running it in a
// shell) inside double quotes but not inside single quotes, where the only escape is ''
// for a quote. Control characters (a newline would end the command) become '?'.
std::string gp_string(const std::string& text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'')
      out += "''";
    else
      out += is_ascii_control(c) ? '?' : c;
  }
  return out + "'";
}

// A label in a data file: gnuplot reads a double-quoted column there (no substitution in
// data); a double quote or backslash inside it, or a control character, would split the
// row, so they become '?' too.
std::string gp_data_label(const std::string& text) {
  std::string out = "\"";
  for (char c : text) out += c == '"' || c == '\\' || is_ascii_control(c) ? '?' : c;
  return out + "\"";
}

std::string unit_value(double seconds, const reports::SweepTimeUnit& unit) {
  std::ostringstream out;
  out.precision(9);
  out << seconds * unit.per_second;
  return out.str();
}

// Both images from one script: the SVG first, then the same plot as a PNG. The caller may
// set data / svg_out / png_out (the sweep renders from and into staged temporaries); by
// default the script reads NAME.dat and the images land next to it.
std::string render_script(const std::string& name, const std::string& plot) {
  return "if (!exists(\"data\")) data = \"" + name + ".dat\"\n" +
         "if (!exists(\"svg_out\")) svg_out = \"" + name + ".svg\"\n" +
         "if (!exists(\"png_out\")) png_out = \"" + name + ".png\"\n" +
         "set terminal svg size 900,540 dynamic font \"sans,12\"\n"
         "set termoption noenhanced\n"
         "set output svg_out\n" +
         plot +
         "\nif (strstrt(GPVAL_TERMINALS, \"pngcairo\") > 0) {\n"
         "  set terminal pngcairo size 900,540 font \"sans,10\"\n"
         "} else {\n"
         "  set terminal png size 900,540\n"
         "}\n"
         "set termoption noenhanced\n"
         "set output png_out\n"
         "replot\n"
         "unset output\n"
         "undefine data svg_out png_out\n";
}

// gnuplot cycles 8 colours: later lines differ by point type and dashes too.
std::string line_style(int block) {
  return "lt " + std::to_string(block % 8 + 1) + " pt " + std::to_string(5 + 2 * (block % 6)) +
         " dt " + std::to_string(block / 8 + 1);
}

// "*x8": the mesh with its first (outermost) dim left free; "*" for 1-D meshes.
std::vector<int> mesh_kind(const std::vector<int>& mesh) {
  return std::vector<int>(mesh.begin() + (mesh.empty() ? 0 : 1), mesh.end());
}

std::string kind_text(const std::vector<int>& kind) {
  std::string out = "*";
  for (int d : kind) out.append("x").append(std::to_string(d));
  return out;
}

std::pair<std::string, std::string> step_time_sources(const reports::SweepOutcome& o) {
  const reports::SweepTimeUnit unit = reports::sweep_time_unit(o.run);
  std::map<std::vector<int>, std::vector<const SweepPoint*>> kinds;
  for (const auto& p : o.run.points)
    if (p.simulated()) kinds[mesh_kind(p.mesh)].push_back(&p);
  std::string dat = "# symmesh sweep " + o.scenario.name +
                    ": step time vs GPUs, one block per mesh kind (first mesh dim free)\n"
                    "# gpus time_" +
                    unit.name + " nodes mesh\n";
  std::string plot;
  int block = 0;
  for (auto& [kind, points] : kinds) {
    std::stable_sort(points.begin(), points.end(),
                     [](const SweepPoint* a, const SweepPoint* b) { return a->gpus < b->gpus; });
    if (block > 0) dat += "\n\n";
    dat += "# mesh " + kind_text(kind) + "\n";
    for (const SweepPoint* p : points)
      dat += std::to_string(p->gpus) + " " + unit_value(p->total_time_s(), unit) + " " +
             std::to_string(p->nodes) + " " + mesh_text(p->mesh) + "\n";
    plot += std::string(block ? ", \\\n     " : "plot ") + "data index " + std::to_string(block) +
            " using 1:2 with linespoints lw 2 " + line_style(block) + " title " +
            gp_string("mesh " + kind_text(kind));
    ++block;
  }
  if (o.answer.max_time_s)
    plot += std::string(block ? ", \\\n     " : "plot ") + unit_value(*o.answer.max_time_s, unit) +
            " with lines dt 2 lw 2 lc rgb \"red\" title " +
            gp_string("objective " + format_time(*o.answer.max_time_s));
  if (plot.empty()) plot = "plot 1/0 notitle";
  std::string names;
  for (const auto& n : o.scenario.mesh_names) names += (names.empty() ? "" : " x ") + n;
  const std::string gp =
      "# symmesh sweep: step time vs GPUs, one line per mesh kind (the mesh with its first dim\n"
      "# free, e.g. *x8). Render in this folder: gnuplot step-time.gp\n"
      "reset\n"
      "set title " +
      gp_string(o.scenario.name + ": step time vs GPUs" +
                (names.empty() ? "" : " (mesh " + names + ")")) +
      "\nset xlabel \"GPUs\"\nset ylabel \"step time (" + unit.name +
      ")\"\n"
      "set logscale x 2\nset logscale y 10\nset grid\nset key outside right top\n" +
      render_script("step-time", plot);
  return {dat, gp};
}

// One bar of the breakdown: an op, or consecutive ops summed.
struct Bar {
  std::string label;
  double comm_s = 0, compute_s = 0, time_s = 0;
};

// Past kMaxBars ops the bars would merge into a black block. The first of these rules that
// leaves few enough bars sums ops into one bar:
//   1. consecutive ops that share a name prefix (before the first '.': "mlp_down" for
//      "mlp_down.dgrad");
//   2. in a model step (ops of layers named l<N>_), ops of the same name in every layer
//      ("l*_qkv" for l0_qkv … l79_qkv, "l*_qkv.dgrad");
//   3. in a model step, ops of the same kind and pass ("mm", "mm dgrad", "mm wgrad",
//      "attention_dgrad", "all_reduce"): what 80 or 126 layers need;
//   4. runs of equal length.
constexpr size_t kMaxBars = 40;

// "l12_qkv.dgrad" -> "l*_qkv.dgrad": a model step's layer number left out.
std::string without_layer(const std::string& name) {
  if (name.size() < 3 || name[0] != 'l' || !std::isdigit(static_cast<unsigned char>(name[1])))
    return name;
  size_t i = 1;
  while (i < name.size() && std::isdigit(static_cast<unsigned char>(name[i]))) ++i;
  if (i >= name.size() || name[i] != '_') return name;
  return "l*" + name.substr(i);
}

// "mm dgrad" for l3_qkv.dgrad: the op's kind, and for a matmul its backward product.
std::string kind_and_pass(const evaluation::OpReport& op) {
  if (op.name.find(".dgrad") != std::string::npos && op.op.find("dgrad") == std::string::npos)
    return op.op + " dgrad";
  if (op.name.find(".wgrad") != std::string::npos && op.op.find("wgrad") == std::string::npos)
    return op.op + " wgrad";
  return op.op;
}

// The ops grouped by key(op), groups in order of first appearance: every op of a key in
// one group when `anywhere`, else only consecutive ones. `labels` gets each group's key.
std::vector<std::vector<size_t>> grouped_by(
    const std::vector<evaluation::OpReport>& ops,
    const std::function<std::string(const evaluation::OpReport&)>& key, bool anywhere,
    std::vector<std::string>& labels) {
  std::vector<std::vector<size_t>> groups;
  std::map<std::string, size_t> index;
  labels.clear();
  for (size_t i = 0; i < ops.size(); ++i) {
    const std::string k = key(ops[i]);
    if (anywhere) {
      const auto [at, fresh] = index.emplace(k, groups.size());
      if (fresh) {
        groups.emplace_back();
        labels.push_back(k);
      }
      groups[at->second].push_back(i);
    } else if (!groups.empty() && labels.back() == k) {
      groups.back().push_back(i);
    } else {
      groups.push_back({i});
      labels.push_back(k);
    }
  }
  return groups;
}

std::vector<Bar> breakdown_bars(const std::vector<evaluation::OpReport>& ops, std::string& how) {
  const auto prefix = [](const evaluation::OpReport& op) {
    return op.name.substr(0, op.name.find('.'));
  };
  const auto same_name = [](const evaluation::OpReport& op) { return without_layer(op.name); };
  std::vector<std::vector<size_t>> groups;
  std::vector<std::string> labels;
  if (ops.size() > kMaxBars) {
    how = "ops summed by name prefix";
    groups = grouped_by(ops, prefix, false, labels);
    const bool layered = std::any_of(ops.begin(), ops.end(), [](const evaluation::OpReport& op) {
      return without_layer(op.name) != op.name;
    });
    if (layered && groups.size() > kMaxBars) {
      how = "each op summed over the layers";
      groups = grouped_by(ops, same_name, true, labels);
    }
    if (layered && groups.size() > kMaxBars) {
      how = "ops summed by kind over the layers";
      groups = grouped_by(ops, kind_and_pass, true, labels);
    }
    if (groups.size() > kMaxBars) {
      groups.clear();
      labels.clear();
      const size_t per = (ops.size() + kMaxBars - 1) / kMaxBars;
      for (size_t i = 0; i < ops.size(); ++i) {
        if (i % per == 0) groups.emplace_back();
        groups.back().push_back(i);
      }
      for (const auto& g : groups)
        labels.push_back(g.size() == 1 ? ops[g.front()].name
                                       : ops[g.front()].name + " +" + std::to_string(g.size() - 1));
      how = "ops summed " + std::to_string(per) + " at a time";
    }
  } else {
    for (size_t i = 0; i < ops.size(); ++i) {
      groups.push_back({i});
      labels.push_back(ops[i].name);
    }
  }
  std::vector<Bar> bars;
  for (size_t j = 0; j < groups.size(); ++j) {
    Bar bar;
    bar.label = labels[j];
    for (size_t i : groups[j]) {
      bar.comm_s += ops[i].comm_time_s;
      bar.compute_s += ops[i].compute_time_s;
      bar.time_s += ops[i].time_s;
    }
    bars.push_back(bar);
  }
  return bars;
}

std::pair<std::string, std::string> breakdown_sources(const reports::SweepOutcome& o) {
  const reports::SweepTimeUnit unit = reports::sweep_time_unit(o.run);
  std::string dat =
      "# op comm_" + unit.name + " compute_" + unit.name + " time_" + unit.name + "\n";
  std::string title = o.scenario.name + ": per-op time";
  if (o.answer.best) {
    const SweepPoint& best = o.run.points[*o.answer.best];
    title += " at " + std::to_string(best.gpus) + " GPUs, mesh " + point_layout_text(best);
    std::string how;
    for (const Bar& bar : breakdown_bars(best.report.ops, how))
      dat += gp_data_label(bar.label) + " " + unit_value(bar.comm_s, unit) + " " +
             unit_value(bar.compute_s, unit) + " " + unit_value(bar.time_s, unit) + "\n";
    if (!how.empty()) title += " (" + how + ")";
  }
  const std::string gp =
      "# symmesh sweep: the best point's time per op, communication vs compute (busiest\n"
      "# rank; they may overlap). Render in this folder: gnuplot breakdown.gp\n"
      "reset\n"
      "set title " +
      gp_string(title) + "\nset ylabel \"time (" + unit.name +
      ")\"\nset grid ytics\nset key outside right top\n"
      "set style data histograms\nset style histogram rowstacked\n"
      "set style fill solid 0.85 border -1\nset boxwidth 0.6\nset yrange [0:*]\n"
      "set xtics rotate by -30\n" +
      render_script("breakdown",
                    "plot data using 2:xtic(1) title \"comm\", \\\n"
                    "     '' using 3 title \"compute\", \\\n"
                    "     '' using 0:4 with points pt 7 ps 1.5 lc rgb \"black\" title \"op time\"");
  return {dat, gp};
}

// A layouts sweep's step time vs GPUs: the fastest layout of each count as priced, and as
// simulated where it was, with the objective.
// One unit for a layouts sweep's plots: that of the fastest layouts' priced steps.
reports::TimeUnit layouts_time_unit(const evaluation::TrainingLayoutsRun& run) {
  std::vector<double> times;
  for (const auto& size : run.sizes)
    if (!size.best.empty()) times.push_back(size.best.front().step_s);
  return reports::time_unit_for(times);
}

std::pair<std::string, std::string> layouts_step_time_sources(
    const Scenario& s, const evaluation::TrainingLayoutsRun& run) {
  const reports::TimeUnit unit = layouts_time_unit(run);
  std::string dat = "# symmesh sweep " + s.name +
                    ": the fastest layout of each GPU count, priced, then simulated\n"
                    "# gpus time_" + unit.name + " layout\n";
  bool any_simulated = false;
  for (const auto& size : run.sizes)
    if (!size.best.empty())
      dat += std::to_string(size.gpus) + " " + unit_value(size.best.front().step_s, unit) + " " +
             gp_data_label(strategies::to_string(size.best.front().layout)) + "\n";
  dat += "\n\n";
  for (const auto& size : run.sizes)
    if (const auto* step = size.fastest_simulated()) {
      any_simulated = true;
      dat += std::to_string(size.gpus) + " " + unit_value(step->step_s, unit) + " " +
             gp_data_label(strategies::to_string(step->estimate.layout)) + "\n";
    }
  std::string plot =
      "plot data index 0 using 1:2 with linespoints lw 2 " + line_style(0) +
      " title \"fastest layout, priced\"";
  if (any_simulated)
    plot += ", \\\n     data index 1 using 1:2 with linespoints lw 2 " + line_style(1) +
            " title \"fastest simulated\"";
  if (s.objective && s.objective->max_time_s)
    plot += ", \\\n     " + unit_value(*s.objective->max_time_s, unit) +
            " with lines dt 2 lw 2 lc rgb \"red\" title " +
            gp_string("objective " + format_time(*s.objective->max_time_s));
  const std::string gp =
      "# symmesh sweep: a model's step time vs GPUs, the fastest training layout of each\n"
      "# count. Render in this folder: gnuplot step-time.gp\n"
      "reset\nset title " +
      gp_string(s.name + ": step time vs GPUs (fastest layout of each count)") +
      "\nset xlabel \"GPUs\"\nset ylabel \"step time (" + unit.name +
      ")\"\nset logscale x 2\nset logscale y 10\nset grid\nset key outside right top\n" +
      render_script("step-time", plot);
  return {dat, gp};
}

// A layouts sweep's breakdown: where each count's fastest layout spends its step, as the
// closed form splits it (strategies/training_step_estimate.hpp), parts that add up to the
// step: compute, tensor-parallel and stage-to-stage communication over the micro-batches,
// the pipeline bubble, the data-parallel communication left exposed, the optimizer step.
std::pair<std::string, std::string> layouts_breakdown_sources(
    const Scenario& s, const evaluation::TrainingLayoutsRun& run) {
  const reports::TimeUnit unit = layouts_time_unit(run);
  std::string dat = "# gpus compute_" + unit.name + " tp_comm_" + unit.name + " p2p_" +
                    unit.name + " bubble_" + unit.name + " dp_exposed_" + unit.name +
                    " optimizer_" + unit.name + "\n";
  for (const auto& size : run.sizes) {
    if (size.best.empty()) continue;
    const strategies::TrainingEstimate& e = size.best.front();
    const double m = static_cast<double>(e.micro_batches);
    dat += gp_data_label(std::to_string(size.gpus)) + " " +
           unit_value(m * e.stage_compute_s, unit) + " " + unit_value(m * e.stage_tp_comm_s, unit) +
           " " + unit_value(m * e.stage_p2p_s, unit) + " " + unit_value(e.bubble_s, unit) + " " +
           unit_value(e.dp_exposed_s, unit) + " " + unit_value(e.optimizer_s, unit) + "\n";
  }
  const std::string gp =
      "# symmesh sweep: where the fastest layout of each GPU count spends its step (priced).\n"
      "# Render in this folder: gnuplot breakdown.gp\n"
      "reset\nset title " +
      gp_string(s.name + ": the fastest layout's step by part, per GPU count (priced)") +
      "\nset xlabel \"GPUs\"\nset ylabel \"time (" + unit.name +
      ")\"\nset grid ytics\nset key outside right top\n"
      "set style data histograms\nset style histogram rowstacked\n"
      "set style fill solid 0.85 border -1\nset boxwidth 0.6\nset yrange [0:*]\n" +
      render_script("breakdown",
                    "plot data using 2:xtic(1) title \"compute\", \\\n"
                    "     '' using 3 title \"TP comm\", \\\n"
                    "     '' using 4 title \"stage sends\", \\\n"
                    "     '' using 5 title \"bubble\", \\\n"
                    "     '' using 6 title \"DP exposed\", \\\n"
                    "     '' using 7 title \"optimizer\"");
  return {dat, gp};
}

}  // namespace

std::string find_on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  if (!path) return "";
  std::stringstream dirs(path);
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    const fs::path candidate = fs::path(dir.empty() ? "." : dir) / program;
    std::error_code ec;
    if (fs::is_regular_file(candidate, ec) && access(candidate.c_str(), X_OK) == 0)
      return fs::absolute(candidate, ec).string();
  }
  return "";
}

std::vector<std::string> sweep_plot_file_names() {
  std::vector<std::string> out;
  for (const char* plot : kPlots)
    for (const char* ext : {".dat", ".gp", ".svg", ".png"}) out.push_back(plot + std::string(ext));
  return out;
}

std::vector<std::pair<std::string, std::string>> sweep_plot_sources(
    const reports::SweepOutcome& o) {
  const auto [step_dat, step_gp] = step_time_sources(o);
  const auto [bar_dat, bar_gp] = breakdown_sources(o);
  return {{"step-time.dat", step_dat},
          {"step-time.gp", step_gp},
          {"breakdown.dat", bar_dat},
          {"breakdown.gp", bar_gp}};
}

bool image_is_complete(const std::string& path, const std::string& extension) {
  std::ifstream in(path, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (extension == ".svg") {
    const size_t end = text.rfind("</svg>");
    return end != std::string::npos &&
           text.find_first_not_of(" \n\r\t", end + 6) == std::string::npos;
  }
  // A PNG: the signature, and last the IEND chunk (length 0, type, CRC AE 42 60 82).
  static const std::string signature("\x89PNG\r\n\x1a\n", 8);
  static const std::string iend("\0\0\0\0IEND\xAE\x42\x60\x82", 12);
  return text.size() >= signature.size() + iend.size() && text.compare(0, 8, signature) == 0 &&
         text.compare(text.size() - iend.size(), iend.size(), iend) == 0;
}

std::vector<std::pair<std::string, std::string>> layouts_plot_sources(
    const Scenario& scenario, const evaluation::TrainingLayoutsRun& run) {
  const auto [step_dat, step_gp] = layouts_step_time_sources(scenario, run);
  const auto [bar_dat, bar_gp] = layouts_breakdown_sources(scenario, run);
  return {{"step-time.dat", step_dat},
          {"step-time.gp", step_gp},
          {"breakdown.dat", bar_dat},
          {"breakdown.gp", bar_gp}};
}

PlotOutput write_sweep_plots(const std::string& dir, const reports::SweepOutcome& outcome,
                             StagedOutputs& staged) {
  return write_plots(dir, sweep_plot_sources(outcome), staged);
}

PlotOutput write_layouts_plots(const std::string& dir, const Scenario& scenario,
                               const evaluation::TrainingLayoutsRun& run, StagedOutputs& staged) {
  return write_plots(dir, layouts_plot_sources(scenario, run), staged);
}

PlotOutput write_plots(const std::string& dir,
                       const std::vector<std::pair<std::string, std::string>>& sources,
                       StagedOutputs& staged) {
  PlotOutput out;
  for (const auto& [name, text] : sources) {
    staged.stage((fs::path(dir) / name).string(), text);
    out.files.push_back(name);
  }
  (void)gnuplot_time_limit_s();  // a malformed limit is refused with or without gnuplot
  const std::string gnuplot = find_on_path("gnuplot");
  std::string failure;
  for (const char* plot : kPlots) {
    const std::string name = plot;
    const std::string svg = (fs::path(dir) / (name + ".svg")).string();
    const std::string png = (fs::path(dir) / (name + ".png")).string();
    if (gnuplot.empty() || !failure.empty()) {
      staged.remove_at_commit(svg);
      staged.remove_at_commit(png);
      continue;
    }
    // Rendered from the staged script and data into staged images: nothing under its own
    // name changes before the commit.
    const std::string svg_tmp = staged.temporary_for(svg);
    const std::string png_tmp = staged.temporary_for(png);
    const std::string dir_name = (fs::path(dir) / name).string();
    // Absolute: gnuplot runs inside `dir`, which may be given relative.
    const auto absolute = [](const std::string& p) { return fs::absolute(p).string(); };
    // The paths hold the user's --out folder: quoted as data as well.
    const std::string assignments =
        "data=" + gp_string(absolute(staged.temporary_of(dir_name + ".dat"))) +
        "; svg_out=" + gp_string(absolute(svg_tmp)) + "; png_out=" + gp_string(absolute(png_tmp));
    const GnuplotRun run =
        run_gnuplot(gnuplot, dir, absolute(staged.temporary_of(dir_name + ".gp")), assignments);
    const int status = run.status;
    const bool whole = image_is_complete(svg_tmp, ".svg") && image_is_complete(png_tmp, ".png");
    if (run.timed_out || status != 0 || !whole) {
      const std::string first = run.errors.substr(0, run.errors.find('\n'));
      char limit[32];
      std::snprintf(limit, sizeof limit, "%g", gnuplot_time_limit_s());
      failure = run.timed_out
                    ? "gnuplot did not finish " + name + ".gp within " + limit +
                          " s (SYMMESH_GNUPLOT_TIME_LIMIT) and was killed"
                : status != 0 ? "gnuplot failed on " + name + ".gp (exit " +
                                    std::to_string(status) + ")" +
                                    (first.empty() ? "" : ": " + first)
                              : "gnuplot wrote an incomplete " + name + " image (a full disk?)";
      staged.discard(svg);
      staged.discard(png);
      staged.remove_at_commit(svg);
      staged.remove_at_commit(png);
      continue;
    }
    out.files.push_back(name + ".svg");
    out.files.push_back(name + ".png");
  }
  out.rendered = !gnuplot.empty() && failure.empty();
  const std::string how = "render with: cd " + dir +
                          " && gnuplot step-time.gp breakdown.gp (on Debian: apt-get "
                          "install gnuplot-nox)";
  if (gnuplot.empty())
    out.note = "gnuplot not found on PATH: wrote the plots' data (.dat) and scripts (.gp); " + how;
  else if (!failure.empty())
    out.note = failure + "; " + how;
  return out;
}

}  // namespace symmesh::cli
