// The fuzz targets (cli_targets.cpp), shared by the libFuzzer binaries and the corpus replay test.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace mhacfg::fuzz {

// hf_config, profile, records, args.
const std::vector<std::string>& target_names();

// Runs one input through a target; aborts (with what broke) when the CLI's contract is broken.
void run_target(const std::string& target, const std::uint8_t* data, std::size_t size);

}  // namespace mhacfg::fuzz
