// MLA absorbed decode (src/mla_decode.cu) against the float64 reference: 16, 20 (a partial head
// group) and 128 heads; lengths off the 32-token tile; forced and planned splits; variable lengths.
// The wgmma variant (src/mla_decode_hopper.cu, sm_90 only) has its own cases, tagged [mla_wgmma], so a
// device run can run them in a process of their own (scripts/device/h200_check.sh).
#include <catch2/catch.hpp>

#include <cmath>

#include "mhacfg/costmodel/errors.hpp"
#include "mhacfg/kernels/cuda/mla_decode.hpp"
#include "prefill_hopper.hpp"  // the TMA map rules shared with the wgmma MLA decode
#include "reference.hpp"

namespace {

using namespace mhacfg;
using namespace mhacfg::test;
namespace mla = mhacfg::kernels::cuda::mla_decode;

void check_mla(int batch, int heads, int kv_len, const std::vector<int>& var_lens, int splits, std::uint64_t seed,
               mla::Variant variant = mla::Variant::automatic) {
  std::mt19937_64 rng(seed);
  constexpr int L = mla::kLatentDim, R = mla::kKvLoraRank;
  const auto q = random_bf16_values(static_cast<std::size_t>(batch) * heads * L, rng, -1.f, 1.f);
  const auto kv = random_bf16_values(static_cast<std::size_t>(batch) * kv_len * L, rng, -1.f, 1.f);
  const std::vector<int> lens = var_lens.empty() ? std::vector<int>(batch, kv_len) : var_lens;
  auto dq = upload_bf16(q, 64), dkv = upload_bf16(kv, 64);
  const std::size_t o_elems = static_cast<std::size_t>(batch) * heads * R;
  auto dout = poisoned_bf16(o_elems);
  kernels::cuda::DeviceBuffer dlens;

  mla::Params p;
  p.batch = batch;
  p.num_heads = heads;
  p.kv_len = kv_len;
  if (!var_lens.empty()) {
    dlens = upload_i32(std::vector<std::int32_t>(lens.begin(), lens.end()));
    p.kv_lens = dlens.as<std::int32_t>();
  }
  p.softmax_scale = 1.f / std::sqrt(192.f);  // DeepSeek-V3's qk_head_dim (128 nope + 64 rope)
  p.q = dq.as<kernels::cuda::Bf16>();
  p.q_batch_stride = static_cast<std::int64_t>(heads) * L;
  p.kv = dkv.as<kernels::cuda::Bf16>();
  p.kv_token_stride = L;
  p.kv_batch_stride = static_cast<std::int64_t>(kv_len) * L;
  p.o = dout.as<kernels::cuda::Bf16>();
  p.o_batch_stride = static_cast<std::int64_t>(heads) * R;
  p.num_splits = splits;
  p.variant = variant;
  const mla::Plan plan = mla::plan(p);
  kernels::cuda::DeviceBuffer ws(plan.workspace_bytes);
  if (plan.workspace_bytes > 0) {
    kernels::cuda::fill_bytes(ws.get(), kernels::cuda::kPoisonByte, plan.workspace_bytes, nullptr);
    p.workspace = ws.get();
    p.workspace_bytes = plan.workspace_bytes;
  }
  mla::run(p, nullptr);
  kernels::cuda::synchronize(nullptr);
  const auto out = download_bf16(dout, o_elems);

  AttentionProblem ref;
  ref.batch = batch;
  ref.q_len = 1;
  ref.num_q_heads = heads;
  ref.num_kv_heads = 1;
  ref.qk_dim = L;
  ref.v_dim = R;
  ref.scale = 1.0 / std::sqrt(192.0);
  ref.kv_lens = lens;
  ref.q = q.data();
  ref.q_batch_stride = static_cast<std::int64_t>(heads) * L;
  ref.q_head_stride = L;
  ref.k = ref.v = kv.data();  // V is the latent's first 512 values
  ref.k_batch_stride = ref.v_batch_stride = static_cast<std::int64_t>(kv_len) * L;
  ref.k_token_stride = ref.v_token_stride = L;
  const auto expected = attention_reference(ref);

  std::string report;
  const std::size_t bad = count_mismatches(out, expected, kAttentionTol, report);
  INFO("variant " << mla::to_string(plan.variant) << " batch " << batch << " heads " << heads << " kv_len " << kv_len
                  << " splits " << splits << " (planned " << plan.num_splits << " x " << plan.tokens_per_split << ")\n"
                  << report);
  CHECK(bad == 0);
  if (plan.variant == mla::Variant::wgmma)
    CHECK(mla::wgmma_barrier_timeouts(true) == 0);  // nonzero: the TMA/mbarrier pipeline broke
}

// True when the current device runs the wgmma variant (sm_90). Elsewhere it must refuse with
// InputError before launching anything; the caller then reports the test as skipped.
bool wgmma_device_or_refusal() {
  const auto& dev = kernels::cuda::device_info(kernels::cuda::current_device());
  if (dev.compute_capability_major == 9 && dev.compute_capability_minor == 0) return true;
  CHECK_THROWS_AS(check_mla(1, 64, 100, {}, 0, 1, mla::Variant::wgmma), InputError);
  WARN("not an sm_90 device: the wgmma MLA decode refused, as it must");
  std::cout << MHACFG_TEST_SKIPPED_MARKER << std::endl;
  return false;
}

}  // namespace

TEST_CASE("MLA decode matches the float64 reference across heads, lengths and splits", "[cuda]") {
  MHACFG_REQUIRE_CUDA_DEVICE();
  std::uint64_t seed = 300;
  for (int heads : {16, 20, 128})
    for (int kv_len : {1, 45, 777, 2049})
      for (int splits : {0, 1, 5}) {
        if (heads == 128 && kv_len == 2049) continue;  // the float64 reference is the slow part
        check_mla(2, heads, kv_len, {}, splits, ++seed);
      }
}

TEST_CASE("MLA decode handles variable lengths and empty sequences", "[cuda][sanitize]") {
  MHACFG_REQUIRE_CUDA_DEVICE();
  for (int splits : {0, 1, 4}) check_mla(4, 16, 200, {200, 0, 31, 33}, splits, 400 + splits);
}

TEST_CASE("MLA decode says which shapes it does not run", "[cuda]") {
  AttentionShape s;
  s.q_len = 1;
  s.kv_len = 100;
  s.num_q_heads = 16;
  s.num_kv_heads = 1;
  s.kv_lora_rank = 512;
  s.rope_head_dim = 64;
  CHECK(mla::unsupported_reason(s).empty());
  AttentionShape bad = s;
  bad.kv_lora_rank = 256;
  CHECK(mla::unsupported_reason(bad).find("512 + 64") != std::string::npos);
  bad = s;
  bad.q_len = 4;
  CHECK(!mla::unsupported_reason(bad).empty());
  bad = s;
  bad.kv_lora_rank = 0;
  CHECK(!mla::unsupported_reason(bad).empty());
}

TEST_CASE("MLA decode on wgmma matches the float64 reference with 64-128 heads", "[cuda][mla_wgmma]") {
  MHACFG_REQUIRE_CUDA_DEVICE();
  if (!wgmma_device_or_refusal()) return;
  // 64-token tiles: one, a ragged one, many (both stages refilled); 100 heads: a partial second group
  // (its Q rows past the heads read as zeros and are not written).
  std::uint64_t seed = 500;
  for (int heads : {64, 100, 128})
    for (int kv_len : {1, 45, 777, 2049})
      for (int splits : {0, 1, 5}) {
        if (heads != 64 && kv_len == 2049) continue;  // the float64 reference is the slow part
        check_mla(2, heads, kv_len, {}, splits, ++seed, mla::Variant::wgmma);
      }
  for (int splits : {0, 1, 3}) check_mla(4, 128, 300, {300, 0, 63, 65}, splits, 560 + splits, mla::Variant::wgmma);
}

TEST_CASE("MLA decode on wgmma small case for the sanitizers", "[cuda][mla_wgmma][sanitize]") {
  MHACFG_REQUIRE_CUDA_DEVICE();
  if (!wgmma_device_or_refusal()) return;
  // 200 tokens: 4 tiles in one split (both stages, two refills); 3 splits through the combine; an empty
  // sequence and one that ends inside the first tile.
  for (int splits : {1, 3}) check_mla(3, 64, 200, {200, 0, 31}, splits, 580 + splits, mla::Variant::wgmma);
}

TEST_CASE("MLA decode keeps the mma.sync kernel by default and its wgmma TMA maps follow the rules", "[cuda]") {
  // No device needed: the planner's choice and the maps' geometry are host arithmetic.
  for (int heads : {16, 64, 128}) {
    mla::Params p;
    p.num_heads = heads;
    CHECK(mla::resolve(p) == mla::Variant::mma_sync);  // until a device run proves wgmma (NOTES.md)
    p.variant = mla::Variant::wgmma;
    CHECK(mla::resolve(p) == mla::Variant::wgmma);
  }
  namespace hd = kernels::cuda::prefill::hopper_detail;
  constexpr int L = mla::kLatentDim;
  for (int batch : {1, 64})
    for (int heads : {64, 100, 128}) {
      // Q [batch, heads, 576]: heads in the map's token dimension, boxes of 64 dims x 64 heads.
      const auto q = hd::map_geometry(L, 1, heads, batch, L, static_cast<std::int64_t>(heads) * L, 64);
      CHECK(hd::map_geometry_problem(q).empty());
      CHECK(q.box[2] == 64);
      // KV [batch, tokens, 576], contiguous and with a capacity beyond kv_len.
      for (std::int64_t capacity : {1000, 4096}) {
        const auto kv = hd::map_geometry(L, 1, 1000, batch, L, capacity * L, 64);
        CHECK(hd::map_geometry_problem(kv).empty());
        CHECK(kv.strides[1] == 2 * L);
      }
    }
}
