// A layer's mixer, FFN and span: what the factories build, what each combination counts as, and what
// validate() still refuses among the combinations the types can express.
#include "mhacfg/costmodel/model_spec.hpp"

#include <catch2/catch.hpp>

#include "mhacfg/costmodel/errors.hpp"

using namespace mhacfg;

namespace {
// Two layers of d 256, 4 heads of 64 (MHA), a dense FFN; the layers are the test's to set.
ModelSpec two_layers(const LayerSpec& first, const LayerSpec& second) {
  ModelSpec m;
  m.d_model = 256;
  m.vocab_size = 100;
  m.layers = {first, second};
  m.attention.num_q_heads = m.attention.num_kv_heads = 4;
  m.attention.head_dim = m.attention.v_head_dim = 64;
  m.ffn.ffn_dim = 512;
  m.moe = MoeSpec{8, 0, 128, 0, 2};
  m.linear = LinearAttentionSpec{2, 4, 32, 32, 4};
  return m;
}
}  // namespace

TEST_CASE("a layer's factories say what mixes its tokens and what reads the cache", "[model_spec]") {
  const LayerSpec attention = LayerSpec::attention();
  CHECK(attention.softmax());
  CHECK_FALSE(attention.has_linear());
  CHECK(attention.full_attention());
  CHECK(attention.local_span() == 0);

  const LayerSpec linear = LayerSpec::linear();
  CHECK_FALSE(linear.softmax());
  CHECK(linear.has_linear());
  CHECK_FALSE(linear.full_attention());  // no softmax cache to grow

  const LayerSpec parallel = LayerSpec::parallel().with_window(512);  // Falcon-H1 with a window
  CHECK(parallel.softmax());
  CHECK(parallel.has_linear());
  CHECK(parallel.window() == 512);
  CHECK(parallel.local_span() == 512);

  const LayerSpec experts = LayerSpec::ffn_only(LayerFfn::moe);
  CHECK_FALSE(experts.softmax());
  CHECK_FALSE(experts.has_linear());
  CHECK(experts.moe());
  CHECK(LayerSpec::attention().with_ffn(LayerFfn::none).ffn == LayerFfn::none);
}

TEST_CASE("a span is full, a window or a chunk, and 0 is full as configs and flags write it", "[model_spec]") {
  CHECK(LayerSpec::attention().with_window(0).full_attention());
  CHECK(LayerSpec::attention().with_chunk(0).span == Span::full());
  const LayerSpec chunked = LayerSpec::attention().with_window(4096).with_chunk(8192);  // the chunk replaces the window
  CHECK(chunked.window() == 0);
  CHECK(chunked.chunk() == 8192);
  CHECK(chunked.local_span() == 8192);
  CHECK_FALSE(chunked.full_attention());
  CHECK_FALSE(same_kind(chunked, LayerSpec::attention().with_window(8192)));
  LayerSpec sharing = LayerSpec::attention();
  sharing.shared_topk = true;
  CHECK_FALSE(same_kind(sharing, LayerSpec::attention()));
  CHECK(same_kind(LayerSpec::linear(), LayerSpec::linear()));
}

TEST_CASE("validate refuses the layers the types can write but the counts do not model", "[model_spec]") {
  validate(two_layers(LayerSpec::linear(), LayerSpec::ffn_only(LayerFfn::moe)));
  CHECK_THROWS_WITH(validate(two_layers(LayerSpec::attention(), LayerSpec::attention().with_window(-4))),
                    "layers[1].window = -4: must not be negative");
  validate(two_layers(LayerSpec::attention(), LayerSpec::ffn_only(LayerFfn::none)));  // Llama-Nemotron's skipped block
  CHECK_THROWS_WITH(validate(two_layers(LayerSpec::attention(), LayerSpec::attention().with_ffn(LayerFfn::moe).with_ffn_dim(512))),
                    "layers[1].ffn_dim = 512: only a dense FFN has a width of its own");
  CHECK_THROWS_WITH(validate(two_layers(LayerSpec::ffn_only(LayerFfn::dense).with_chunk(64), LayerSpec::attention())),
                    "layers[0].chunk = 64: an FFN-only layer has no window or chunk");
  CHECK_THROWS_WITH(validate(two_layers(LayerSpec::attention(), LayerSpec::linear().with_window(128))),
                    "layers[1].window = 128: a linear-attention layer has no window or chunk");
}
