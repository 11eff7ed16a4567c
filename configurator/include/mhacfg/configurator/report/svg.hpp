// SVG charts drawn by mhacfg itself (no external references): line and scatter plots with linear or
// logarithmic axes, ticks, units, a legend, reference lines and highlighted points.
#pragma once

#include <string>
#include <vector>

namespace mhacfg {

struct SvgPoint {
  double x = 0;
  double y = 0;
  std::string label;  // tooltip (<title>) and, when `annotate`, a text label
};

struct SvgSeries {
  std::string name;
  std::vector<SvgPoint> points;
  bool line = true;       // connect the points
  bool markers = true;
  int color = -1;         // palette index; -1: the series index
  std::string marker = "circle";  // circle, square, triangle, diamond
  bool highlight = false; // drawn larger, with an outline
  bool annotate = false;
};

struct SvgRefLine {
  bool horizontal = true;
  double value = 0;
  std::string label;
};

struct SvgPlot {
  std::string id;       // file stem and element id
  std::string title;
  std::string x_label;  // with units
  std::string y_label;
  bool log_x = false;
  bool log_y = false;
  bool x_bytes = false;  // tick labels as KiB/MiB/GiB
  bool y_bytes = false;
  std::vector<SvgSeries> series;
  std::vector<SvgRefLine> refs;
  std::string note;     // one line under the plot
};

// An <svg> element, 720 x 420 user units. `standalone` adds the SVG namespace declaration a .svg
// file needs; inline in HTML it is left out, so the page names no URL at all.
std::string render_svg(const SvgPlot& p, bool standalone = false);

// Text escaping for SVG and HTML.
std::string xml_escape(const std::string& s);

}  // namespace mhacfg
