// Kernel classes: an op class priced from a published kernel's stated efficiencies on a device's
// datasheet, in place of a profile's fit of whatever kernel its records measured. MLA decode is the
// case: the H200 cuDNN profile's only MLA timings are two torch bmm calls, which no serving engine
// runs, while engines decode MLA with FlashMLA-class kernels (docs/cost-model.md, "Kernel classes").
#pragma once

#include <string>
#include <vector>

#include "mhacfg/costmodel/op_features.hpp"

namespace mhacfg {

struct Profile;

struct KernelClass {
  std::string name;      // what profiles name it by: "flashmla"
  std::string op_class;  // the op class it prices: "attention/decode/mla"
  std::string summary;   // one phrase for basis text
  std::string source;    // where each figure comes from
  double bw_efficiency = 0;    // attained fraction of spec.mem_bw_bytes_per_s
  double flop_efficiency = 0;  // attained fraction of the bf16 dense peak
  double row_tile = 1;         // query rows (heads x query positions) are computed in tiles of this many
  double t0_s = 0;             // fixed cost per call (split-KV kernel + combine)
  double head_dim = 0;         // the Q/K width the kernel runs (0: any); others are flagged extrapolated
  double expected_median_ape = 0;
  double expected_p90_ape = 0;
  std::string expected_how;  // how the expected error was obtained
};

// Every kernel class mhacfg knows.
const std::vector<KernelClass>& kernel_classes();
// nullptr when no kernel class has this name.
const KernelClass* find_kernel_class(const std::string& name);
// The kernel class a GPU profile prices each op class with unless its file says otherwise:
// {"attention/decode/mla": "flashmla"}.
const std::vector<std::pair<std::string, std::string>>& default_gpu_kernel_classes();

// Seconds for one call of an op with features `f` on `profile`'s datasheet:
//   t0 + max( F * padded(r) / r / (flop_efficiency * bf16 peak),  B / (bw_efficiency * bandwidth) )
// with padded(r) the rows r rounded up to whole tiles (compute and memory overlap: the kernel's loads
// are pipelined under its matrix products).
double kernel_class_seconds(const KernelClass& k, const Profile& profile, const OpFeatures& f);

}  // namespace mhacfg
