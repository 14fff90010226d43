// Remote model addresses, as users type or paste them (PRODUCT.md "Inputs"):
//   hf://ORG/REPO[@REVISION][/PATH]
//   https://HUB/ORG/REPO, …/tree/REV[/DIR], …/blob/REV/PATH, …/resolve/REV/PATH   (HUB: huggingface.co,
//       or the host of HF_ENDPOINT, which replaces the Hub's address as huggingface_hub does)
//   ollama://[HOST[:PORT]/][NAMESPACE/]MODEL[:TAG]   (the public registry and "library" by default)
//   any other http:// or https:// URL of one file
#pragma once

#include <string>
#include <string_view>

#include "core/result.hpp"

namespace akview::remote {

enum class AddressKind { hub, ollama, url };

struct Address {
  AddressKind kind = AddressKind::url;
  std::string text;   // as given
  // hub
  std::string endpoint;        // https://huggingface.co
  std::string repo;            // ORG/REPO
  std::string revision;        // "main" unless given
  std::string path;            // inside the repository ("" for its root)
  bool path_is_file = false;   // a blob/resolve URL names a file
  // ollama
  std::string registry;   // https://registry.ollama.ai
  std::string name_space, model, tag;
  // url
  std::string url;
};

// Whether `text` is written as a remote address (a scheme akview reads remotely).
bool is_remote_address(std::string_view text);
Result<Address> parse_address(const std::string& text);

}   // namespace akview::remote
