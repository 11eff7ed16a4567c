// Decode attention (src/decode_attention.cu) against the float64 reference: head_dims, GQA group
// sizes (MHA, 3, 4, MQA 32 and 40, 64), lengths that are not multiples of the 64-token tile,
// forced and planned split counts, variable lengths (zero included) and strided layouts.
#include <catch2/catch.hpp>

#include <cmath>

#include "mhacfg/kernels/cuda/decode_attention.hpp"
#include "reference.hpp"

namespace {

using namespace mhacfg;
using namespace mhacfg::test;
namespace decode = mhacfg::kernels::cuda::decode;

struct DecodeCase {
  int batch = 2;
  int num_q_heads = 8;
  int num_kv_heads = 2;
  int head_dim = 128;
  int kv_len = 100;                // capacity and uniform length
  std::vector<int> kv_lens;        // empty: uniform
  int num_splits = 0;
  int q_pad = 0, kv_pad = 0, o_pad = 0;  // extra elements per row (strided layouts)
  float q_range = 2.f;             // q in [-q_range, q_range): sharper softmax than [-1, 1)
  bool fused_merge = false;        // true: splits merged inside the split kernel where the grid fits
  bool expect_fused = false;       // the plan must merge in the grid (the device allows cooperative launches)
  bool fp8 = false;                // K and V in e4m3 with one fp32 scale each (quantize_e4m3)
};

void check_decode(const DecodeCase& c, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const std::int64_t q_row = static_cast<std::int64_t>(c.num_q_heads) * c.head_dim + c.q_pad;
  const std::int64_t kv_tok = static_cast<std::int64_t>(c.num_kv_heads) * c.head_dim + c.kv_pad;
  const std::int64_t o_row = static_cast<std::int64_t>(c.num_q_heads) * c.head_dim + c.o_pad;
  const auto q = random_bf16_values(c.batch * q_row, rng, -c.q_range, c.q_range);
  const std::size_t kv_elems = static_cast<std::size_t>(c.batch) * c.kv_len * kv_tok;
  // fp8: K and V quantised per tensor (values in [-1, 1) as the bf16 case); the reference reads the
  // dequantised values, the kernel the codes and the two scales.
  Fp8Tensor k8, v8;
  if (c.fp8) {
    k8 = quantize_e4m3(kv_elems, rng, 1.f);
    v8 = quantize_e4m3(kv_elems, rng, 1.f);
  }
  const auto k = c.fp8 ? k8.values : random_bf16_values(kv_elems, rng, -1.f, 1.f);
  const auto v = c.fp8 ? v8.values : random_bf16_values(kv_elems, rng, -1.f, 1.f);
  std::vector<int> lens = c.kv_lens.empty() ? std::vector<int>(c.batch, c.kv_len) : c.kv_lens;

  auto dq = upload_bf16(q, 64);
  kernels::cuda::DeviceBuffer dk, dv;
  if (c.fp8) {  // 64 bytes past the end, as the bf16 uploads pad
    dk = kernels::cuda::DeviceBuffer(kv_elems + 64);
    dv = kernels::cuda::DeviceBuffer(kv_elems + 64);
    kernels::cuda::copy_to_device(dk.get(), k8.codes.data(), kv_elems);
    kernels::cuda::copy_to_device(dv.get(), v8.codes.data(), kv_elems);
  } else {
    dk = upload_bf16(k, 64);
    dv = upload_bf16(v, 64);
  }
  const std::size_t o_elems = static_cast<std::size_t>(c.batch) * o_row;
  auto dout = poisoned_bf16(o_elems);
  kernels::cuda::DeviceBuffer dlens;
  decode::Params p;
  p.batch = c.batch;
  p.num_q_heads = c.num_q_heads;
  p.num_kv_heads = c.num_kv_heads;
  p.head_dim = c.head_dim;
  p.kv_len = c.kv_len;
  if (!c.kv_lens.empty()) {
    dlens = upload_i32(std::vector<std::int32_t>(lens.begin(), lens.end()));
    p.kv_lens = dlens.as<std::int32_t>();
  }
  p.softmax_scale = 1.f / std::sqrt(static_cast<float>(c.head_dim));
  p.fused_merge = c.fused_merge;
  p.q = dq.as<kernels::cuda::Bf16>();
  p.q_batch_stride = q_row;
  if (c.fp8) {
    p.fp8_kv = true;
    p.k8 = dk.as<kernels::cuda::Fp8E4m3>();
    p.v8 = dv.as<kernels::cuda::Fp8E4m3>();
    p.k_scale = k8.scale;
    p.v_scale = v8.scale;
  } else {
    p.k = dk.as<kernels::cuda::Bf16>();
    p.v = dv.as<kernels::cuda::Bf16>();
  }
  p.kv_token_stride = kv_tok;
  p.kv_batch_stride = kv_tok * c.kv_len;
  p.o = dout.as<kernels::cuda::Bf16>();
  p.o_batch_stride = o_row;
  p.num_splits = c.num_splits;
  const decode::Plan plan = decode::plan(p);
  const auto& dev = kernels::cuda::device_info(kernels::cuda::current_device());
  if (c.expect_fused && dev.cooperative_launch && dev.sm_count >= 100) {  // 100 SMs x 3 blocks hold 300 splits
    INFO("splits " << plan.num_splits << " x " << plan.tokens_per_split);
    REQUIRE(plan.fused);
  }
  kernels::cuda::DeviceBuffer ws(plan.workspace_bytes);
  if (plan.workspace_bytes > 0) {
    kernels::cuda::fill_bytes(ws.get(), kernels::cuda::kPoisonByte, plan.workspace_bytes, nullptr);
    p.workspace = ws.get();
    p.workspace_bytes = plan.workspace_bytes;
  }
  decode::run(p, nullptr);
  kernels::cuda::synchronize(nullptr);
  const auto out_padded = download_bf16(dout, o_elems);

  AttentionProblem ref;
  ref.batch = c.batch;
  ref.q_len = 1;
  ref.num_q_heads = c.num_q_heads;
  ref.num_kv_heads = c.num_kv_heads;
  ref.qk_dim = ref.v_dim = c.head_dim;
  ref.scale = 1.0 / std::sqrt(static_cast<double>(c.head_dim));
  ref.kv_lens = lens;
  ref.q = q.data();
  ref.q_batch_stride = q_row;
  ref.q_head_stride = c.head_dim;
  ref.k = k.data();
  ref.v = v.data();
  ref.k_batch_stride = ref.v_batch_stride = kv_tok * c.kv_len;
  ref.k_token_stride = ref.v_token_stride = kv_tok;
  ref.k_head_stride = ref.v_head_stride = c.head_dim;
  const auto expected = attention_reference(ref);

  std::vector<float> out;  // drop the row padding (it is never written)
  for (int b = 0; b < c.batch; ++b)
    out.insert(out.end(), out_padded.begin() + b * o_row, out_padded.begin() + b * o_row + c.num_q_heads * c.head_dim);
  std::string report;
  const std::size_t bad = count_mismatches(out, expected, kAttentionTol, report);
  INFO((c.fp8 ? "fp8 KV, " : "") << "batch " << c.batch << " heads " << c.num_q_heads << "/" << c.num_kv_heads << " d " << c.head_dim << " kv_len "
                << c.kv_len << " splits " << c.num_splits << " (planned " << plan.num_splits << " x "
                << plan.tokens_per_split << ")\n"
                << report);
  CHECK(bad == 0);
}

}  // namespace

TEST_CASE("decode attention matches the float64 reference across head_dims, groups, lengths and splits", "[cuda]") {
  MHACFG_REQUIRE_CUDA_DEVICE();
  struct Heads {
    int q, kv;
  };
  const Heads heads[] = {{4, 4}, {12, 4}, {32, 8}, {32, 1}, {40, 1}, {64, 1}};
  std::uint64_t seed = 100;
  for (int d : {64, 128, 256})
    for (const Heads& h : heads)
      for (int kv_len : {1, 77, 1000})
        for (int splits : {0, 1, 5}) {
          if (d == 256 && h.q >= 40 && kv_len == 1000 && splits != 0) continue;  // keep the reference's time down
          DecodeCase c;
          c.num_q_heads = h.q;
          c.num_kv_heads = h.kv;
          c.head_dim = d;
          c.kv_len = kv_len;
          c.num_splits = splits;
          check_decode(c, ++seed);
        }
}

TEST_CASE("decode attention handles variable lengths, empty sequences and many splits", "[cuda][sanitize]") {
  MHACFG_REQUIRE_CUDA_DEVICE();
  DecodeCase c;
  c.batch = 6;
  c.num_q_heads = 32;
  c.num_kv_heads = 8;
  c.head_dim = 128;
  c.kv_len = 700;
  c.kv_lens = {1, 0, 63, 64, 65, 700};
  for (bool fused : {true, false})
    for (int splits : {0, 1, 3, 11}) {
      c.num_splits = splits;
      c.fused_merge = fused;
      check_decode(c, 7 + splits);
    }
}

TEST_CASE("decode attention merges splits in the grid or in the combine kernel alike", "[cuda]") {
  MHACFG_REQUIRE_CUDA_DEVICE();
  // One wave (fused where the device allows it) and, at 64 sequences x 8 KV heads x 16 splits,
  // more blocks than fit at once (always the combine kernel); MQA's 32-row groups and head_dim 64.
  struct Shape {
    int batch, q, kv, d, len, splits;
  };
  // The last shape merges 300 splits in the grid (one wave at 3 blocks per SM on 132 SMs): more than
  // one round of a lane's batched loads (256 splits), and a partial last round.
  const Shape shapes[] = {{1, 32, 1, 128, 4000, 0}, {1, 32, 8, 128, 3000, 0}, {2, 16, 16, 64, 2500, 7},
                          {64, 32, 8, 128, 1100, 16}, {1, 32, 1, 128, 4096, 128}, {1, 16, 1, 64, 19200, 300}};
  std::uint64_t seed = 300;
  for (const Shape& sh : shapes)
    for (bool fused : {true, false}) {
      DecodeCase c;
      c.batch = sh.batch;
      c.num_q_heads = sh.q;
      c.num_kv_heads = sh.kv;
      c.head_dim = sh.d;
      c.kv_len = sh.len;
      c.num_splits = sh.splits;
      c.fused_merge = fused;
      c.expect_fused = fused && sh.splits == 300;
      check_decode(c, ++seed);
    }
}

TEST_CASE("decode attention reads strided q, padded KV rows and writes strided o", "[cuda]") {
  MHACFG_REQUIRE_CUDA_DEVICE();
  DecodeCase c;
  c.batch = 3;
  c.num_q_heads = 16;
  c.num_kv_heads = 4;
  c.head_dim = 64;
  c.kv_len = 333;
  c.q_pad = 24;
  c.kv_pad = 8;
  c.o_pad = 16;
  for (int splits : {0, 2}) {
    c.num_splits = splits;
    check_decode(c, 55 + splits);
  }
}

TEST_CASE("decode attention small case for the sanitizers", "[cuda][sanitize]") {
  MHACFG_REQUIRE_CUDA_DEVICE();
  DecodeCase c;
  c.batch = 2;
  c.num_q_heads = 8;
  c.num_kv_heads = 1;
  c.head_dim = 256;
  c.kv_len = 130;
  for (int splits : {1, 2}) {
    c.num_splits = splits;
    check_decode(c, 91 + splits);
  }
}

TEST_CASE("decode attention says which shapes it does not run", "[cuda]") {
  AttentionShape s;
  s.q_len = 1;
  s.kv_len = 100;
  s.num_q_heads = 32;
  s.num_kv_heads = 8;
  s.head_dim = 128;
  s.v_head_dim = 128;
  CHECK(decode::unsupported_reason(s).empty());
  AttentionShape bad = s;
  bad.head_dim = bad.v_head_dim = 96;
  CHECK(decode::unsupported_reason(bad).find("head_dim") != std::string::npos);
  bad = s;
  bad.num_q_heads = 128;
  bad.num_kv_heads = 1;
  CHECK(decode::unsupported_reason(bad).find("group size") != std::string::npos);
  bad = s;
  bad.q_len = 2;
  CHECK(!decode::unsupported_reason(bad).empty());
  bad = s;
  bad.window = 64;
  CHECK(!decode::unsupported_reason(bad).empty());
}

// fp8 KV (e4m3, one fp32 scale per tensor, the kernel's F8 variant): the same float64 reference on the
// dequantised K and V and the same tolerance (the conversion to bf16 is exact, K's scale rides on the
// softmax scale and V's on the output; P's bf16 rounding bounds the error as in the bf16 case).
TEST_CASE("decode attention over an fp8 KV cache matches the float64 reference on the dequantised K and V",
          "[cuda][fp8]") {
  MHACFG_REQUIRE_CUDA_DEVICE();
  struct Heads {
    int q, kv;
  };
  const Heads heads[] = {{4, 4}, {12, 4}, {32, 8}, {32, 1}, {64, 1}};
  std::uint64_t seed = 2850;
  for (int d : {64, 128})
    for (const Heads& h : heads)
      for (int kv_len : {1, 77, 1000})
        for (int splits : {0, 1, 5}) {
          DecodeCase c;
          c.fp8 = true;
          c.num_q_heads = h.q;
          c.num_kv_heads = h.kv;
          c.head_dim = d;
          c.kv_len = kv_len;
          c.num_splits = splits;
          check_decode(c, ++seed);
        }
  // Strided rows (KV rows padded by 16 codes), variable lengths with an empty sequence, merged in the
  // grid and by the combine kernel.
  DecodeCase c;
  c.fp8 = true;
  c.batch = 3;
  c.num_q_heads = 16;
  c.num_kv_heads = 4;
  c.head_dim = 64;
  c.kv_len = 333;
  c.q_pad = 24;
  c.kv_pad = 16;
  c.o_pad = 16;
  check_decode(c, 2900);
  c.kv_pad = 0;
  c.head_dim = 128;
  c.kv_lens = {0, 65, 333};
  for (bool fused : {true, false}) {
    c.fused_merge = fused;
    c.num_splits = 3;
    check_decode(c, 2901 + fused);
  }
}

TEST_CASE("fp8 KV decode small case for the sanitizers", "[cuda][sanitize][fp8]") {
  MHACFG_REQUIRE_CUDA_DEVICE();
  DecodeCase c;
  c.fp8 = true;
  c.batch = 2;
  c.num_q_heads = 8;
  c.num_kv_heads = 2;
  c.head_dim = 128;
  c.kv_len = 130;
  for (int splits : {1, 2}) {
    c.num_splits = splits;
    check_decode(c, 2950 + splits);
  }
}

TEST_CASE("fp8 KV decode says which shapes it does not run, and the harness runs fp8 decode records", "[cuda][fp8]") {
  AttentionShape s;
  s.batch = 64;
  s.q_len = 1;
  s.kv_len = 32768;
  s.num_q_heads = 32;
  s.num_kv_heads = 8;
  s.head_dim = 128;
  s.v_head_dim = 128;
  s.causal = false;
  CHECK(decode::unsupported_reason_fp8(s).empty());
  AttentionShape d256 = s;
  d256.head_dim = d256.v_head_dim = 256;
  CHECK(decode::unsupported_reason(d256).empty());  // bf16 runs it
  CHECK(decode::unsupported_reason_fp8(d256).find("head_dim 256") != std::string::npos);
  MeasurementRecord r;
  r.shape = AttentionOp{Phase::decode, s};
  r.dtype = DType::fp8;
  CHECK(r.op_class() == "attention/decode/fp8");
  CHECK(kernels::cuda_unsupported_reason(r).empty());
  r.attention() = d256;
  CHECK(kernels::cuda_unsupported_reason(r).find("head_dim 256") != std::string::npos);
  // Prefill over fp8 K/V has no CUDA kernel: refused naming the dtype.
  MeasurementRecord pre;
  pre.shape = AttentionOp{Phase::prefill, AttentionShape{1, 512, 512, 8, 8, 128, 128, true, 0, 0, 0}};
  pre.dtype = DType::fp8;
  CHECK(kernels::cuda_unsupported_reason(pre).find("dtype fp8") != std::string::npos);
}
