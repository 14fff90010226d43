// dlopen with an override from the environment (dl_library.hpp).
#include "compute/dl_library.hpp"

#include <dlfcn.h>

#include <cstdlib>

#include <fmt/format.h>

namespace akview::compute {

Result<DlLibrary> open_library(const char* env, const char* default_name) {
  DlLibrary lib;
  const char* override_name = std::getenv(env);
  lib.name = override_name && *override_name ? override_name : default_name;
  lib.handle = dlopen(lib.name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib.handle) {
    const char* e = dlerror();
    return make_error(ErrorCode::unsupported, "", kNoOffset,
                      fmt::format("cannot load {}: {}", lib.name, e ? e : "unknown error"));
  }
  return lib;
}

}   // namespace akview::compute
