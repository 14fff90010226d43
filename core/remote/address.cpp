// Parsing of remote addresses (see address.hpp).
#include "core/remote/address.hpp"

#include <vector>

#include <fmt/format.h>

#include "core/remote/http.hpp"

namespace akview::remote {
namespace {

std::vector<std::string> split(std::string_view s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i)
    if (i == s.size() || s[i] == sep) {
      if (i > start) out.emplace_back(s.substr(start, i - start));
      start = i + 1;
    }
  return out;
}

std::string join(const std::vector<std::string>& parts, size_t from) {
  std::string out;
  for (size_t i = from; i < parts.size(); ++i) {
    if (!out.empty()) out += '/';
    out += parts[i];
  }
  return out;
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// %2F in a revision ("refs%2Fpr%2F1") as the Hub's URLs write it.
std::string percent_decode(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && hex_digit(s[i + 1]) >= 0 && hex_digit(s[i + 2]) >= 0) {
      out += static_cast<char>(hex_digit(s[i + 1]) * 16 + hex_digit(s[i + 2]));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

Error bad(const std::string& text, std::string why) {
  return make_error(ErrorCode::usage, text, kNoOffset, std::move(why));
}

bool valid_repo_part(const std::string& s) {
  if (s.empty() || s == "." || s == "..") return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.')) return false;
  return true;
}

bool safe_path(const std::string& p) {
  for (const auto& part : split(p, '/'))
    if (part == "." || part == "..") return false;
  return p.find('\0') == std::string::npos;
}

Result<Address> parse_hf(const std::string& text, std::string_view rest) {
  Address a;
  a.kind = AddressKind::hub;
  a.text = text;
  a.endpoint = hub_endpoint();
  a.revision = "main";
  auto parts = split(rest, '/');
  if (parts.size() < 2) return bad(text, "a Hub address is hf://ORG/REPO[@REVISION][/PATH]");
  std::string repo_name = parts[1];
  if (auto at = repo_name.find('@'); at != std::string::npos) {
    a.revision = percent_decode(repo_name.substr(at + 1));
    repo_name.resize(at);
  }
  if (!valid_repo_part(parts[0]) || !valid_repo_part(repo_name) || a.revision.empty())
    return bad(text, "a Hub address is hf://ORG/REPO[@REVISION][/PATH]");
  a.repo = parts[0] + "/" + repo_name;
  a.path = join(parts, 2);
  if (!safe_path(a.path)) return bad(text, "the path inside the repository may not hold '.' or '..' parts");
  return a;
}

// https://HUB/ORG/REPO[/tree|blob|resolve/REV[/PATH]]; nullopt-like error when it is not of that shape.
bool parse_hub_url(const std::string& text, std::string_view path, Address& a) {
  auto q = path.find_first_of("?#");
  if (q != std::string_view::npos) path = path.substr(0, q);
  auto parts = split(path, '/');
  if (parts.size() < 2 || !valid_repo_part(parts[0]) || !valid_repo_part(parts[1])) return false;
  if (parts[0] == "api" || parts[0] == "datasets" || parts[0] == "spaces") return false;
  a.kind = AddressKind::hub;
  a.text = text;
  a.endpoint = hub_endpoint();
  a.repo = parts[0] + "/" + parts[1];
  a.revision = "main";
  if (parts.size() == 2) return true;
  if (parts.size() < 4 || (parts[2] != "tree" && parts[2] != "blob" && parts[2] != "resolve")) return false;
  a.revision = percent_decode(parts[3]);
  a.path = percent_decode(join(parts, 4));
  a.path_is_file = parts[2] != "tree";
  return safe_path(a.path) && !a.revision.empty();
}

}   // namespace

bool is_remote_address(std::string_view text) {
  return text.starts_with("hf://") || text.starts_with("ollama://") || text.starts_with("http://") ||
         text.starts_with("https://");
}

Result<Address> parse_address(const std::string& text) {
  if (text.starts_with("hf://")) return parse_hf(text, std::string_view(text).substr(5));
  if (text.starts_with("ollama://")) {
    Address a;
    a.kind = AddressKind::ollama;
    a.text = text;
    auto parts = split(std::string_view(text).substr(9), '/');
    if (parts.empty() || parts.size() > 3)
      return bad(text, "an Ollama address is ollama://[HOST[:PORT]/][NAMESPACE/]MODEL[:TAG]");
    std::string host = parts.size() == 3 ? parts[0] : "registry.ollama.ai";
    a.name_space = parts.size() >= 2 ? parts[parts.size() - 2] : "library";
    std::string model = parts.back();
    a.tag = "latest";
    if (auto colon = model.find(':'); colon != std::string::npos) {
      a.tag = model.substr(colon + 1);
      model.resize(colon);
    }
    a.model = model;
    if (!valid_repo_part(a.name_space) || !valid_repo_part(a.model) || !valid_repo_part(a.tag))
      return bad(text, "an Ollama address is ollama://[HOST[:PORT]/][NAMESPACE/]MODEL[:TAG]");
    a.registry = "https://" + host;
    return a;
  }
  if (text.starts_with("http://") || text.starts_with("https://")) {
    const std::string origin = url_origin(text);
    if (origin.empty()) return bad(text, "not a URL akview can read");
    if (origin == url_origin(hub_endpoint())) {
      // The path after the origin: skip "scheme://host[:port]".
      auto after_scheme = text.find("://") + 3;
      auto slash = text.find('/', after_scheme);
      Address a;
      if (slash != std::string::npos && parse_hub_url(text, std::string_view(text).substr(slash), a)) return a;
    }
    Address a;
    a.kind = AddressKind::url;
    a.text = text;
    a.url = text;
    return a;
  }
  return bad(text, "not a remote address (hf://, ollama://, http:// or https://)");
}

}   // namespace akview::remote
