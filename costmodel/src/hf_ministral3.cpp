// HF import of Mistral's ministral3 text model (Ministral 3's text_config inside its mistral3
// vision-language wrapper; Devstral 2's top-level Ministral3ForCausalLM), following transformers'
// Ministral3Config and modular_ministral3.py.
#include "hf_config_families.hpp"

#include "mhacfg/costmodel/json_fields.hpp"

namespace mhacfg::hf {

// Ministral3Config: Mistral's block (Ministral3Attention is MistralAttention with a position-dependent
// query scale, no parameters): no biases, 32 heads of head_dim 128 (null: hidden_size / heads), 8 KV
// heads when the key is missing, untied by default, the class's sizes those of Ministral-3-8B (34 layers
// of 4096, a 14336-wide MLP, 131072 tokens). sliding_window (none by default) windows every layer, as
// MistralAttention passes it to each; layer_types is ignored (the class only warns about it).
void parse_ministral3(const JsonFields& f, ModelSpec& m) {
  FamilyDefaults d{f.present("head_dim") ? 0 : 128, false, 8};
  d.hidden = 4096, d.layers = 34, d.heads = 32, d.ffn = 14336, d.vocab = 131072;
  parse_llama_like(f, m, d);
  set_all_windows(m, window_key(f, "sliding_window", 0));
}

}  // namespace mhacfg::hf
