// akview_fit_models DIR: writes the `fit` ground-truth GGUFs (tests/writers/fit_models.hpp) into
// DIR as sparse files and prints one line per model: its name and trained context. record_llama_truth.sh loads them
// with llama.cpp.
#include <cstdio>
#include <string>

#include "tests/writers/fit_models.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: akview_fit_models DIR\n");
    return 2;
  }
  for (const auto& spec : akview::testing::fit_model_specs()) {
    const std::string path = std::string(argv[1]) + "/" + spec.name + ".gguf";
    if (!akview::testing::build_fit_model(spec).write(path, /*sparse=*/true)) {
      std::fprintf(stderr, "akview_fit_models: cannot write %s\n", path.c_str());
      return 1;
    }
    std::printf("%s %u\n", spec.name.c_str(), spec.n_ctx_train);
  }
  return 0;
}
