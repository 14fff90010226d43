// The closed table of error codes and the one-line rendering of an Error.
#include "core/error.hpp"

#include <fmt/format.h>
#include <array>

namespace akview {
namespace {

constexpr std::array kErrorTable = {
    ErrorInfo{ErrorCode::io, "io", "a file or directory cannot be opened, read or mapped"},
    ErrorInfo{ErrorCode::not_recognized, "not_recognized", "the content matches no known format"},
    ErrorInfo{ErrorCode::unsupported, "unsupported", "recognised, but not supported (yet)"},
    ErrorInfo{ErrorCode::truncated, "truncated", "a read runs past the end of the file"},
    ErrorInfo{ErrorCode::bad_magic, "bad_magic", "the magic bytes are wrong"},
    ErrorInfo{ErrorCode::bad_version, "bad_version", "unknown or refused format version"},
    ErrorInfo{ErrorCode::header_too_small, "header_too_small", "the file is too short for its fixed header"},
    ErrorInfo{ErrorCode::header_too_large, "header_too_large", "the declared header is larger than the format allows"},
    ErrorInfo{ErrorCode::header_length, "header_length", "the declared header length runs past the end of the file"},
    ErrorInfo{ErrorCode::bad_utf8, "bad_utf8", "text that must be UTF-8 is not"},
    ErrorInfo{ErrorCode::bad_json, "bad_json", "JSON syntax error"},
    ErrorInfo{ErrorCode::schema, "schema", "a field is missing or has the wrong kind"},
    ErrorInfo{ErrorCode::duplicate_key, "duplicate_key", "a key appears twice"},
    ErrorInfo{ErrorCode::duplicate_tensor, "duplicate_tensor", "a tensor name appears twice"},
    ErrorInfo{ErrorCode::unknown_type, "unknown_type", "unknown or removed data type"},
    ErrorInfo{ErrorCode::count_too_large, "count_too_large", "a count or length cannot fit in the bytes that remain"},
    ErrorInfo{ErrorCode::overflow, "overflow", "size arithmetic overflows 64 bits"},
    ErrorInfo{ErrorCode::too_many_dims, "too_many_dims", "more dimensions than the format allows"},
    ErrorInfo{ErrorCode::bad_shape, "bad_shape", "a dimension is negative or not a multiple of the block size"},
    ErrorInfo{ErrorCode::size_mismatch, "size_mismatch", "the byte span disagrees with shape x type"},
    ErrorInfo{ErrorCode::bad_offset, "bad_offset", "tensor data has a gap, overlap, reversal or wrong position"},
    ErrorInfo{ErrorCode::bad_alignment, "bad_alignment", "alignment invalid, or an offset is not aligned"},
    ErrorInfo{ErrorCode::out_of_bounds, "out_of_bounds", "data lies beyond the end of the file"},
    ErrorInfo{ErrorCode::trailing_bytes, "trailing_bytes", "bytes after the last tensor are covered by no tensor"},
    ErrorInfo{ErrorCode::missing_file, "missing_file", "a shard, part or blob named by an index is absent"},
    ErrorInfo{ErrorCode::shard_mismatch, "shard_mismatch", "a shard disagrees with its index or split set"},
    ErrorInfo{ErrorCode::digest_mismatch, "digest_mismatch", "a blob's size or digest disagrees with its manifest"},
    ErrorInfo{ErrorCode::refused, "refused", "content akview will not interpret (e.g. a pickle global)"},
    ErrorInfo{ErrorCode::usage, "usage", "bad command-line usage"},
    ErrorInfo{ErrorCode::not_found, "not_found", "a named tensor or key does not exist"},
    ErrorInfo{ErrorCode::network, "network", "a server cannot be reached, refuses the request or breaks HTTP's rules"},
    ErrorInfo{ErrorCode::changed, "changed", "a remote file changed on the server since it was opened"},
};
static_assert(kErrorTable.size() == static_cast<size_t>(ErrorCode::count_), "one row per ErrorCode");

constexpr bool table_in_order() {
  for (size_t i = 0; i < kErrorTable.size(); ++i)
    if (static_cast<size_t>(kErrorTable[i].code) != i) return false;
  return true;
}
static_assert(table_in_order(), "kErrorTable rows must follow the enum order");

}   // namespace

const ErrorInfo& error_info(ErrorCode code) { return kErrorTable[static_cast<size_t>(code)]; }

std::string Error::to_string() const {
  if (offset == kNoOffset) return file.empty() ? message : fmt::format("{}: {}", file, message);
  return fmt::format("{}@{:#x}: {}", file, offset, message);
}

Error make_error(ErrorCode code, std::string_view file, uint64_t offset, std::string message) {
  return Error{code, std::string(file), offset, std::move(message)};
}

}   // namespace akview
