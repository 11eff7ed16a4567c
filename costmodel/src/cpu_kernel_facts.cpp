#include "mhacfg/costmodel/cpu_kernel_facts.hpp"

#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "mhacfg/costmodel/json_fields.hpp"

namespace mhacfg {

namespace {
using Field = std::pair<const char*, std::int64_t CpuKernelFacts::*>;
const std::vector<Field>& fields() {
  static const std::vector<Field> v = {{"row_block", &CpuKernelFacts::row_block},
                                       {"skinny_gemm_rows", &CpuKernelFacts::skinny_gemm_rows},
                                       {"decode_small_rows", &CpuKernelFacts::decode_small_rows},
                                       {"prefill_tile_rows", &CpuKernelFacts::prefill_tile_rows},
                                       {"prefill_key_tile", &CpuKernelFacts::prefill_key_tile},
                                       {"linear_token_block", &CpuKernelFacts::linear_token_block},
                                       {"indexer_tile_rows", &CpuKernelFacts::indexer_tile_rows},
                                       {"indexer_key_tile", &CpuKernelFacts::indexer_key_tile}};
  return v;
}
}  // namespace

CpuKernelFacts cpu_kernel_facts_from_json(const nlohmann::json& j, const std::string& where) {
  const JsonFields f(j, where);
  CpuKernelFacts facts;
  for (const auto& [key, field] : fields())
    if (auto v = f.optional_int(key)) facts.*field = *v;
  return facts;
}

nlohmann::json cpu_kernel_facts_to_json(const CpuKernelFacts& facts) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [key, field] : fields()) j[key] = facts.*field;
  return j;
}

}  // namespace mhacfg
