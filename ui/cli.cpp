// STUB: replaced by the batch command front end.
#include "ui/cli.hpp"

#include <cstdio>

#include "core/formats/format.hpp"

namespace akview {
int run_cli(int argc, char** argv) {
  if (argc < 3) return kExitUsage;
  auto m = open_model(argv[2]);
  if (!m) {
    std::fprintf(stderr, "%s\n", m.error().to_string().c_str());
    return kExitBadInput;
  }
  std::printf("%zu tensors\n", m->tensors.size());
  return kExitOk;
}
}  // namespace akview
