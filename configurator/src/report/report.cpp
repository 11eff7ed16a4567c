#include "mhacfg/configurator/report/report.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>

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

// Text as Markdown shows it: a `|` would end a table cell, and `<`, `>`, `&` would let a name (a model
// or file name) carry raw HTML into a rendered page, so they become entities, as the HTML output does.
std::string md_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '|') o += "\\|";
    else if (c == '<') o += "&lt;";
    else if (c == '>') o += "&gt;";
    else if (c == '&') o += "&amp;";
    else o += c;
  }
  return o;
}

void render_markdown_table(const Table& t, std::ostream& out) {
  if (!t.title.empty()) out << "### " << md_escape(t.title) << "\n\n";
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

// True when a spreadsheet would read the cell as a number (`-1.5`, `2e-3`): those stay as they are.
// Decimal only: strtod's "inf", "nan" and hex forms are not numbers to a spreadsheet.
bool is_number(const std::string& s) {
  if (s.empty() || s.find_first_not_of("0123456789+-.eE") != std::string::npos) return false;
  char* end = nullptr;
  (void)std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size();
}

// A cell that starts with `=`, `+`, `-`, `@`, tab, CR or LF is a formula to a spreadsheet: text cells
// that do get a leading `'`, which spreadsheets read as "this is text" (OWASP, CSV Injection,
// https://owasp.org/www-community/attacks/CSV_Injection). Numbers are not formulas.
std::string csv_field(const std::string& cell) {
  const bool formula = !cell.empty() && std::string("=+-@\t\r\n").find(cell[0]) != std::string::npos && !is_number(cell);
  const std::string s = formula ? "'" + cell : cell;
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
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
      if (!r.heading.empty()) out << "## " << md_escape(r.heading) << "\n\n";
      for (const auto& t : r.tables) render_markdown_table(t, out);
      for (const auto& n : r.notes) out << "- " << md_escape(n) << "\n";
      return;
    case Format::html:
      MHACFG_CHECK(false, "html is rendered by the html renderer");
  }
}

}  // namespace mhacfg
