#include "mhacfg/costmodel/kernel_class.hpp"

#include <algorithm>
#include <cmath>

#include "mhacfg/costmodel/profile.hpp"

namespace mhacfg {

const std::vector<KernelClass>& kernel_classes() {
  static const std::vector<KernelClass> all = [] {
    KernelClass mla;
    mla.name = "flashmla";
    mla.op_class = "attention/decode/mla";
    mla.summary = "FlashMLA-class absorbed MLA decode: 90 % of the datasheet bandwidth, 67 % of its bf16 peak, "
                  "query rows in tiles of 64";
    // FlashMLA's README (github.com/deepseek-ai/FlashMLA): "The dense MLA decoding kernel achieves up
    // to 3000 GB/s in memory-bound configuration and 660 TFLOPS in computation-bound configuration on
    // H800 SXM5 with CUDA 12.8". Its deep dive (docs/20250422-new-kernel-deep-dive.md) gives the
    // card: "a peak memory bandwidth of 3.35 TB/s and peak FLOPs of 990 TFlops" (dense bf16; the
    // maintainers in FlashMLA issue #75: "989 TFLOPS for dense mma"), so 3000 / 3350 = 0.90 and
    // 660 / 990 = 0.67. mhacfg's own CUDA MLA decode kernel read 4.34 TB/s on the H200 (16 heads,
    // batch 64, 32768 tokens) of the datasheet's 4.8: 0.90 as well.
    mla.bw_efficiency = 0.90;
    mla.flop_efficiency = 0.67;
    // The deep dive's output tile is "64 x 512" (64 query rows: heads x query positions), and a
    // published H20 run (FlashMLA issue #30, 16 heads, batch 128, 4096 tokens) took 0.601-0.614 ms
    // for 1-4 query positions (16-64 rows) and 1.168-1.172 ms for 5-6 (80-96 rows): rows are
    // computed in whole tiles of 64.
    mla.row_tile = 64;
    // mhacfg's split-KV MLA kernel and its combine (FlashMLA's structure too: splitkv_mla and combine)
    // took 17.1 us for batch 1, 4096 tokens, 16 heads on the H200, 1.1 us of it reading the latents.
    mla.t0_s = 16e-6;
    mla.head_dim = 576;  // kv_lora_rank 512 + rope 64: FlashMLA's "head_dim_k = 576 with head_dim_v = 512"
    mla.source =
        "FlashMLA README (github.com/deepseek-ai/FlashMLA): up to 3000 GB/s memory-bound and 660 TFLOPS "
        "compute-bound on H800 SXM5, whose peaks its deep dive gives as 3.35 TB/s and 990 TFLOPS; mhacfg's CUDA "
        "MLA decode kernel: 4.34 TB/s on the H200 (4.8 TB/s datasheet)";
    mla.expected_median_ape = 0.06;
    mla.expected_p90_ape = 0.23;
    mla.expected_how =
        "memory-bound (16 heads): the 7 H200 timings of mhacfg's CUDA MLA decode kernel at 16 heads "
        "(tests/fixtures/h200-mhacfg-cuda.grid.jsonl and .holdout.jsonl; the worst, one sequence of 32768 tokens, "
        "-33 %); compute-bound (64 rows and more) not checked against a timing: FlashMLA's published 660 TFLOPS is "
        "its best case, and mhacfg's mma.sync kernel (154 TFLOP/s at 128 heads) is not FlashMLA-class. Off Hopper "
        "(A100, Ada, Blackwell, MI300X) engines run other MLA kernels (FlashInfer, Triton, CUTLASS, AITER): the same "
        "efficiencies are assumed, not measured";
    return std::vector<KernelClass>{mla};
  }();
  return all;
}

const KernelClass* find_kernel_class(const std::string& name) {
  for (const auto& k : kernel_classes())
    if (k.name == name) return &k;
  return nullptr;
}

const std::vector<std::pair<std::string, std::string>>& default_gpu_kernel_classes() {
  static const std::vector<std::pair<std::string, std::string>> d = {{"attention/decode/mla", "flashmla"}};
  return d;
}

double kernel_class_seconds(const KernelClass& k, const Profile& profile, const OpFeatures& f) {
  const double rows = std::max(1.0, f.rows);
  const double padded = std::ceil(rows / k.row_tile) * k.row_tile;
  const double compute = f.flop * (padded / rows) / (k.flop_efficiency * profile.peak_flop_per_s(DType::bf16));
  const double memory = f.bytes / (k.bw_efficiency * profile.spec.mem_bw_bytes_per_s);
  return k.t0_s + std::max(compute, memory);
}

}  // namespace mhacfg
