// akview entry point: everything happens in run_cli.
#include "ui/cli.hpp"

int main(int argc, char** argv) { return akview::run_cli(argc, argv); }

// LeakSanitizer (ASan builds only; unused otherwise): PoCL and its LLVM keep compiler state alive
// until exit, which LSan reports as leaks after `akview devices` or an OpenCL run. Only stacks
// through those two libraries are suppressed; akview's own allocations stay checked.
extern "C" const char* __lsan_default_suppressions() {
  return "leak:libpocl.so\nleak:libLLVM-15.so\nleak:libLLVM.so\n";
}
