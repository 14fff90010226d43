// Errors as values: a code from a closed table, the file, the byte offset and one sentence.
// Rendered as `model.gguf@0x1f40: tensor 'x': data ends past the end of the file`.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace akview {

// One row per rule that input can break. Keep in step with kErrorTable in error.cpp
// (a static_assert there checks the count).
enum class ErrorCode : uint8_t {
  io,                 // cannot open, stat or map a file or directory
  not_recognized,     // content matches no known format
  unsupported,        // recognised, but this version/variant/feature is not supported
  truncated,          // a read runs past the end of the file
  bad_magic,          // magic bytes wrong
  bad_version,        // unknown or refused format version
  header_too_small,   // file too short to hold its fixed header
  header_too_large,   // declared header larger than the format allows
  header_length,      // declared header length runs past the end of the file
  bad_utf8,           // text that must be UTF-8 is not
  bad_json,           // JSON syntax error
  schema,             // well-formed, but a field has the wrong kind or is missing
  duplicate_key,      // a key (metadata or JSON) appears twice
  duplicate_tensor,   // a tensor name appears twice
  unknown_type,       // unknown or removed dtype / ggml type / value type
  count_too_large,    // a count or length cannot fit in the bytes that remain
  overflow,           // size arithmetic overflows 64 bits
  too_many_dims,      // more dimensions than the format allows
  bad_shape,          // a dimension is negative or not a multiple of the block size
  size_mismatch,      // byte span disagrees with shape x type
  bad_offset,         // gap, overlap, reversal or misplacement of tensor data
  bad_alignment,      // alignment value invalid, or an offset not aligned
  out_of_bounds,      // data range lies beyond the end of the file
  trailing_bytes,     // bytes after the last tensor that no tensor covers
  missing_file,       // a shard / part / blob named by an index is absent
  shard_mismatch,     // a shard disagrees with its index or split set
  digest_mismatch,    // a blob's size or sha256 disagrees with its manifest
  refused,            // content akview will not interpret (e.g. a pickle global outside the allowlist)
  usage,              // bad command-line usage (exit code 2)
  not_found,          // a named tensor / key does not exist
  network,            // a server could not be reached, refused the request or answered against HTTP's rules
  changed,            // a remote file changed on the server since it was opened
  count_              // sentinel: number of codes
};

struct ErrorInfo {
  ErrorCode code;
  const char* slug;      // stable, used in JSON output: "bad_offset"
  const char* summary;   // one line for `akview --help-errors` and docs
};

const ErrorInfo& error_info(ErrorCode code);
inline constexpr uint64_t kNoOffset = ~uint64_t{0};

struct Error {
  ErrorCode code = ErrorCode::io;
  std::string file;              // path as given by the user (may be empty for usage errors)
  uint64_t offset = kNoOffset;   // byte offset in `file`, kNoOffset when the error has no position
  std::string message;           // one sentence, no trailing period needed

  // "file@0x1f40: message" (or "file: message" without an offset).
  std::string to_string() const;
};

Error make_error(ErrorCode code, std::string_view file, uint64_t offset, std::string message);

}   // namespace akview
