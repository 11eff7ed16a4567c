// Every op kind's shape and counts (one header per op under ops/, its sources under costmodel/ops/).
// The model-level counts, the kernels' benchmarks and the time model all count through them.
#pragma once

#include "mhacfg/costmodel/ops/attention.hpp"
#include "mhacfg/costmodel/ops/attention_block.hpp"
#include "mhacfg/costmodel/ops/gemm.hpp"
#include "mhacfg/costmodel/ops/indexer.hpp"
#include "mhacfg/costmodel/ops/linear_attention.hpp"
