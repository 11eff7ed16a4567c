// --check-machine's flag and its errors: a profile without a stored probe (a datasheet, imported
// timings) is refused before anything is measured, naming the profile.
#include <catch2/catch.hpp>

#include "cli_test_util.hpp"

namespace {
const std::string kShapes = fixture("cpu-holdout-shapes.jsonl");
}

TEST_CASE("a machine check needs a profile with a stored machine probe", "[cli][errors][machine_probe]") {
  expect_input_error({"predict", "--profile", "h100-sxm", "--in", kShapes, "--check-machine"},
                     "--profile = h100-sxm: stores no machine_probe (a datasheet profile measured nothing on this machine); "
                     "--check-machine needs a profile calibrated with calibrate --device");
  expect_input_error({"validate", "--profile", "h200-sxm-cudnn", "--in", kShapes, "--check-machine=correct"},
                     "--profile = h200-sxm-cudnn: stores no machine_probe (it was fitted to imported timings (calibrate --from), "
                     "not measured here); --check-machine needs a profile calibrated with calibrate --device");
  expect_input_error({"predict", "--profile", "cpu-epyc-2vcpu", "--in", kShapes, "--check-machine=correct"},
                     "--profile = cpu-epyc-2vcpu: stores no machine_probe (it was calibrated before mhacfg stored a probe); "
                     "--check-machine needs a profile calibrated with calibrate --device");
  expect_input_error({"bench", "--in", kShapes, "--profile", "h100-sxm", "--check-machine"},
                     "--profile = h100-sxm: stores no machine_probe (a datasheet profile measured nothing on this machine); "
                     "--check-machine needs a profile calibrated with calibrate --device");
}

TEST_CASE("the machine check takes report or correct, bench report only and with a profile of its device's kind",
          "[cli][errors][machine_probe]") {
  expect_input_error({"predict", "--profile", "cpu-epyc-2vcpu", "--in", kShapes, "--check-machine=fix"},
                     "--check-machine = fix: expected report or correct");
  expect_input_error({"bench", "--in", kShapes, "--profile", "cpu-epyc-2vcpu", "--check-machine=correct"},
                     "--check-machine = correct: expected report (bench measures; it corrects nothing)");
  expect_input_error({"bench", "--in", kShapes, "--check-machine"}, "--check-machine = report: bench --check-machine needs --profile");
  // --profile alone estimates the measuring time (device_bench_test.cpp): a profile of the other kind is refused.
  expect_input_error({"bench", "--in", kShapes, "--profile", "h100-sxm"},
                     "--profile = h100-sxm: is a gpu profile: its predictions say nothing about --device cpu");
}
