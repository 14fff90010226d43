// The Layout model (PRODUCT.md "Layout"): a file as nested, annotated byte regions.
// Regions come out in file order, parents before children; the regions at depth d+1 under one
// parent cover its bytes exactly once (zero-size regions mark empty tensors), and a gap or an
// overlap the file really has is a region of its own kind, so nothing is silently skipped. Bytes
// that several views of one PyTorch storage read are `shared`, which is no finding.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace akview {

// One row per kind in kRegionKinds (region.cpp); the name is what JSON and the text print.
enum class RegionKind : uint8_t {
  header,   // a fixed header (GGUF magic..counts, a zip record's local header)
  magic,
  version,
  count,         // a count field (tensors, keys, array elements, zip entries)
  length,        // a length prefix (SafeTensors header length, a GGUF string length)
  json,          // a JSON document or sub-document
  json_syntax,   // braces, commas and whitespace between JSON entries
  entry,         // one JSON member (a tensor entry, an index weight_map line, a manifest layer)
  metadata,      // a metadata block (__metadata__, the GGUF key/value section)
  kv,            // one GGUF key/value
  key,
  value_type,
  value,
  array,   // a GGUF array value: element type, count and elements
  elements,
  tensor_infos,
  tensor_info,
  name,
  dims,
  type,
  offset,
  padding,     // alignment padding the format asks for
  data,        // a data section
  tensor,      // one tensor's bytes
  companion,   // the scales/biases of a composite quantized tensor
  storage,     // a PyTorch storage (zip record data/<k> or a legacy storage)
  record,      // a zip record (local header + data)
  record_data,
  central_directory,
  directory_entry,
  end_record,   // zip end of central directory (and its ZIP64 record and locator)
  pickle,       // one pickle program
  opcode,       // one pickle opcode with its argument
  text,         // a small text record (zip version, byteorder), a config file's bytes
  gap,          // bytes no structure of the file accounts for: a finding
  overlap,      // bytes two structures both claim: a finding
  shared,       // bytes several views of one storage read (PyTorch tied weights, views): normal
  failure,      // where a file that does not open stops making sense: the message is its value
  count_
};

std::string_view region_kind_name(RegionKind kind);

struct Region {
  uint64_t offset = 0;   // absolute in the file
  uint64_t size = 0;
  uint8_t depth = 0;   // 0: covers part of the file; d+1: inside the region of depth d before it
  RegionKind kind = RegionKind::gap;
  std::string label;   // what it is ("general.architecture", "blk.0.attn_q.weight", "BINUNICODE")
  std::string value;   // what it holds, shortened ("llama", "q4_k [40, 512] 11.2 KiB")
};

// Receives the regions in order. Returning false stops the walk (a cancelled or full consumer).
using RegionSink = std::function<bool(const Region&)>;

}   // namespace akview
