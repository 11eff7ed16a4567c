// Design-review documents: a self-contained HTML page (inline CSS and SVG, no external references)
// and Markdown with the plots written as SVG files beside it.
#pragma once

#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "mhacfg/configurator/report/report.hpp"
#include <string>
#include <utility>
#include <vector>

#include "mhacfg/configurator/report/svg.hpp"

namespace mhacfg {

std::string render_html(const Report& r, const std::vector<SvgPlot>& plots);

// The Markdown (tables, notes, and image references relative to <dir>); appends (<dir>/<plot id>.svg,
// its SVG) for each plot to `files`, for the caller to write with the report (write_files_atomic).
std::string render_markdown_with_plots(const Report& r, const std::vector<SvgPlot>& plots, const std::string& dir,
                                       std::vector<std::pair<std::string, std::string>>& files);

// Writes a command's result: html (with plots) or markdown with --out-dir (plots beside it, the
// Markdown also saved as <dir>/report.md) call make_plots; other formats render the report alone.
void emit(const Report& r, Format f, const std::string& out_dir, const std::function<std::vector<SvgPlot>()>& make_plots,
          std::ostream& out);

}  // namespace mhacfg
