#include "mhacfg/configurator/report/svg.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>

#include "mhacfg/configurator/report/report.hpp"

namespace mhacfg {

std::string xml_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    switch (c) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      default: o += c;
    }
  }
  return o;
}

namespace {

constexpr double kWidth = 720, kHeight = 420;
constexpr double kLeft = 92, kRight = 190, kTop = 44, kBottom = 62;
const char* kPalette[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#8C564B", "#333333"};

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

struct Axis {
  double lo = 0, hi = 1;
  bool log = false;
  bool bytes = false;
  double px_lo = 0, px_hi = 1;  // pixel positions of lo and hi

  double map(double v) const {
    const double t = log ? (std::log10(v) - std::log10(lo)) / (std::log10(hi) - std::log10(lo)) : (v - lo) / (hi - lo);
    return px_lo + t * (px_hi - px_lo);
  }
  std::string label(double v) const {
    if (bytes) return fmt_bytes(v);
    const double a = std::fabs(v);
    if (a == 0) return "0";
    if (a >= 1000 || a < 0.01) {
      std::string s = fmt_si(v, "");
      while (!s.empty() && s.back() == ' ') s.pop_back();
      return s;
    }
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return buf;
  }
  std::vector<double> ticks() const {
    std::vector<double> t;
    if (log && bytes) {  // powers of two, thinned to at most 8 ticks
      const int a = static_cast<int>(std::ceil(std::log2(lo) - 1e-9)), b = static_cast<int>(std::floor(std::log2(hi) + 1e-9));
      const int step = std::max(1, (b - a + 7) / 8);
      for (int e = a; e <= b; e += step) t.push_back(std::pow(2.0, e));
      return t;
    }
    if (log) {
      const int a = static_cast<int>(std::floor(std::log10(lo) + 1e-9)), b = static_cast<int>(std::ceil(std::log10(hi) - 1e-9));
      const bool fine = b - a <= 3;
      for (int e = a; e <= b; ++e)
        for (double m : fine ? std::vector<double>{1, 2, 5} : std::vector<double>{1}) {
          const double v = m * std::pow(10.0, e);
          if (v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9)) t.push_back(v);
        }
      return t;
    }
    const double span = hi - lo;
    const double raw = span / 6;
    const double mag = std::pow(10.0, std::floor(std::log10(raw)));
    double step = mag;
    for (double m : {1.0, 2.0, 5.0, 10.0})
      if (raw <= m * mag) {
        step = m * mag;
        break;
      }
    for (double v = std::ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) t.push_back(std::fabs(v) < step * 1e-9 ? 0 : v);
    return t;
  }
};

Axis make_axis(std::vector<double> values, bool log, bool bytes, double px_lo, double px_hi) {
  Axis ax;
  ax.log = log;
  ax.bytes = bytes;
  ax.px_lo = px_lo;
  ax.px_hi = px_hi;
  values.erase(std::remove_if(values.begin(), values.end(),
                              [&](double v) { return !std::isfinite(v) || (log && v <= 0); }),
               values.end());
  if (values.empty()) values = {1, 10};
  double lo = *std::min_element(values.begin(), values.end());
  double hi = *std::max_element(values.begin(), values.end());
  if (log) {
    if (hi <= lo * 1.0001) {
      lo /= 2;
      hi *= 2;
    }
    lo /= 1.25;
    hi *= 1.25;
  } else {
    if (hi == lo) {
      lo -= 1;
      hi += 1;
    }
    const double pad = (hi - lo) * 0.06;
    lo = lo >= 0 && lo - pad < 0 ? 0 : lo - pad;
    hi += pad;
  }
  ax.lo = lo;
  ax.hi = hi;
  return ax;
}

std::string marker_svg(const std::string& shape, double x, double y, double r, const std::string& fill,
                       const std::string& extra) {
  std::ostringstream o;
  if (shape == "square") {
    o << "<rect x=\"" << num(x - r) << "\" y=\"" << num(y - r) << "\" width=\"" << num(2 * r) << "\" height=\"" << num(2 * r)
      << "\" fill=\"" << fill << "\"" << extra << "/>";
  } else if (shape == "triangle") {
    o << "<polygon points=\"" << num(x) << "," << num(y - r * 1.2) << " " << num(x - r) << "," << num(y + r * 0.8) << " "
      << num(x + r) << "," << num(y + r * 0.8) << "\" fill=\"" << fill << "\"" << extra << "/>";
  } else if (shape == "diamond") {
    o << "<polygon points=\"" << num(x) << "," << num(y - r * 1.3) << " " << num(x + r) << "," << num(y) << " " << num(x)
      << "," << num(y + r * 1.3) << " " << num(x - r) << "," << num(y) << "\" fill=\"" << fill << "\"" << extra << "/>";
  } else {
    o << "<circle cx=\"" << num(x) << "\" cy=\"" << num(y) << "\" r=\"" << num(r) << "\" fill=\"" << fill << "\"" << extra << "/>";
  }
  return o.str();
}

// The palette colour of series i: its own index into the palette when it names one.
std::string series_color(const SvgSeries& s, std::size_t i) {
  return kPalette[(s.color >= 0 ? static_cast<std::size_t>(s.color) : i) % 8];
}

// The grid lines and tick labels of both axes, the plot frame and the axis labels.
void write_axes(std::ostream& o, const SvgPlot& p, const Axis& ax, const Axis& ay) {
  o << "<g class=\"axes\" stroke=\"#dddddd\">\n";
  for (double t : ax.ticks()) {
    const double x = ax.map(t);
    o << "<line x1=\"" << num(x) << "\" y1=\"" << kTop << "\" x2=\"" << num(x) << "\" y2=\"" << kHeight - kBottom << "\"/>";
    o << "<text x=\"" << num(x) << "\" y=\"" << kHeight - kBottom + 16 << "\" text-anchor=\"middle\" stroke=\"none\" fill=\"#333\">"
      << xml_escape(ax.label(t)) << "</text>\n";
  }
  for (double t : ay.ticks()) {
    const double y = ay.map(t);
    o << "<line x1=\"" << kLeft << "\" y1=\"" << num(y) << "\" x2=\"" << kWidth - kRight << "\" y2=\"" << num(y) << "\"/>";
    o << "<text x=\"" << kLeft - 6 << "\" y=\"" << num(y + 4) << "\" text-anchor=\"end\" stroke=\"none\" fill=\"#333\">"
      << xml_escape(ay.label(t)) << "</text>\n";
  }
  o << "</g>\n";
  o << "<rect x=\"" << kLeft << "\" y=\"" << kTop << "\" width=\"" << kWidth - kLeft - kRight << "\" height=\""
    << kHeight - kTop - kBottom << "\" fill=\"none\" stroke=\"#555\"/>\n";
  o << "<text x=\"" << num((kLeft + kWidth - kRight) / 2) << "\" y=\"" << kHeight - kBottom + 38
    << "\" text-anchor=\"middle\" class=\"xlabel\">" << xml_escape(p.x_label) << "</text>\n";
  o << "<text transform=\"translate(14," << num((kTop + kHeight - kBottom) / 2) << ") rotate(-90)\" text-anchor=\"middle\" class=\"ylabel\">"
    << xml_escape(p.y_label) << "</text>\n";
}

// Reference lines: horizontal at a y value, vertical at an x value, each with its label.
void write_refs(std::ostream& o, const SvgPlot& p, const Axis& ax, const Axis& ay) {
  for (const auto& r : p.refs) {
    if (r.horizontal) {
      const double y = ay.map(r.value);
      o << "<line x1=\"" << kLeft << "\" y1=\"" << num(y) << "\" x2=\"" << kWidth - kRight << "\" y2=\"" << num(y)
        << "\" stroke=\"#B00020\" stroke-width=\"1.5\" stroke-dasharray=\"6 4\"/>";
      o << "<text x=\"" << kWidth - kRight - 4 << "\" y=\"" << num(y - 5) << "\" text-anchor=\"end\" fill=\"#B00020\">"
        << xml_escape(r.label) << "</text>\n";
    } else {
      const double x = ax.map(r.value);
      o << "<line x1=\"" << num(x) << "\" y1=\"" << kTop << "\" x2=\"" << num(x) << "\" y2=\"" << kHeight - kBottom
        << "\" stroke=\"#B00020\" stroke-width=\"1.5\" stroke-dasharray=\"6 4\"/>";
      o << "<text x=\"" << num(x + 4) << "\" y=\"" << kTop + 14 << "\" fill=\"#B00020\">" << xml_escape(r.label) << "</text>\n";
    }
  }
}

// Each series: its line through the points, its markers with their labels as titles.
void write_series(std::ostream& o, const SvgPlot& p, const Axis& ax, const Axis& ay) {
  for (std::size_t i = 0; i < p.series.size(); ++i) {
    const SvgSeries& s = p.series[i];
    const std::string color = series_color(s, i);
    o << "<g class=\"series\" data-name=\"" << xml_escape(s.name) << "\">\n";
    if (s.line && s.points.size() > 1) {
      o << "<polyline fill=\"none\" stroke=\"" << color << "\" stroke-width=\"2\" points=\"";
      for (const auto& pt : s.points) o << num(ax.map(pt.x)) << "," << num(ay.map(pt.y)) << " ";
      o << "\"/>\n";
    }
    if (s.markers)
      for (const auto& pt : s.points) {
        const double x = ax.map(pt.x), y = ay.map(pt.y);
        const std::string extra = s.highlight ? " stroke=\"#000\" stroke-width=\"2\"" : " stroke=\"#fff\" stroke-width=\"0.8\"";
        o << "<g>" << marker_svg(s.marker, x, y, s.highlight ? 7 : 4, color, extra);
        if (!pt.label.empty()) o << "<title>" << xml_escape(pt.label) << "</title>";
        o << "</g>";
        if (s.annotate && !pt.label.empty())
          o << "<text x=\"" << num(x + 9) << "\" y=\"" << num(y - 8) << "\" font-size=\"11\">" << xml_escape(pt.label) << "</text>";
        o << "\n";
      }
    o << "</g>\n";
  }
}

// The legend right of the plot: the first 14 series, names cut to 24 characters.
void write_legend(std::ostream& o, const SvgPlot& p) {
  double ly = kTop + 6;
  o << "<g class=\"legend\">\n";
  for (std::size_t i = 0; i < p.series.size() && i < 14; ++i) {
    const SvgSeries& s = p.series[i];
    const std::string color = series_color(s, i);
    const double lx = kWidth - kRight + 12;
    if (s.line) o << "<line x1=\"" << lx << "\" y1=\"" << num(ly) << "\" x2=\"" << lx + 18 << "\" y2=\"" << num(ly) << "\" stroke=\"" << color << "\" stroke-width=\"2\"/>";
    if (s.markers) o << marker_svg(s.marker, lx + 9, ly, s.highlight ? 6 : 4, color, s.highlight ? " stroke=\"#000\" stroke-width=\"2\"" : "");
    std::string name = s.name.size() > 24 ? s.name.substr(0, 23) + "…" : s.name;
    o << "<text x=\"" << lx + 24 << "\" y=\"" << num(ly + 4) << "\" font-size=\"11\">" << xml_escape(name) << "</text>\n";
    ly += 17;
  }
  o << "</g>\n";
}

}  // namespace

std::string render_svg(const SvgPlot& p, bool standalone) {
  std::vector<double> xs, ys;
  for (const auto& s : p.series)
    for (const auto& pt : s.points) {
      xs.push_back(pt.x);
      ys.push_back(pt.y);
    }
  for (const auto& r : p.refs) (r.horizontal ? ys : xs).push_back(r.value);
  const Axis ax = make_axis(xs, p.log_x, p.x_bytes, kLeft, kWidth - kRight);
  const Axis ay = make_axis(ys, p.log_y, p.y_bytes, kHeight - kBottom, kTop);
  std::ostringstream o;
  o << "<svg" << (standalone ? " xmlns=\"http://www.w3.org/2000/svg\"" : "") << " class=\"plot\" id=\"" << xml_escape(p.id) << "\" viewBox=\"0 0 " << kWidth
    << " " << kHeight << "\" width=\"" << kWidth << "\" height=\"" << kHeight
    << "\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\" font-size=\"12\" role=\"img\">\n";
  o << "<title>" << xml_escape(p.title) << "</title>\n";
  o << "<rect x=\"0\" y=\"0\" width=\"" << kWidth << "\" height=\"" << kHeight << "\" fill=\"#ffffff\"/>\n";
  o << "<text x=\"" << kLeft << "\" y=\"24\" font-size=\"15\" font-weight=\"bold\">" << xml_escape(p.title) << "</text>\n";
  write_axes(o, p, ax, ay);
  write_refs(o, p, ax, ay);
  write_series(o, p, ax, ay);
  write_legend(o, p);
  if (!p.note.empty())
    o << "<text x=\"" << kLeft << "\" y=\"" << kHeight - 6 << "\" font-size=\"10\" fill=\"#555\">" << xml_escape(p.note) << "</text>\n";
  o << "</svg>\n";
  return o.str();
}

}  // namespace mhacfg
