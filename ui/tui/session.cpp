// ModelSession helpers (session.hpp).
#include "ui/tui/session.hpp"

#include <sys/stat.h>

#include "core/remote/mirror.hpp"
#include "ui/batch/commands.hpp"

namespace akview::tui {

std::vector<FileStamp> stamp_files(const Model& model) {
  std::vector<FileStamp> out;
  for (const SourceFile& f : model.files) {
    FileStamp s{f.path, 0, 0};
    struct stat st {};
    if (::stat(f.path.c_str(), &st) == 0) {
      s.size = static_cast<uint64_t>(st.st_size);
      s.mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
    }
    out.push_back(std::move(s));
  }
  return out;
}

bool files_changed(const std::vector<FileStamp>& stamps) {
  for (const FileStamp& s : stamps) {
    // A remote file is named by its address, and a change on its server is the fetch's error
    // (If-Range); its stand-in in the cache changes with every fetch.
    if (remote::remote_file_at(s.path)) continue;
    struct stat st {};
    if (::stat(s.path.c_str(), &st) != 0) return true;
    int64_t mtime = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
    if (static_cast<uint64_t>(st.st_size) != s.size || mtime != s.mtime_ns) return true;
  }
  return false;
}

std::shared_ptr<ModelSession> make_session(Model model) {
  auto s = std::make_shared<ModelSession>();
  s->model = std::move(model);
  s->info = make_info_report(s->model);
  s->stamps = stamp_files(s->model);
  return s;
}

void attach_names(ModelSession& session, std::shared_ptr<const NameMap> names) {
  session.entry_of.assign(session.model.tensors.size(), kNone);
  for (uint32_t k = 0; k < names->entries.size(); ++k) {
    uint32_t t = names->entries[k].tensor;
    if (t < session.entry_of.size()) session.entry_of[t] = k;
  }
  session.names = std::move(names);
  ++session.names_version;
}

}   // namespace akview::tui
