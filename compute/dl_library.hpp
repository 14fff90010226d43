// Libraries akview opens at run time with dlopen (OpenCL's ICD loader, OpenBLAS), so it starts and
// runs without them; the backend that needs one reports it unavailable with dlerror's sentence.
#pragma once

#include <string>

#include "core/result.hpp"

namespace akview::compute {

struct DlLibrary {
  void* handle = nullptr;
  std::string name;   // the file asked for
};

// Opens the file named by the environment variable `env` when it is set (tests point it at a missing
// file), else `default_name`; the handle is never closed (process-wide, like the API tables on it).
// When it does not load: an unsupported Error, "cannot load NAME: <dlerror>".
Result<DlLibrary> open_library(const char* env, const char* default_name);

}   // namespace akview::compute
