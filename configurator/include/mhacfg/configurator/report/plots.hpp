// The plots of design-review reports, built from costmodel counts and a profile's predictions.
#pragma once

#include <string>
#include <vector>

#include "mhacfg/configurator/search/recommend.hpp"
#include "mhacfg/configurator/report/svg.hpp"

namespace mhacfg {

struct PlotModel {
  std::string label;
  ModelSpec spec;
  bool highlight = false;
};

// Weights + KV cache per GPU against context, one line per model, with the memory budget line.
SvgPlot kv_vs_context_plot(const std::vector<PlotModel>& models, const Workload& w, const Profile& p, double memory_fraction);
// Predicted decode step time against batch, one line per model, up to the largest batch that fits.
SvgPlot decode_vs_batch_plot(const std::vector<PlotModel>& models, const Workload& w, const Profile& p, double memory_fraction);
// Memory (KV per token) against single-stream decode time, marker shape by quality risk.
SvgPlot pareto_plot(const Recommendation& r);
SvgPlot pareto_plot(const std::vector<PlotModel>& models, const Workload& w, const Profile& p);
// The profile's roofline with its calibrated points and the predicted ops of the highlighted model.
SvgPlot roofline_plot(const Profile& p, const std::vector<PlotModel>& models, const Workload& w);

}  // namespace mhacfg
