// One SafeTensors file (FORMATS.md §1.1-1.6) parsed into a Model: the lowest piece of the SafeTensors
// openers. The single-file, sharded (safetensors_index.hpp), MLX and Ollama-blob openers all call it;
// it calls none of them.
#pragma once

#include <cstdint>
#include <string>

#include "core/model.hpp"
#include "core/result.hpp"

namespace akview {

inline constexpr uint64_t kSafetensorsPrefixBytes = 8;                // u64 N, the header's length
inline constexpr uint64_t kSafetensorsMaxHeaderBytes = 100'000'000;   // MAX_HEADER_SIZE (decimal), N == 1e8 accepted

// JSON's whitespace, which may precede the header's '{' (the reference reader tolerates it).
constexpr bool is_safetensors_json_ws(uint8_t c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

// Who finds a tensor name that a file's header repeats. `by_caller`: a header that parses and lays
// out cleanly is not checked (a caller that indexes the names of many files at once finds repeats
// there, and then asks again with `now` for the file's error); a header whose layout fails is checked
// first, so its error is the one `now` gives.
enum class NameCheck : uint8_t { now, by_caller };

// Parses one safetensors file into `model` (appending a SourceFile and its tensors). Returns the file
// index; on failure the model is left as it was.
Result<uint32_t> add_safetensors_file(Model& model, const std::string& path, const std::string& role,
                                      NameCheck names = NameCheck::now);

}   // namespace akview
