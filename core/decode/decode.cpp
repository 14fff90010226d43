// STUB: replaced by the decoder table.
#include "core/decode/decode.hpp"
namespace akview {
bool can_decode(TypeId) { return false; }
Status decode_rows(const TensorView&, int64_t, int64_t, float*) {
  return make_error(ErrorCode::unsupported, "", kNoOffset, "decoders not implemented");
}
}  // namespace akview
