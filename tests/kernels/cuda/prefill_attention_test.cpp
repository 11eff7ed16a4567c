// Prefill attention (src/prefill_attention.cu) against the float64 reference: head_dims 64/128/256,
// both warp layouts, causal and not, MHA/GQA/MQA, q_len < kv_len (queries at the end), lengths that
// are not multiples of the 64/128-row tiles, and a packed-QKV strided layout. The Hopper variant
// (wgmma + TMA, sm_90 only) has its own test cases, tagged [hopper], so a device run can run them
// in a process of their own (scripts/device/h200_check.sh): a fault there cannot spoil the others.
#include "mhacfg/kernels/cuda/prefill_attention.hpp"

#include <catch2/catch.hpp>
#include <cmath>

#include "mhacfg/costmodel/errors.hpp"
#include "mhacfg/kernels/cuda/runtime.hpp"
#include "prefill_hopper.hpp"
#include "reference.hpp"

namespace {

using namespace mhacfg;
using namespace mhacfg::test;
namespace prefill = mhacfg::kernels::cuda::prefill;

struct PrefillCase {
  int batch = 2;
  int q_len = 17;
  int kv_len = 17;
  int num_q_heads = 4;
  int num_kv_heads = 2;
  int head_dim = 64;
  bool causal = true;
  prefill::Variant variant = prefill::Variant::automatic;
  bool packed_qkv = false;  // q, k, v as column blocks of one [batch * kv_len, (nq + 2 nkv) * d] matrix
};

void check_prefill(const PrefillCase& c, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const int d = c.head_dim;
  const std::int64_t q_cols = static_cast<std::int64_t>(c.num_q_heads) * d;
  const std::int64_t kv_cols = static_cast<std::int64_t>(c.num_kv_heads) * d;
  std::vector<float> q, k, v, qkv;
  std::int64_t q_tok, q_bat, kv_tok, kv_bat;
  kernels::cuda::DeviceBuffer dq, dk, dv, dqkv;
  prefill::Params p;
  if (c.packed_qkv) {  // requires q_len == kv_len, like the attention block's prefill
    const std::int64_t row = q_cols + 2 * kv_cols;
    qkv = random_bf16_values(static_cast<std::size_t>(c.batch) * c.kv_len * row, rng, -1.5f, 1.5f);
    dqkv = upload_bf16(qkv, 64);
    q_tok = kv_tok = row;
    q_bat = kv_bat = row * c.kv_len;
    p.q = dqkv.as<kernels::cuda::Bf16>();
    p.k = p.q + q_cols;
    p.v = p.k + kv_cols;
  } else {
    q = random_bf16_values(static_cast<std::size_t>(c.batch) * c.q_len * q_cols, rng, -1.5f, 1.5f);
    k = random_bf16_values(static_cast<std::size_t>(c.batch) * c.kv_len * kv_cols, rng, -1.f, 1.f);
    v = random_bf16_values(static_cast<std::size_t>(c.batch) * c.kv_len * kv_cols, rng, -1.f, 1.f);
    dq = upload_bf16(q, 64);
    dk = upload_bf16(k, 64);
    dv = upload_bf16(v, 64);
    q_tok = q_cols;
    q_bat = q_cols * c.q_len;
    kv_tok = kv_cols;
    kv_bat = kv_cols * c.kv_len;
    p.q = dq.as<kernels::cuda::Bf16>();
    p.k = dk.as<kernels::cuda::Bf16>();
    p.v = dv.as<kernels::cuda::Bf16>();
  }
  const std::size_t o_elems = static_cast<std::size_t>(c.batch) * c.q_len * q_cols;
  auto dout = poisoned_bf16(o_elems);
  p.batch = c.batch;
  p.q_len = c.q_len;
  p.kv_len = c.kv_len;
  p.num_q_heads = c.num_q_heads;
  p.num_kv_heads = c.num_kv_heads;
  p.head_dim = d;
  p.causal = c.causal;
  p.softmax_scale = 1.f / std::sqrt(static_cast<float>(d));
  p.q_token_stride = q_tok;
  p.q_batch_stride = q_bat;
  p.kv_token_stride = kv_tok;
  p.kv_batch_stride = kv_bat;
  p.o = dout.as<kernels::cuda::Bf16>();
  p.o_token_stride = q_cols;
  p.o_batch_stride = q_cols * c.q_len;
  p.variant = c.variant;
  prefill::run(p, nullptr);
  kernels::cuda::synchronize(nullptr);
  const auto out = download_bf16(dout, o_elems);

  AttentionProblem ref;
  ref.batch = c.batch;
  ref.q_len = c.q_len;
  ref.num_q_heads = c.num_q_heads;
  ref.num_kv_heads = c.num_kv_heads;
  ref.qk_dim = ref.v_dim = d;
  ref.causal = c.causal;
  ref.scale = 1.0 / std::sqrt(static_cast<double>(d));
  ref.kv_lens.assign(c.batch, c.kv_len);
  const float* base = c.packed_qkv ? qkv.data() : nullptr;
  ref.q = c.packed_qkv ? base : q.data();
  ref.k = c.packed_qkv ? base + q_cols : k.data();
  ref.v = c.packed_qkv ? base + q_cols + kv_cols : v.data();
  ref.q_batch_stride = q_bat;
  ref.q_token_stride = q_tok;
  ref.q_head_stride = d;
  ref.k_batch_stride = ref.v_batch_stride = kv_bat;
  ref.k_token_stride = ref.v_token_stride = kv_tok;
  ref.k_head_stride = ref.v_head_stride = d;
  const auto expected = attention_reference(ref);

  std::string report;
  const std::size_t bad = count_mismatches(out, expected, kAttentionTol, report);
  INFO("batch " << c.batch << " q_len " << c.q_len << " kv_len " << c.kv_len << " heads " << c.num_q_heads << "/"
                << c.num_kv_heads << " d " << d << (c.causal ? " causal " : " non-causal ")
                << prefill::to_string(prefill::resolve(c.variant, d)) << (c.packed_qkv ? " packed" : "") << "\n"
                << report);
  CHECK(bad == 0);
  if (c.variant == prefill::Variant::hopper || c.variant == prefill::Variant::hopper_ws ||
      c.variant == prefill::Variant::hopper_pingpong)
    CHECK(prefill::hopper_detail::barrier_timeouts(true) == 0);  // nonzero: a TMA/mbarrier pipeline broke
}

}  // namespace

TEST_CASE("prefill attention matches the float64 reference across head_dims, layouts, masks and lengths", "[cuda]") {
  MHACFG_REQUIRE_CUDA_DEVICE();
  struct Lens {
    int q, kv;
  };
  const Lens lens[] = {{1, 1}, {17, 17}, {130, 130}, {77, 300}, {200, 201}, {1, 97}};
  struct Heads {
    int q, kv;
  };
  const Heads heads[] = {{4, 4}, {8, 2}, {6, 1}};
  std::uint64_t seed = 500;
  int i = 0;
  for (int d : {64, 128, 256})
    for (auto variant : {prefill::Variant::rows16, prefill::Variant::rows32, prefill::Variant::rows32_keys64}) {
      if (d == 256 && variant != prefill::Variant::rows16) continue;  // resolves to rows16
      for (bool causal : {true, false})
        for (const Lens& l : lens) {
          PrefillCase c;
          c.q_len = l.q;
          c.kv_len = l.kv;
          const Heads& h = heads[i++ % 3];
          c.num_q_heads = h.q;
          c.num_kv_heads = h.kv;
          c.head_dim = d;
          c.causal = causal;
          c.variant = variant;
          check_prefill(c, ++seed);
        }
    }
}

TEST_CASE("prefill attention reads a packed QKV matrix", "[cuda]") {
  MHACFG_REQUIRE_CUDA_DEVICE();
  for (int d : {64, 128}) {
    PrefillCase c;
    c.q_len = c.kv_len = 150;
    c.num_q_heads = 8;
    c.num_kv_heads = 2;
    c.head_dim = d;
    c.packed_qkv = true;
    check_prefill(c, 700 + d);
  }
}

TEST_CASE("prefill attention small case for the sanitizers", "[cuda][sanitize]") {
  MHACFG_REQUIRE_CUDA_DEVICE();
  for (auto variant : {prefill::Variant::rows16, prefill::Variant::rows32, prefill::Variant::rows32_keys64}) {
    PrefillCase c;
    c.batch = 1;
    c.q_len = 70;
    c.kv_len = 135;
    c.num_q_heads = 2;
    c.num_kv_heads = 1;
    c.head_dim = 128;
    c.variant = variant;
    check_prefill(c, 800 + static_cast<int>(variant));
  }
}

TEST_CASE("prefill attention says which shapes it does not run", "[cuda]") {
  AttentionShape s;
  s.q_len = 128;
  s.kv_len = 128;
  s.num_q_heads = 8;
  s.num_kv_heads = 2;
  s.head_dim = 128;
  s.v_head_dim = 128;
  CHECK(prefill::unsupported_reason(s).empty());
  AttentionShape bad = s;
  bad.v_head_dim = 64;
  CHECK(!prefill::unsupported_reason(bad).empty());
  bad = s;
  bad.q_len = 200;
  CHECK(!prefill::unsupported_reason(bad).empty());
  bad = s;
  bad.num_kv_heads = 3;
  CHECK(!prefill::unsupported_reason(bad).empty());
  CHECK(prefill::resolve(prefill::Variant::automatic, 256) == prefill::Variant::rows16);
  CHECK(prefill::resolve(prefill::Variant::automatic, 128) == prefill::Variant::rows32_keys64);
  CHECK(prefill::resolve(prefill::Variant::automatic, 64) == prefill::Variant::rows32);
  CHECK(prefill::resolve(prefill::Variant::rows16, 128) == prefill::Variant::rows16);
  for (int d : {64, 128, 256}) {
    CHECK(prefill::resolve(prefill::Variant::hopper, d) == prefill::Variant::hopper);
    CHECK(prefill::resolve(prefill::Variant::hopper_ws, d) == prefill::Variant::hopper_ws);
    CHECK(prefill::resolve(prefill::Variant::hopper_pingpong, d) == prefill::Variant::hopper_pingpong);
  }
}

namespace {

// True when the current device can run the hopper variants (sm_90). On another device they must
// refuse with InputError before launching anything; the caller then reports the test as skipped.
bool hopper_device_or_refusal() {
  const auto& dev = kernels::cuda::device_info(kernels::cuda::current_device());
  if (dev.compute_capability_major == 9 && dev.compute_capability_minor == 0) return true;
  for (auto variant : {prefill::Variant::hopper, prefill::Variant::hopper_ws, prefill::Variant::hopper_pingpong}) {
    PrefillCase c;
    c.head_dim = 128;
    c.variant = variant;
    CHECK_THROWS_AS(check_prefill(c, 1), InputError);
  }
  WARN("not an sm_90 device: the hopper variant refused, as it must");
  std::cout << MHACFG_TEST_SKIPPED_MARKER << std::endl;
  return false;
}

}  // namespace

TEST_CASE("hopper prefill matches the float64 reference across head_dims, masks and lengths", "[cuda][hopper]") {
  MHACFG_REQUIRE_CUDA_DEVICE();
  if (!hopper_device_or_refusal()) return;
  struct Lens {
    int q, kv;
  };
  // 128-row query blocks and 128-key tiles (64 at d256): one and several of each, ragged ends,
  // queries at the end of the keys, and 700-1000 keys so each K/V stage is refilled several times.
  const Lens lens[] = {{1, 1}, {17, 17}, {130, 130}, {77, 300}, {200, 201}, {1, 97}, {300, 700}, {64, 1000}};
  struct Heads {
    int q, kv;
  };
  const Heads heads[] = {{4, 4}, {8, 2}, {6, 1}};
  std::uint64_t seed = 900;
  int i = 0;
  for (auto variant : {prefill::Variant::hopper, prefill::Variant::hopper_ws, prefill::Variant::hopper_pingpong})
    for (int d : {64, 128, 256})
      for (bool causal : {true, false})
        for (const Lens& l : lens) {
          PrefillCase c;
          c.q_len = l.q;
          c.kv_len = l.kv;
          const Heads& h = heads[i++ % 3];
          c.num_q_heads = h.q;
          c.num_kv_heads = h.kv;
          c.head_dim = d;
          c.causal = causal;
          c.variant = variant;
          check_prefill(c, ++seed);
        }
}

TEST_CASE("hopper prefill reads a packed QKV matrix", "[cuda][hopper]") {
  MHACFG_REQUIRE_CUDA_DEVICE();
  if (!hopper_device_or_refusal()) return;
  for (auto variant : {prefill::Variant::hopper, prefill::Variant::hopper_ws, prefill::Variant::hopper_pingpong})
    for (int d : {64, 128}) {
      PrefillCase c;
      c.q_len = c.kv_len = 150;
      c.num_q_heads = 8;
      c.num_kv_heads = 2;
      c.head_dim = d;
      c.packed_qkv = true;
      c.variant = variant;
      check_prefill(c, 1700 + d);
    }
}

TEST_CASE("hopper prefill small case for the sanitizers", "[cuda][hopper][sanitize]") {
  MHACFG_REQUIRE_CUDA_DEVICE();
  if (!hopper_device_or_refusal()) return;
  for (auto variant : {prefill::Variant::hopper, prefill::Variant::hopper_ws, prefill::Variant::hopper_pingpong})
    for (bool causal : {true, false}) {
      PrefillCase c;
      c.batch = 1;
      c.q_len = 70;
      c.kv_len = 300;  // 3 key tiles: both stages, one refill
      c.num_q_heads = 2;
      c.num_kv_heads = 1;
      c.head_dim = 128;
      c.causal = causal;
      c.variant = variant;
      check_prefill(c, causal ? 1801 : 1802);
    }
}

TEST_CASE("hopper prefill TMA maps follow cuTensorMapEncodeTiled's rules", "[cuda]") {
  namespace hd = prefill::hopper_detail;
  // The layouts the kernels see: [batch, tokens, heads, d] (tests, speed tool), a packed QKV row
  // (attention block), one sequence with a meaningless batch stride.
  for (int d : {64, 128, 256}) {
    const hd::MapGeometry g = hd::map_geometry(d, 8, 4096, 4, 8 * d, 8LL * d * 4096, 128);
    CHECK(hd::map_geometry_problem(g).empty());
    CHECK(g.dims[0] == static_cast<std::uint64_t>(d));
    CHECK(g.dims[1] == 8);
    CHECK(g.dims[2] == 4096);
    CHECK(g.dims[3] == 4);
    CHECK(g.strides[0] == static_cast<std::uint64_t>(2 * d));
    CHECK(g.strides[1] == static_cast<std::uint64_t>(16 * d));
    CHECK(g.strides[2] == static_cast<std::uint64_t>(16LL * d * 4096));
    CHECK(g.box[0] == 64);
    CHECK(g.box[2] == 128);
    const std::int64_t row = (8 + 2 * 2) * d;  // packed q | k | v columns, 8 query and 2 KV heads
    CHECK(hd::map_geometry_problem(hd::map_geometry(d, 2, 150, 2, row, row * 150, 128)).empty());
    CHECK(hd::map_geometry_problem(hd::map_geometry(d, 1, 1, 1, d, 0, 64)).empty());  // 1 token, box of 64
  }
  // Layouts TMA cannot describe are refused before anything launches.
  CHECK(!hd::map_geometry_problem(hd::map_geometry(128, 8, 100, 2, 4 * 128, 8LL * 128 * 100, 128)).empty());  // overlap
  CHECK(!hd::map_geometry_problem(hd::map_geometry(128, 8, 100, 2, 8 * 128 + 4, 8LL * 128 * 100, 128)).empty());  // 8 B
  CHECK(!hd::map_geometry_problem(hd::map_geometry(128, 8, 100, 1, 8 * 128, 0, 512)).empty());  // box of 512 rows
}
