// HF import of BitNet (transformers' bitnet: BitNetConfig and modular_bitnet.py; Microsoft's BitNet
// b1.58 2B4T): Llama's layout with BitNet's sub-norms.
#include "hf_config_families.hpp"

#include "mhacfg/costmodel/checked.hpp"
#include "mhacfg/costmodel/errors.hpp"
#include "mhacfg/costmodel/json_fields.hpp"

namespace mhacfg::hf {

// BitNetConfig: the class's sizes are BitNet b1.58 2B4T's (30 layers of 2560, 20 heads and 5 KV heads,
// a 6912-wide MLP, a vocabulary of 128256), untied by default; num_key_value_heads null is MHA (its
// backward-compatibility branch). BitNetAttention is LlamaAttention (attention_bias on q, k, v and o;
// head_dim from the file, else hidden_size / heads) with attn_sub_norm, an RMSNorm of hidden_size on the
// attention output before o_proj; BitNetMLP is GemmaMLP (gate, up and down without biases; hidden_act,
// relu2 by default, has no parameters) with ffn_sub_norm, an RMSNorm of intermediate_size before
// down_proj; the layer's two RMSNorms and the final norm are Llama's.
void parse_bitnet(const JsonFields& f, ModelSpec& m) {
  FamilyDefaults d{0, false, 5};
  d.hidden = 2560, d.layers = 30, d.heads = 20, d.ffn = 6912, d.vocab = 128256;
  parse_llama_like(f, m, d);
  attention_bias(f, m, false);
  AttentionSpec& a = m.attention;
  // attn_sub_norm is hidden_size wide: heads x head_dim must be, or the model cannot run.
  if (a.num_q_heads > 0 && a.head_dim > 0 && mul(a.num_q_heads, a.head_dim, "attention width") != m.d_model)
    throw InputError(f.name("head_dim"), int_text(a.head_dim),
                     "must make num_attention_heads x head_dim = hidden_size = " + int_text(m.d_model) +
                         " (BitNet's attn_sub_norm normalises the attention output over hidden_size)");
  a.output_norm = true;
  m.ffn.inner_norm = true;
  if (f.has("quantization_config"))
    m.notes.push_back("quantization_config (BitNet's ternary weights, packed four to a byte in the released checkpoint) "
                      "is not read: weights are counted in the weight dtype given.");
}

}  // namespace mhacfg::hf
