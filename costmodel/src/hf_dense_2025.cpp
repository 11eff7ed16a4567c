// HF import of dense families released in 2025 that are variants of one mhacfg already reads
// (VaultGemma). Each follows its transformers Config class and modeling code.
#include "hf_config_families.hpp"

namespace mhacfg::hf {

// VaultGemmaConfig (VaultGemma): Gemma2Config's keys and defaults (4 KV heads, head_dim 256, tied,
// layer_types or alternating windows), but VaultGemmaDecoderLayer deletes Gemma 2's post-attention and
// post-feedforward norms: two RMSNorms per layer.
void parse_vaultgemma(const JsonFields& f, ModelSpec& m) {
  parse_gemma2(f, m);
  m.norm.per_layer = 2;
}

}  // namespace mhacfg::hf
