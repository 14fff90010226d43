// Libraries akview opens at run time with dlopen (OpenCL's ICD loader, OpenBLAS), so it starts and
// runs without them; the backend that needs one reports it unavailable with dlerror's sentence.
#pragma once

#include <string>

namespace akview::compute {

struct DlLibrary {
  void* handle = nullptr;   // nullptr when it did not load
  std::string name;         // the file asked for
  std::string why;          // "cannot load NAME: <dlerror>" when it did not load
};

// Opens the file named by the environment variable `env` when it is set (tests point it at a missing
// file), else `default_name`; the handle is never closed (process-wide, like the API tables on it).
DlLibrary open_library(const char* env, const char* default_name);

}  // namespace akview::compute
