// STUB: replaced by the SafeTensors parser.
#include "core/formats/safetensors.hpp"
namespace akview {
bool sniff_safetensors(const Probe&) { return false; }
bool sniff_safetensors_dir(const Probe&) { return false; }
Result<Model> open_safetensors(const Probe& p, const OpenOptions&) { return make_error(ErrorCode::unsupported, p.path, kNoOffset, "not implemented"); }
Result<Model> open_safetensors_dir(const Probe& p, const OpenOptions&) { return make_error(ErrorCode::unsupported, p.path, kNoOffset, "not implemented"); }
Result<uint32_t> add_safetensors_file(Model&, const std::string& path, const std::string&) { return make_error(ErrorCode::unsupported, path, kNoOffset, "not implemented"); }
}  // namespace akview
