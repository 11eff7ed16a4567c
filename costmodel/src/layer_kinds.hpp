// LayerKinds: a model's layers grouped by kind, so counts over layers cost one evaluation per kind
// (counts.cpp). Internal to the costmodel library.
#pragma once

#include <array>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "mhacfg/costmodel/checked.hpp"
#include "mhacfg/costmodel/model_spec.hpp"

namespace mhacfg {

// The distinct (window, chunk, moe) layer kinds and how many layers have each: models have one to three
// kinds (Gemma-2 alternates two), however many layers. Counting by kind keeps an evaluation cheap.
struct LayerKinds {
  struct Kind {
    const LayerSpec* layer;
    std::int64_t count;
  };
  std::array<Kind, 8> kinds{};
  std::size_t n = 0;
  std::vector<const LayerSpec*> rest;  // layers beyond eight kinds, counted one by one

  explicit LayerKinds(const ModelSpec& m) {
    for (const auto& l : m.layers) {
      std::size_t k = 0;
      while (k < n && !same_kind(*kinds[k].layer, l)) ++k;
      if (k < n) ++kinds[k].count;
      else if (n < kinds.size()) kinds[n++] = {&l, 1};
      else rest.push_back(&l);
    }
  }

  // Sums f(layer) over all layers, in f's count type: a WideCount, or a std::int64_t that must fit 64 bits.
  template <typename F>
  auto sum(const char* quantity, F f) const {
    WideCount total = 0;
    for (std::size_t k = 0; k < n; ++k) total = wide_add(total, wide_mul(kinds[k].count, f(*kinds[k].layer), quantity), quantity);
    for (const LayerSpec* l : rest) total = wide_add(total, f(*l), quantity);
    if constexpr (std::is_same_v<decltype(f(*kinds[0].layer)), WideCount>) return total;
    else return narrow(total, quantity);
  }
};

}  // namespace mhacfg
