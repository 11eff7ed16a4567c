// Regression tests for the hardening findings (issue 26): escaping per output format, config keys
// named as written, long unknown options, and model paths that hold '='.
#include <catch2/catch.hpp>

#include <sstream>
#include <sys/stat.h>

#include "cli_test_util.hpp"
#include "mhacfg/configurator/report/report.hpp"

using namespace mhacfg;

namespace {

Report names_report() {
  Report r;
  r.heading = "<script>alert(1)</script> & co";
  Table t;
  t.title = "<b>models</b>";
  t.columns = {"name", "value"};
  t.rows = {{"<img src=x onerror=alert(1)>", "-1.5"}, {"=1+2", "+3e-4"}, {"@SUM(A1)", "-inf"}, {"-x", "\tq"}};
  t.right_align = {false, true};
  r.tables = {t};
  r.csv = t;
  r.notes = {"a <i>note</i>"};
  return r;
}

std::string rendered(Format f) {
  std::ostringstream out;
  render(names_report(), f, out);
  return out.str();
}

}  // namespace

TEST_CASE("markdown escapes raw HTML in names, headings and notes", "[report][hardening]") {
  const std::string md = rendered(Format::markdown);
  CHECK(md.find('<') == std::string::npos);
  CHECK(md.find("## &lt;script&gt;alert(1)&lt;/script&gt; &amp; co\n") != std::string::npos);
  CHECK(md.find("### &lt;b&gt;models&lt;/b&gt;\n") != std::string::npos);
  CHECK(md.find("| &lt;img src=x onerror=alert(1)&gt; | -1.5 |") != std::string::npos);
  CHECK(md.find("- a &lt;i&gt;note&lt;/i&gt;\n") != std::string::npos);
}

TEST_CASE("csv neutralises formula cells but keeps numbers", "[report][hardening]") {
  CHECK(rendered(Format::csv) ==
        "name,value\n"
        "<img src=x onerror=alert(1)>,-1.5\n"  // '<' is no trigger: unchanged
        "'=1+2,+3e-4\n"
        "'@SUM(A1),'-inf\n"  // not a decimal number: text, neutralised
        "'-x,'\tq\n");
}
