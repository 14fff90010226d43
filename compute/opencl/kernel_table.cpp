// Finding a view's OpenCL kernel (kernel_table.hpp).
#include "compute/opencl/kernel_table.hpp"

namespace akview::compute {

int cl_scalar_code(TypeId t) { return t == TypeId::f16 ? 0 : t == TypeId::bf16 ? 1 : t == TypeId::f32 ? 2 : -1; }

const ClKernelRow* find_cl_kernel(const TensorView& view) {
  for (const auto& r : kClKernels) {
    if (r.type != view.type) continue;
    if (r.layout == ArgLayout::affine) {
      const bool ok = view.bits >= 2 && view.bits <= 8 && view.bits != 7 && view.group_size > 0 &&
                      view.group_size % 16 == 0 && cl_scalar_code(view.scales_type) >= 0 && !view.biases.empty() &&
                      cl_scalar_code(view.biases_type) >= 0 && view.global_scale.empty();
      if (!ok) return nullptr;
    }
    return &r;
  }
  return nullptr;
}

}   // namespace akview::compute
