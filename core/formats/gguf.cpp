// STUB: replaced by the GGUF parser.
#include "core/formats/gguf.hpp"
namespace akview {
bool sniff_gguf(const Probe&) { return false; }
bool sniff_gguf_dir(const Probe&) { return false; }
Result<Model> open_gguf(const Probe& p, const OpenOptions&) { return make_error(ErrorCode::unsupported, p.path, kNoOffset, "not implemented"); }
Result<Model> open_gguf_dir(const Probe& p, const OpenOptions&) { return make_error(ErrorCode::unsupported, p.path, kNoOffset, "not implemented"); }
Result<uint32_t> add_gguf_file(Model&, const std::string& path, const std::string&) { return make_error(ErrorCode::unsupported, path, kNoOffset, "not implemented"); }
Result<std::vector<MetaValue>> read_gguf_array(const Model& m, const MetaEntry&, const MetaValue&, uint64_t) { return make_error(ErrorCode::unsupported, m.path, kNoOffset, "not implemented"); }
}  // namespace akview
