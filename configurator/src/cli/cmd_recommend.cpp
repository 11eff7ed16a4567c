// `mhacfg recommend`.
#include <ostream>

#include "mhacfg/configurator/api/requests.hpp"
#include "mhacfg/configurator/cli/cli_options.hpp"
#include "mhacfg/configurator/cli/commands.hpp"
#include "mhacfg/configurator/report/html.hpp"
#include "mhacfg/configurator/report/plots.hpp"
#include "mhacfg/configurator/inputs/profiles.hpp"
#include "mhacfg/configurator/search/design.hpp"
#include "mhacfg/configurator/search/recommend.hpp"
#include "mhacfg/configurator/report/recommend_report.hpp"
#include "mhacfg/costmodel/errors.hpp"

namespace mhacfg {

namespace {

// The report's plots over the ranked designs at the first one's batch.
std::vector<SvgPlot> recommend_plots(const Recommendation& rec) {
  std::vector<PlotModel> models;
  for (const auto& cand : rec.ranked) {
    if (models.size() >= static_cast<std::size_t>(rec.options.top)) break;
    models.push_back({"#" + std::to_string(cand.rank) + " " + design_label(cand.spec.attention, LabelStyle::heads),
                      cand.spec, &cand == &rec.ranked.front()});
  }
  const RecommendOptions& o = rec.options;
  const Workload w = o.workload.with_batch(rec.ranked.empty() ? 1 : rec.ranked.front().batch);
  return {kv_vs_context_plot(models, w, rec.profile, o.memory_fraction),
          decode_vs_batch_plot(models, w, rec.profile, o.memory_fraction), pareto_plot(rec),
          roofline_plot(rec.profile, models, w)};
}

}  // namespace

int cmd_recommend(const Args& args, std::ostream& out, std::ostream& err) {
  const RecommendOptions defaults;
  const std::vector<Format> formats = {Format::table, Format::json, Format::markdown, Format::csv, Format::html};
  po::options_description d(
      "mhacfg recommend: query heads, KV heads, head_dim and projection for a budget, a context and a target");
  d.add_options()
      ("hf-config", po::value<std::string>(), "a model's config.json: search its attention, keep the rest (d_model, layers, vocabulary, FFN or experts, norms, windows)")
      ("model", po::value<std::string>(), "a shipped preset (mhacfg models lists them) to search the attention of, as --hf-config")
      ("params", po::value<std::string>(), "total parameter budget: 125M, 7B, 1.5e9 (derives d_model and layers; with a model: its parameters)")
      ("d-model", po::value<std::string>(), "hidden size (with --layers)")
      ("layers", po::value<std::string>(), "layers (with --d-model)")
      ("context", po::value<std::string>(), ("context length to serve in tokens, each sequence prefilled whole (default " + std::to_string(defaults.workload.context) + tokens_help() + ")").c_str())
      ("seq", po::value<std::string>(), "the same as --context (its earlier name)")
      ("target", po::value<std::string>(), ("device profile name or file (default " + defaults.target + ")").c_str())
      ("batch", po::value<std::string>(), "concurrent sequences (default: the largest batch that fits; 1k = 1000)")
      ("objective", po::value<std::string>(), "per GPU, as the engine serves it: throughput, latency, memory, balanced or goodput (default balanced)")
      ("quality", po::value<std::string>(), "conservative, balanced or aggressive (default conservative)")
      ("variants", po::value<std::string>(), "comma list of mha,gqa,mqa,mla (default all four)")
      ("output-len", po::value<std::string>(), ("tokens a request generates: the latency objective and the SLOs (default " + std::to_string(defaults.output_len) + tokens_help() + ")").c_str())
      ("ttft-ms", po::value<std::string>(), "SLO: time to the first token of one --context prompt, ms")
      ("tpot-ms", po::value<std::string>(), "SLO: time per output token, ms; the batch is the largest that meets it")
      ("head-dim", po::value<std::string>(), "only this head_dim (MLA: its value head width)")
      ("kv-heads-multiple-of", po::value<std::string>(), "only KV head counts that are multiples of N (not MLA)")
      ("max-kv-bytes-per-token", po::value<std::string>(), "only designs whose KV cache per token (all layers) is at most this many bytes (1M = 1e6)")
      ("sliding-window", po::value<std::string>(), ("a window of W tokens on every softmax layer (0: none; with a model, replaces its windows" + tokens_help() + ")").c_str())
      ("attention-chunk", po::value<std::string>(), ("chunked attention (Llama 4): chunks of C tokens on every softmax layer (0: none" + tokens_help() + ")").c_str())
      ("global-every", po::value<std::string>(), "with a window or chunks: every N-th softmax layer attends to everything (Gemma 3: 6)")
      ("index-topk", po::value<std::string>(), "also evaluate every candidate with sparse attention: an indexer choosing each query's top K keys (2k = 2048)")
      ("top", po::value<std::string>(), ("candidates to list (default " + std::to_string(defaults.top) + ")").c_str())
      ("vocab", po::value<std::string>(), "vocabulary size (default 32000)");
  add_roofline_option(d);
  add_engine_option(d);
  add_memory_fraction_option(d);
  add_out_dir_option(d);
  add_deployment_options(d, defaults.workload);
  add_format_option(d, formats);
  d.add_options()("help,h", "this help");
  if (print_help(d, args, out)) return kExitOk;
  const ParsedArgs a("recommend", d, args);
  const Format format = read_format(a, formats);
  const RecommendRequest req = read_recommend_request(a);
  const Recommendation r = recommend(req.options, req.profile);
  const Report rep = recommend_report(r);
  auto make = [&r] { return recommend_plots(r); };
  emit(rep, format, read_out_dir(a), make, out);
  if (r.ranked.empty()) {
    err << "mhacfg: infeasible: no candidate satisfies the constraints";
    if (r.closest) err << "; closest: " << rep.json["closest"]["design"].get<std::string>() << ": " << r.closest_miss;
    err << "\n";
    return kExitInfeasible;
  }
  return kExitOk;
}

}  // namespace mhacfg
