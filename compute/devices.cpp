// list_devices(): the data behind `akview devices` (see devices.hpp).
#include "compute/devices.hpp"

#include "compute/backends.hpp"
#include "compute/thread_pool.hpp"

namespace akview::compute {

DevicesReport list_devices() {
  DevicesReport report;
  for (const auto& row : backend_table()) {
    Availability a = row.instance().availability();
    report.backends.push_back({std::string(row.name), std::string(row.description), a.available, a.reason});
  }
  if (auto platforms = opencl_enumerate()) report.opencl_platforms = std::move(*platforms);
  else report.opencl_error = platforms.error().message;
  report.cpu_threads = shared_pool().threads();
  return report;
}

}   // namespace akview::compute
