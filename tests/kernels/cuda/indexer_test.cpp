// The CUDA lightning indexer (src/indexer.cu) against the float64 reference and the CPU kernel, on
// fresh random fp8 inputs (tests/kernels/indexer_reference.hpp, shared with the CPU kernel's test):
//  - every visible score of the workspace (the device's fp32 I(t, s)) against float64, within the
//    fp8 tensor-core bound below (NaN-poisoned first, so an unwritten score fails);
//  - the selection, exactly, against the contract applied on the host to the device's own scores
//    (the top min(topk, visible) of them, ties at the threshold to the lower positions, increasing,
//    then -1), and the kept scores bit for bit; outputs poisoned first;
//  - the selection against float64 with the error the device showed (sets exact wherever the
//    reference's topk-th and next best are further apart than that), and against the CPU kernel;
//  - several passes through a small workspace give bit-identical outputs to one pass.
// Decode (DeepSeek-V3.2's 64 heads of 128, GLM-5's 32, 16 of 64), speculative decode, causal
// prefill against a longer cache, topk beyond the visible keys, and a query whose keys exceed the
// selection's shared-memory cache.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "../indexer_reference.hpp"
#include "mhacfg/costmodel/errors.hpp"
#include "mhacfg/kernels/cpu/indexer.hpp"
#include "mhacfg/kernels/cuda/indexer.hpp"
#include "reference.hpp"

namespace {

using namespace mhacfg;
namespace cpu = mhacfg::kernels::cpu;
namespace ct = mhacfg::kernels::cpu::test;
namespace ix = mhacfg::kernels::cuda::indexer;
using kernels::cuda::DeviceBuffer;

// The device's scores against float64, relative to sum_h |w_h| sum_c |q_hc k_sc|: products of two
// fp8 values are exact in fp32, but the tensor core's accumulation inside an mma.sync k-step (32
// products) and into the chained accumulator may keep fewer bits than fp32 (DeepSeek-V3's report,
// arXiv 2412.19437 s. 3.3.2, finds fp8 GEMM accumulation on H800 keeps ~14 bits): 2^-13 of the
// magnitude per k-step (head_dim / 32 of them), plus the CPU kernel's fp32 bound for the scales and
// the sum over heads. An indexing or scaling mistake moves a score by a large part of the magnitude.
double cuda_relative_bound(const IndexerShape& s) {
  return static_cast<double>(s.head_dim / 32) * std::ldexp(1.0, -13) + ct::fp32_indexer_relative_bound(s);
}

template <class T>
DeviceBuffer upload(const std::vector<T>& v) {
  DeviceBuffer b(std::max<std::size_t>(v.size() * sizeof(T), 1));
  kernels::cuda::copy_to_device(b.get(), v.data(), v.size() * sizeof(T));
  return b;
}

struct GpuRun {
  ct::IndexerOutputs out;
  std::vector<float> workspace;  // the last pass's scores [pass sequences, pass queries, kv_len]
};

GpuRun run_gpu(const IndexerShape& s, const ct::IndexerInputs& in, std::size_t pass_budget = 0) {
  auto q = upload(in.q), qs = upload(in.q_scale), w = upload(in.weights), k = upload(in.k), ks = upload(in.k_scale);
  const std::size_t outs = static_cast<std::size_t>(s.batch * s.q_len * s.topk);
  DeviceBuffer indices(outs * sizeof(std::int32_t)), scores(outs * sizeof(float));
  kernels::cuda::fill_bytes(indices.get(), 0x5a, indices.bytes(), nullptr);  // 0x5a5a5a5a: no valid position
  kernels::cuda::fill_bytes(scores.get(), kernels::cuda::kPoisonByte, scores.bytes(), nullptr);  // NaN
  const std::size_t ws_bytes = ix::workspace_bytes(s, pass_budget == 0 ? ix::kMaxWorkspaceBytes : pass_budget);
  DeviceBuffer ws(ws_bytes);
  kernels::cuda::fill_bytes(ws.get(), kernels::cuda::kPoisonByte, ws_bytes, nullptr);
  ix::Params p;
  p.shape = s;
  p.q = q.as<std::uint8_t>();
  p.q_scale = qs.as<float>();
  p.weights = w.as<float>();
  p.k = k.as<std::uint8_t>();
  p.k_scale = ks.as<float>();
  p.indices = indices.as<std::int32_t>();
  p.scores = scores.as<float>();
  p.workspace = ws.get();
  p.workspace_bytes = ws_bytes;
  p.pass_budget = pass_budget;
  ix::run(p, nullptr);
  kernels::cuda::synchronize(nullptr);
  GpuRun r;
  r.out.indices.resize(outs);
  r.out.scores.resize(outs);
  r.workspace.resize(ws_bytes / sizeof(float));
  kernels::cuda::copy_to_host(r.out.indices.data(), indices.get(), indices.bytes());
  kernels::cuda::copy_to_host(r.out.scores.data(), scores.get(), scores.bytes());
  kernels::cuda::copy_to_host(r.workspace.data(), ws.get(), ws_bytes);
  return r;
}

// The contract on a row of fp32 scores: the positions of the min(topk, n) best (NaN as -inf; of equal
// scores at the threshold, the lower positions) in increasing order, then -1.
std::vector<std::int32_t> contract_selection(const float* scores, std::int64_t n, std::int64_t topk) {
  const auto clean = [](float x) { return std::isnan(x) ? -std::numeric_limits<float>::infinity() : x; };
  std::vector<std::int32_t> out(static_cast<std::size_t>(topk), -1);
  const std::int64_t k = std::min(topk, n);
  std::vector<std::int64_t> order(static_cast<std::size_t>(n));
  for (std::int64_t j = 0; j < n; ++j) order[static_cast<std::size_t>(j)] = j;
  std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) { return clean(scores[a]) > clean(scores[b]); });
  order.resize(static_cast<std::size_t>(k));
  std::sort(order.begin(), order.end());
  for (std::int64_t j = 0; j < k; ++j) out[static_cast<std::size_t>(j)] = static_cast<std::int32_t>(order[static_cast<std::size_t>(j)]);
  return out;
}

ct::IndexerOutputs run_cpu(const IndexerShape& s, const ct::IndexerInputs& in) {
  ct::IndexerOutputs out;
  out.indices.assign(static_cast<std::size_t>(s.batch * s.q_len * s.topk), 12345);
  out.scores.assign(out.indices.size(), NAN);
  cpu::IndexerParams p;
  p.shape = s;
  p.q = in.q.data();
  p.q_scale = in.q_scale.data();
  p.weights = in.weights.data();
  p.k = in.k.data();
  p.k_scale = in.k_scale.data();
  p.indices = out.indices.data();
  p.scores = out.scores.data();
  p.threads = 2;
  cpu::indexer::run(p);
  return out;
}

// Returns the number of queries whose set was checked exactly against float64.
std::size_t check_indexer(const IndexerShape& s, std::uint32_t seed) {
  const ct::IndexerInputs in = ct::make_indexer_inputs(s, seed);
  const ct::IndexerScored want = ct::indexer_reference(s, in, cuda_relative_bound(s));
  const GpuRun got = run_gpu(s, in);
  REQUIRE(got.workspace.size() == static_cast<std::size_t>(s.batch * s.q_len * s.kv_len));  // one pass: every score kept

  // 1. Every visible score against float64.
  double worst = 0, worst_relative = 0;
  std::size_t bad = 0;
  std::string report;
  for (std::int64_t r = 0; r < s.batch * s.q_len; ++r) {
    const std::int64_t t = r % s.q_len, visible = s.kv_len - s.q_len + t + 1;
    for (std::int64_t j = 0; j < visible; ++j) {
      const std::size_t i = static_cast<std::size_t>(r * s.kv_len + j);
      const double err = std::fabs(static_cast<double>(got.workspace[i]) - want.score[i]);
      if (!(err <= want.bound[i])) {
        if (++bad <= 5)
          report += "row " + std::to_string(r) + " key " + std::to_string(j) + ": " + std::to_string(got.workspace[i]) +
                    " vs " + std::to_string(want.score[i]) + "\n";
      } else {
        worst = std::max(worst, err);
        worst_relative = std::max(worst_relative, err / want.bound[i] * cuda_relative_bound(s));
      }
    }
  }
  INFO(report);
  REQUIRE(bad == 0);
  // What the device showed, per unit of magnitude (the bound above assumes 2^-13 per k-step).
  WARN("worst score error " << worst << ", relative to the magnitude " << worst_relative << " (bound "
                            << cuda_relative_bound(s) << ")");

  // 2. The selection is the contract's on the device's own scores, exactly; kept scores bit for bit.
  for (std::int64_t r = 0; r < s.batch * s.q_len; ++r) {
    const std::int64_t t = r % s.q_len, visible = s.kv_len - s.q_len + t + 1;
    INFO("row " << r);
    const float* row = got.workspace.data() + r * s.kv_len;
    const std::vector<std::int32_t> expect = contract_selection(row, visible, s.topk);
    for (std::int64_t j = 0; j < s.topk; ++j) {
      const std::size_t o = static_cast<std::size_t>(r * s.topk + j);
      REQUIRE(got.out.indices[o] == expect[static_cast<std::size_t>(j)]);
      const float v = got.out.scores[o];
      if (expect[static_cast<std::size_t>(j)] < 0) REQUIRE(v == -std::numeric_limits<float>::infinity());
      else REQUIRE(std::memcmp(&v, row + expect[static_cast<std::size_t>(j)], sizeof v) == 0);
    }
  }

  // 3. Against float64 with the device's own error: exact sets wherever the gap exceeds 4x it.
  ct::IndexerScored seen = want;
  for (double& b : seen.bound) b = 1.01 * worst + 1e-30;
  const std::size_t exact = ct::check_indexer_selection(s, got.out, seen, true);  // counted by the caller

  // 4. The CPU kernel on the same inputs: the same set wherever the reference's topk-th and next best
  //    are apart by more than both kernels' errors.
  const ct::IndexerOutputs cpu_out = run_cpu(s, in);
  const ct::IndexerScored cpu_want = ct::indexer_reference(s, in);
  ct::check_indexer_selection(s, cpu_out, cpu_want, true);
  std::size_t compared = 0;
  for (std::int64_t r = 0; r < s.batch * s.q_len; ++r) {
    const std::int64_t t = r % s.q_len, visible = s.kv_len - s.q_len + t + 1, k = std::min(s.topk, visible);
    const double* score = want.score.data() + r * s.kv_len;
    double cpu_bound = 0;
    for (std::int64_t j = 0; j < visible; ++j) cpu_bound = std::max(cpu_bound, cpu_want.bound[static_cast<std::size_t>(r * s.kv_len + j)]);
    bool apart = k == visible;
    if (!apart) {
      std::vector<double> best(score, score + visible);
      std::nth_element(best.begin(), best.begin() + (k - 1), best.end(), std::greater<double>());
      const double kth = best[static_cast<std::size_t>(k - 1)];
      const double next = *std::max_element(best.begin() + k, best.end());
      apart = kth - next > 4 * (cpu_bound + worst);
    }
    if (!apart) continue;
    ++compared;
    INFO("row " << r);
    for (std::int64_t j = 0; j < s.topk; ++j)
      REQUIRE(got.out.indices[static_cast<std::size_t>(r * s.topk + j)] == cpu_out.indices[static_cast<std::size_t>(r * s.topk + j)]);
  }
  WARN(exact << " of " << s.batch * s.q_len << " queries' sets checked exactly against float64, " << compared
              << " against the CPU kernel's");
  return exact;
}

#define MHACFG_INDEXER_SECTION(s)                                                                                       \
  DYNAMIC_SECTION("batch " << s.batch << " q_len " << s.q_len << " kv_len " << s.kv_len << " heads " << s.num_heads   \
                           << " x " << s.head_dim << " topk " << s.topk)

TEST_CASE("CUDA indexer matches float64 and the CPU kernel: decode, causal prefill, topk > keys",
          "[cuda][indexer][sanitize]") {
  MHACFG_REQUIRE_CUDA_DEVICE();
  // Small enough for the sanitizers; each layout of the scores kernel and both select paths but the
  // uncached one.
  const IndexerShape cases[] = {
      {3, 1, 700, 64, 128, 64},  // DeepSeek-V3.2 decode steps of 3 sequences (decode layout, 4 m-tiles)
      {1, 72, 100, 64, 128, 40},  // causal prefill against 28 cached keys (prefill layout, query tiles of 4)
      {2, 1, 100, 32, 64, 128},   // fewer keys than topk: all of them, then -1
  };
  std::uint32_t seed = 101;
  for (const IndexerShape& s : cases) {
    MHACFG_INDEXER_SECTION(s) { CHECK(check_indexer(s, seed) > 0); }
    seed += 7;
  }
}

TEST_CASE("CUDA indexer matches float64 and the CPU kernel on more shapes", "[cuda][indexer]") {
  MHACFG_REQUIRE_CUDA_DEVICE();
  const IndexerShape cases[] = {
      {2, 1, 1500, 32, 128, 256},   // GLM-5's 32 heads (2 m-tiles per warp)
      {4, 1, 333, 16, 64, 40},      // 16 heads of 64 (1 m-tile), a partial last key tile
      {2, 3, 500, 64, 128, 64},     // speculative decode: 3 queries, causal, decode layout
      {1, 130, 160, 64, 128, 100},  // prefill against a longer cache; some queries see fewer than topk
      {2, 70, 90, 32, 64, 30},      // prefill, 8 queries per tile, a partial last tile
      {1, 50, 50, 16, 128, 20},     // prefill, 16 queries per tile (one partial tile)
      {1, 1, 1000, 64, 128, 2048},  // DeepSeek's topk beyond the keys
      {1, 1, 5000, 64, 128, 1},     // topk 1
      {1, 1, 60000, 16, 64, 2048},  // more keys than the selection caches in shared memory (~55k on an H200)
  };
  std::uint32_t seed = 301;
  for (const IndexerShape& s : cases) {
    MHACFG_INDEXER_SECTION(s) { CHECK(check_indexer(s, seed) > 0); }
    seed += 11;
  }
}

TEST_CASE("CUDA indexer gives the same outputs through several passes as through one", "[cuda][indexer][sanitize]") {
  MHACFG_REQUIRE_CUDA_DEVICE();
  // Budgets that split the batch (decode) and the queries (prefill, whole query tiles per pass).
  const std::pair<IndexerShape, std::size_t> cases[] = {
      {{5, 1, 900, 64, 128, 100}, 2 * 900 * sizeof(float)},     // 2 sequences per pass: 3 passes
      {{1, 40, 120, 32, 64, 16}, 8 * 120 * sizeof(float)},      // 8 queries (one tile) per pass: 5 passes
      {{2, 20, 64, 64, 128, 8}, 6 * 64 * sizeof(float)},        // 4 queries per pass (whole tiles of 4): 5 passes each
  };
  std::uint32_t seed = 501;
  for (const auto& [s, budget] : cases) {
    MHACFG_INDEXER_SECTION(s) {
      const ct::IndexerInputs in = ct::make_indexer_inputs(s, seed);
      const GpuRun one = run_gpu(s, in), several = run_gpu(s, in, budget);
      REQUIRE(several.workspace.size() < one.workspace.size());
      CHECK(several.out.indices == one.out.indices);
      CHECK(std::memcmp(several.out.scores.data(), one.out.scores.data(), one.out.scores.size() * sizeof(float)) == 0);
      const ct::IndexerScored want = ct::indexer_reference(s, in, cuda_relative_bound(s));
      ct::check_indexer_selection(s, several.out, want, true);  // exact sets are checked above, on one pass
    }
    seed += 13;
  }
}

TEST_CASE("CUDA indexer keeps the lower positions of tied scores", "[cuda][indexer]") {
  MHACFG_REQUIRE_CUDA_DEVICE();
  // Every key of sequence 0 the same: all its scores are computed alike, so they tie exactly and each
  // query keeps positions 0..topk-1; sequence 1 repeats a short pattern of keys (many exact ties).
  const IndexerShape s{2, 3, 600, 32, 64, 10};
  ct::IndexerInputs in = ct::make_indexer_inputs(s, 3);
  for (std::int64_t j = 1; j < s.kv_len; ++j) {
    std::copy_n(in.k.begin(), s.head_dim, in.k.begin() + j * s.head_dim);
    in.k_scale[static_cast<std::size_t>(j)] = in.k_scale[0];
  }
  for (std::int64_t j = 5; j < s.kv_len; ++j) {  // sequence 1: keys repeat with period 5
    const std::int64_t src = s.kv_len + j % 5, dst = s.kv_len + j;
    std::copy_n(in.k.begin() + src * s.head_dim, s.head_dim, in.k.begin() + dst * s.head_dim);
    in.k_scale[static_cast<std::size_t>(dst)] = in.k_scale[static_cast<std::size_t>(src)];
  }
  const GpuRun got = run_gpu(s, in);
  for (std::int64_t t = 0; t < s.q_len; ++t)
    for (std::int64_t j = 0; j < s.topk; ++j) CHECK(got.out.indices[static_cast<std::size_t>(t * s.topk + j)] == j);
  for (std::int64_t r = 0; r < s.batch * s.q_len; ++r) {
    const std::int64_t t = r % s.q_len, visible = s.kv_len - s.q_len + t + 1;
    const std::vector<std::int32_t> expect = contract_selection(got.workspace.data() + r * s.kv_len, visible, s.topk);
    for (std::int64_t j = 0; j < s.topk; ++j) CHECK(got.out.indices[static_cast<std::size_t>(r * s.topk + j)] == expect[static_cast<std::size_t>(j)]);
  }
  ct::check_indexer_selection(s, got.out, ct::indexer_reference(s, in, cuda_relative_bound(s)), true);
}

TEST_CASE("CUDA indexer names what it does not support", "[cuda][indexer]") {
  // No device needed: shapes are checked on the host.
  IndexerShape s{1, 1, 4096, 64, 128, 2048};
  CHECK(ix::unsupported_reason(s).empty());
  s.num_heads = 128;
  CHECK(ix::unsupported_reason(s).rfind("num_heads = 128: the CUDA indexer takes 16, 32 or 64 heads", 0) == 0);
  s.num_heads = 64;
  s.head_dim = 96;
  CHECK(ix::unsupported_reason(s).rfind("head_dim = 96: the CUDA indexer takes 64 or 128", 0) == 0);
  s.head_dim = 128;
  s.q_len = 4097;
  CHECK(ix::unsupported_reason(s).rfind("q_len = 4097: must not exceed kv_len = 4096", 0) == 0);
  s.q_len = 1;
  s.topk = 0;
  CHECK(ix::unsupported_reason(s).rfind("topk = 0", 0) == 0);
  s.topk = 2048;
  s.batch = 70000;
  CHECK(ix::unsupported_reason(s).rfind("batch = 70000", 0) == 0);
  s.batch = 1;
  // One pass holds whole sequences' scores up to the budget, else whole query tiles of one sequence.
  CHECK(ix::workspace_bytes(s) == 4096 * sizeof(float));
  CHECK(ix::workspace_bytes({64, 1, 32768, 64, 128, 2048}) == std::size_t{64} * 32768 * sizeof(float));
  CHECK(ix::workspace_bytes({1, 4096, 4096, 64, 128, 2048}) == std::size_t{4096} * 4096 * sizeof(float));
  CHECK(ix::workspace_bytes({1, 1000, 1000, 64, 128, 8}, 10 * 1000 * sizeof(float)) == 8 * 1000 * sizeof(float));
  ix::Params p;
  p.shape = s;
  p.shape.head_dim = 96;
  CHECK_THROWS_AS(ix::run(p, nullptr), InputError);
}

}  // namespace
