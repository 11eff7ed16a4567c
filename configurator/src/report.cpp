#include "mhacfg/configurator/report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "mhacfg/costmodel/errors.hpp"
#include "mhacfg/costmodel/io.hpp"

namespace mhacfg {

std::string_view to_string(Format f) {
  switch (f) {
    case Format::table: return "table";
    case Format::json: return "json";
    case Format::markdown: return "markdown";
    case Format::csv: return "csv";
    case Format::html: return "html";
  }
  MHACFG_CHECK(false, "unknown Format");
}

Format parse_format(std::string_view name, const std::vector<Format>& allowed) {
  std::string list;
  for (Format f : allowed) {
    if (to_string(f) == name) return f;
    list += (list.empty() ? "" : ", ") + std::string(to_string(f));
  }
  throw InputError("--format", std::string(name), "unknown format (expected " + list + ")");
}

std::string fmt_int(std::int64_t v) {
  std::string digits = std::to_string(v < 0 ? -v : v);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return v < 0 ? "-" + out : out;
}

std::string fmt_fixed(double v, int decimals) {
  char buf[64];
  // Beyond 1e15 fixed notation is unreadable (and past 1e63 would not fit): scientific instead.
  std::snprintf(buf, sizeof buf, std::fabs(v) < 1e15 ? "%.*f" : "%.*e", decimals, v);
  return buf;
}

std::string fmt_si(double v, std::string_view unit) {
  static const char* prefixes[] = {"", "K", "M", "G", "T", "P", "E"};
  int i = 0;
  double a = std::fabs(v);
  while (a >= 1000.0 && i < 6) {
    a /= 1000.0;
    v /= 1000.0;
    ++i;
  }
  const int decimals = a >= 100 ? 1 : 2;
  return fmt_fixed(v, i == 0 && v == std::floor(v) ? 0 : decimals) + " " + prefixes[i] + std::string(unit);
}

std::string fmt_count(double v) {
  static const char* suffixes[] = {"", " K", " M", " B", " T"};
  int i = 0;
  while (std::fabs(v) >= 1000.0 && i < 4) {
    v /= 1000.0;
    ++i;
  }
  if (i == 0) return fmt_fixed(v, 0);
  return fmt_fixed(v, std::fabs(v) >= 100 ? 1 : 2) + suffixes[i];
}

std::string fmt_bytes(double bytes) {
  static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int i = 0;
  while (std::fabs(bytes) >= 1024.0 && i < 5) {
    bytes /= 1024.0;
    ++i;
  }
  if (i == 0 || bytes == std::floor(bytes)) return fmt_fixed(bytes, 0) + " " + units[i];
  return fmt_fixed(bytes, std::fabs(bytes) >= 100 ? 1 : 2) + " " + units[i];
}

std::string fmt_ms(double ms) {
  if (ms >= 1000) return fmt_fixed(ms / 1000.0, 2) + " s";
  if (ms >= 100) return fmt_fixed(ms, 0) + " ms";
  if (ms >= 10) return fmt_fixed(ms, 1) + " ms";
  if (ms >= 0.1) return fmt_fixed(ms, 3) + " ms";
  return fmt_fixed(ms * 1000.0, 1) + " us";
}

namespace {

bool right(const Table& t, std::size_t c) { return c < t.right_align.size() && t.right_align[c]; }

// Display width in code points (tables may hold "×" or "≤").
std::size_t width(const std::string& s) {
  return static_cast<std::size_t>(std::count_if(s.begin(), s.end(), [](char ch) { return (ch & 0xC0) != 0x80; }));
}

void pad(std::ostream& out, const std::string& s, std::size_t w, bool align_right) {
  const std::size_t n = w > width(s) ? w - width(s) : 0;
  if (align_right) out << std::string(n, ' ') << s;
  else out << s << std::string(n, ' ');
}

void render_text_table(const Table& t, std::ostream& out) {
  std::vector<std::size_t> w(t.columns.size());
  for (std::size_t c = 0; c < t.columns.size(); ++c) w[c] = width(t.columns[c]);
  for (const auto& row : t.rows)
    for (std::size_t c = 0; c < row.size() && c < w.size(); ++c) w[c] = std::max(w[c], width(row[c]));
  if (!t.title.empty()) out << t.title << "\n";
  auto line = [&](const std::vector<std::string>& cells) {
    for (std::size_t c = 0; c < w.size(); ++c) {
      out << (c == 0 ? "  " : "  ");
      pad(out, c < cells.size() ? cells[c] : "", w[c], right(t, c));
    }
    out << "\n";
  };
  line(t.columns);
  std::vector<std::string> rule;
  for (std::size_t c = 0; c < w.size(); ++c) rule.emplace_back(w[c], '-');
  line(rule);
  for (const auto& row : t.rows) line(row);
}

std::string md_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '|') o += "\\|";
    else o += c;
  }
  return o;
}

void render_markdown_table(const Table& t, std::ostream& out) {
  if (!t.title.empty()) out << "### " << t.title << "\n\n";
  out << "|";
  for (const auto& c : t.columns) out << " " << md_escape(c) << " |";
  out << "\n|";
  for (std::size_t c = 0; c < t.columns.size(); ++c) out << (right(t, c) ? " ---: |" : " --- |");
  out << "\n";
  for (const auto& row : t.rows) {
    out << "|";
    for (std::size_t c = 0; c < t.columns.size(); ++c) out << " " << md_escape(c < row.size() ? row[c] : "") << " |";
    out << "\n";
  }
  out << "\n";
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string o = "\"";
  for (char c : s) {
    if (c == '"') o += "\"\"";
    else o += c;
  }
  return o + "\"";
}

void render_csv(const Table& t, std::ostream& out) {
  auto line = [&](const std::vector<std::string>& cells) {
    for (std::size_t c = 0; c < cells.size(); ++c) out << (c ? "," : "") << csv_field(cells[c]);
    out << "\n";
  };
  line(t.columns);
  for (const auto& row : t.rows) line(row);
}

}  // namespace

void render(const Report& r, Format f, std::ostream& out) {
  switch (f) {
    case Format::json:
      out << json_text(r.json, 2) << "\n";
      return;
    case Format::csv:
      render_csv(r.csv, out);
      return;
    case Format::table:
      if (!r.heading.empty()) out << r.heading << "\n\n";
      for (const auto& t : r.tables) {
        render_text_table(t, out);
        out << "\n";
      }
      for (const auto& n : r.notes) out << n << "\n";
      return;
    case Format::markdown:
      if (!r.heading.empty()) out << "## " << r.heading << "\n\n";
      for (const auto& t : r.tables) render_markdown_table(t, out);
      for (const auto& n : r.notes) out << "- " << n << "\n";
      return;
    case Format::html:
      MHACFG_CHECK(false, "html is rendered by the html renderer");
  }
}

}  // namespace mhacfg
