// Hugging Face model ids ("meta-llama/Llama-3.1-8B") resolved to the config.json already in the local
// Hugging Face cache, as the hub library lays it out; never the network.
#pragma once

#include <string>
#include <vector>

namespace mhacfg {

// The cache folders looked in, in order: $HF_HUB_CACHE, $HF_HOME/hub, ~/.cache/huggingface/hub (each
// when its variable is set; duplicates once).
std::vector<std::string> hf_cache_dirs();

// Whether `arg` has the shape of a Hub model id: "org/name" (one '/', neither part empty, "." or
// "..", not ending in .json).
bool looks_like_hf_id(const std::string& arg);

// The cached config.json of model `id` at the revision refs/main names (or, without refs/main, of the
// only snapshot). Throws InputError naming `field`, the id and every path tried when none is cached.
std::string hf_cached_config(const std::string& id, const std::string& field);

}  // namespace mhacfg
