// A PyTorch checkpoint (zip or legacy, chosen by the sniffers) opened, then every tensor gathered.
#include "core/formats/pytorch.hpp"
#include "core/formats/recognised.hpp"
#include "tests/fuzz/fuzz_util.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto probe = akview::probe_path(akview::fuzz::write_input("in.pt", data, size));
  if (!probe) return 0;
  auto model = akview::sniff_pytorch_zip(*probe) ? akview::open_pytorch_zip(*probe, {})
                                                 : akview::open_pytorch_legacy(*probe, {});
  if (!model) return 0;
  for (uint32_t i = 0; i < model->tensors.size(); ++i) (void)akview::torch_tensor_bytes(*model, i);
  (void)akview::torch_shared_storages(*model);
  akview::fuzz::decode_first_rows(*model);
  return 0;
}
