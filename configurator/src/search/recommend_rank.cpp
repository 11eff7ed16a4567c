// Ranking the designs the search found: the objectives, the score, one design per class, ties as
// tiers within the expected error, the Pareto frontier.
#include <algorithm>
#include <cmath>
#include <map>

#include "mhacfg/costmodel/errors.hpp"
#include "recommend_internal.hpp"

namespace mhacfg {

Objective parse_objective(std::string_view name) {
  for (auto o : {Objective::throughput, Objective::latency, Objective::memory, Objective::balanced, Objective::goodput})
    if (to_string(o) == name) return o;
  throw InputError("--objective", std::string(name), "unknown objective (expected throughput, latency, memory, balanced or goodput)");
}

std::string_view to_string(Objective o) {
  switch (o) {
    case Objective::throughput: return "throughput";
    case Objective::latency: return "latency";
    case Objective::memory: return "memory";
    case Objective::balanced: return "balanced";
    case Objective::goodput: return "goodput";
  }
  MHACFG_CHECK(false, "unknown Objective");
}

void score(std::vector<Candidate>& cs, Objective o) {
  if (o != Objective::balanced) {
    for (auto& c : cs) c.score = objective_value(c, o);
    return;
  }
  // Balanced: geometric mean of the throughput and latency objectives, each relative to the best. The
  // KV cache enters once, through the batch it allows.
  double best_t = 1e300, best_l = 1e300;
  for (const auto& c : cs) {
    best_t = std::min(best_t, objective_value(c, Objective::throughput));
    best_l = std::min(best_l, objective_value(c, Objective::latency));
  }
  for (auto& c : cs)
    c.score = std::sqrt(objective_value(c, Objective::throughput) / best_t * objective_value(c, Objective::latency) / best_l);
}

// The ranked list holds one design per variant and head_dim (and MLA latent): the architect's
// decision. Within a class the best-scoring head counts represent it, unless head counts the usual
// deployments prefer score within the expected error of that best: first a query width of d_model, then
// head counts that split over tp 2, 4 and 8 (query heads a multiple of 8, KV heads dividing or divided by
// 8). Input is sorted best first; the others go to `rest`.
std::vector<Candidate> distinct_designs(const std::vector<Candidate>& sorted, std::vector<Candidate>& rest) {
  std::map<std::vector<std::int64_t>, std::size_t> index;
  std::vector<double> best;  // the class's best score
  std::vector<Candidate> out;
  auto preference = [](const Candidate& c) {
    const AttentionSpec& a = c.spec.attention;
    const bool full = a.num_q_heads * a.v_head_dim == c.spec.d_model;
    const bool splits = a.num_q_heads % 8 == 0 && (a.variant == AttentionVariant::mla || a.num_kv_heads % 8 == 0 || 8 % a.num_kv_heads == 0);
    return 2 * int(full) + int(splits);
  };
  for (const auto& c : sorted) {
    const AttentionSpec& a = c.spec.attention;
    const std::vector<std::int64_t> key = {static_cast<std::int64_t>(a.variant), a.head_dim, a.v_head_dim,
                                           a.mla.kv_lora_rank, a.mla.q_lora_rank, a.indexer.topk};
    const auto it = index.find(key);
    if (it == index.end()) {
      index.emplace(key, out.size());
      out.push_back(c);
      best.push_back(c.score);
      continue;
    }
    Candidate& kept = out[it->second];
    const double tol = std::max(kept.error, c.error) > 0 ? std::max(kept.error, c.error) : defaults::unknown_error;
    if (preference(c) > preference(kept) && c.score <= best[it->second] * (1 + tol)) {
      rest.push_back(kept);
      kept = c;
    } else {
      rest.push_back(c);
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const Candidate& a, const Candidate& b) { return a.score < b.score; });
  return out;
}

// The tolerance inside which designs cannot be told apart: the largest expected error among their
// predictions (unknown: the default, said so).
double tie_tolerance(const std::vector<Candidate>& designs) {
  double tol = 0;
  for (const auto& d : designs) tol = std::max(tol, d.error);
  return tol > 0 ? tol : defaults::unknown_error;
}

// Tiers: designs sorted by score, a tier is the best design not yet ranked and every design within `tol`
// of it, so each design tied at a rank is within the expected error of that rank's best (a chain of
// neighbours each within `tol` would let a tier span several times `tol`, and the order inside it put
// a clearly worse design first). A tier's rank is one more than the designs in better tiers (1, 1, 1, 4). Inside a tier the order is the quality risk, then the
// distance to the nearest released design (precedents.hpp: doublings of size, KV capacity and head
// width, and the variant), then the released models of its scale that ship no more KV, then the score.
void assign_tiers(std::vector<Candidate>& designs, double tol) {
  std::size_t begin = 0;
  for (std::size_t i = 0; i <= designs.size(); ++i) {
    if (i < designs.size() && designs[i].score <= designs[begin].score * (1 + tol)) continue;
    std::stable_sort(designs.begin() + std::ptrdiff_t(begin), designs.begin() + std::ptrdiff_t(i),
                     [](const Candidate& a, const Candidate& b) {
                       if (a.risk.level != b.risk.level) return a.risk.level < b.risk.level;
                       if (a.precedent_distance != b.precedent_distance) return a.precedent_distance < b.precedent_distance;
                       if (a.risk.precedent_support != b.risk.precedent_support)
                         return a.risk.precedent_support > b.risk.precedent_support;
                       return a.score < b.score;
                     });
    for (std::size_t j = begin; j < i; ++j) {
      designs[j].rank = static_cast<std::int64_t>(begin + 1);
      designs[j].tied = i - begin > 1;
    }
    begin = i;
  }
}

void mark_pareto(std::vector<Candidate>& cs) {
  // Per GPU: the KV a sequence holds on each GPU, a request's latency, the quality risk.
  for (auto& c : cs) {
    c.pareto = true;
    for (const auto& d : cs) {
      const bool no_worse = d.kv_bytes_per_seq_per_gpu <= c.kv_bytes_per_seq_per_gpu &&
                            d.served.request_ms <= c.served.request_ms && d.risk.level <= c.risk.level;
      const bool better = d.kv_bytes_per_seq_per_gpu < c.kv_bytes_per_seq_per_gpu ||
                          d.served.request_ms < c.served.request_ms || d.risk.level < c.risk.level;
      if (no_worse && better) {
        c.pareto = false;
        break;
      }
    }
  }
}

}  // namespace mhacfg
