// Streamed batch output through the real binary, on a model of a few thousand tensors
// whose names hold every kind of odd byte: `tensors --json` equals, byte for byte, the documented
// document (README "JSON reference") built here independently with nlohmann::json and dumped the
// way print_json does; map, diff, meta and stats JSON equal their own nlohmann re-dump (same layout,
// member order and number spelling); text tables print every odd name escaped; text and CSV made
// in chunks list every row in order.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tests/cli/cli_util.hpp"
#include "tests/cli/run_process.hpp"
#include "tests/writers/gguf_writer.hpp"
#include "tests/writers/st_writer.hpp"

namespace akview::testing {
namespace {

constexpr int kTensors = 3000;
constexpr int kLongTensors = 70000;   // past print_json_rows' 4 chunks of 16384: made on two threads

// print_json's bytes for a document: dump(2), invalid UTF-8 replaced, and a newline.
std::string documented(const nlohmann::json& j) {
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

struct Dtype {
  const char* st;     // SafeTensors spelling
  const char* type;   // akview's type name
  uint64_t bytes;
};
constexpr Dtype kDtypes[] = {{"F32", "f32", 4}, {"BF16", "bf16", 2}, {"F16", "f16", 2}, {"I8", "i8", 1}};

// Names a terminal or a JSON writer could get wrong: quotes, backslashes, C0 controls, DEL,
// multi-byte UTF-8, a bidi override, an emoji, CJK; every tenth a name the rules map.
std::string odd_name(int i) {
  static const char* kOdd[] = {"quote\"d",
                               "back\\slash",
                               "ctl\x01\x1f",
                               "new\nline",
                               "tab\tbed",
                               "del\x7f",
                               "\xc3\xbcn\xc3\xaf"
                               "c\xc3\xb6"
                               "d\xc3\xa9",
                               "bidi\xe2\x80\xae",
                               "emoji\xf0\x9f\x98\x80",
                               "cjk\xe4\xb8\xad\xe6\x96\x87"};
  if (i % 10 == 9) return "model.layers." + std::to_string(i) + ".self_attn.q_proj.weight";
  return std::string(kOdd[i % 10]) + "." + std::to_string(i);
}

class StreamingJson : public ::testing::Test {
 protected:
  virtual int count() const { return kTensors; }
  void SetUp() override {
    path_ = dir_.file("odd.safetensors");
    for (int i = 0; i < count(); ++i) {
      const Dtype& d = kDtypes[i % 4];
      std::vector<int64_t> shape = i % 7 == 0 ? std::vector<int64_t>{} : std::vector<int64_t>{i % 5 + 1, 3};
      uint64_t n = 1;
      for (int64_t s : shape) n *= static_cast<uint64_t>(s);
      tensors_.emplace_back(odd_name(i), d.st, shape, std::vector<uint8_t>(n * d.bytes, static_cast<uint8_t>(i)));
    }
    StWriteOptions options;
    options.sort = false;   // the given order: data offsets follow it
    ASSERT_TRUE(write_safetensors(path_, tensors_, options));
    auto bytes = read_bytes(path_);
    ASSERT_GE(bytes.size(), 8u);
    std::memcpy(&header_len_, bytes.data(), 8);
  }

  // The documented `tensors --json` of the fixture, from what was written.
  nlohmann::json expected_tensors() const {
    nlohmann::json rows = nlohmann::json::array();
    uint64_t offset = 8 + header_len_;
    for (int i = 0; i < count(); ++i) {
      const StTensor& t = tensors_[i];
      const Dtype& d = kDtypes[i % 4];
      uint64_t n = 1;
      for (int64_t s : t.shape) n *= static_cast<uint64_t>(s);
      const bool mapped = i % 10 == 9;
      rows.push_back({{"name", t.name},
                      {"canonical", mapped ? nlohmann::json("layers." + std::to_string(i) + ".attention.q.weight")
                                           : nlohmann::json(nullptr)},
                      {"type", d.type},
                      {"shape", t.shape},
                      {"parameters", n},
                      {"file", path_},
                      {"offset", offset},
                      {"nbytes", t.bytes.size()},
                      {"bits_per_weight", 8.0 * static_cast<double>(d.bytes)}});
      offset += t.bytes.size();
    }
    return rows;
  }

  TempDir dir_;
  std::string path_;
  std::vector<StTensor> tensors_;
  uint64_t header_len_ = 0;
};

TEST_F(StreamingJson, TensorsJsonIsTheDocumentedDocumentByteForByte) {
  auto r = run_akview({"tensors", path_, "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string want = documented(expected_tensors());
  ASSERT_EQ(r.out.size(), want.size());
  EXPECT_TRUE(r.out == want);   // (not EXPECT_EQ: a mismatch would print megabytes)
  for (size_t k = 0; k < want.size(); ++k)
    if (r.out[k] != want[k]) {
      ADD_FAILURE() << "first difference at byte " << k << ": ..." << want.substr(k > 80 ? k - 80 : 0, 160);
      break;
    }
}

TEST_F(StreamingJson, SortedAndFilteredTensorsJsonIsTheDocumentedSubset) {
  auto r = run_akview({"tensors", path_, "--json", "--filter", "q_proj", "--sort", "name", "--desc"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json all = expected_tensors(), want = nlohmann::json::array();
  for (int i = kTensors - 1; i >= 0; --i)   // natural order of model.layers.N descending is N descending
    if (i % 10 == 9) want.push_back(all[i]);
  EXPECT_TRUE(r.out == documented(want));
  EXPECT_EQ(nlohmann::json::parse(r.out).size(), static_cast<size_t>(kTensors / 10));
}

// A listing long enough to be made in chunks on two threads: the same documented bytes, also when
// the first chunks hold no row of a filter, and in a sorted order.
class StreamingJsonLong : public StreamingJson {
 protected:
  int count() const override { return kLongTensors; }
};

TEST_F(StreamingJsonLong, ChunkedTensorsJsonIsTheDocumentedDocumentByteForByte) {
  const nlohmann::json all = expected_tensors();
  auto r = run_akview({"tensors", path_, "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.out == documented(all));
  // Only names numbered 60000..69999 that the rules do not map: chunks 0-2 give no row.
  r = run_akview({"tensors", path_, "--json", "--filter", "\\.6[0-9]{4}$"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json want = nlohmann::json::array();
  for (int i = 60000; i < kLongTensors; ++i)
    if (i % 10 != 9) want.push_back(all[i]);
  EXPECT_TRUE(r.out == documented(want)) << r.out.substr(0, 300);
  // Sorted by bytes, descending (ties in model order): positions are the sorted order's.
  r = run_akview({"tensors", path_, "--json", "--sort", "bytes", "--desc"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<int> order(kLongTensors);
  for (int i = 0; i < kLongTensors; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return all[a]["nbytes"].get<uint64_t>() > all[b]["nbytes"].get<uint64_t>(); });
  want = nlohmann::json::array();
  for (int i : order) want.push_back(all[i]);
  EXPECT_TRUE(r.out == documented(want));
}

// CSV records: fields split at commas and line ends outside quotes; a quoted field's "" is a quote.
std::vector<std::vector<std::string>> parse_csv(const std::string& text) {
  std::vector<std::vector<std::string>> records(1);
  std::string field;
  bool quoted = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') field += text[++i];
      else if (c == '"') quoted = false;
      else field += c;
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',' || c == '\n') {
      records.back().push_back(std::move(field));
      field.clear();
      if (c == '\n') records.emplace_back();
    } else {
      field += c;
    }
  }
  if (records.back().empty()) records.pop_back();
  return records;
}

// Text and CSV are made in chunks on two threads as well: every row, in order, and the text's name
// column as wide as the widest name of all chunks (the widest names are in the last one).
TEST_F(StreamingJsonLong, ChunkedTextAndCsvListEveryRowInOrder) {
  const nlohmann::json all = expected_tensors();
  auto r = run_akview({"tensors", path_, "--csv"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto records = parse_csv(r.out);
  ASSERT_EQ(records.size(), static_cast<size_t>(kLongTensors) + 1);
  for (int i = 0; i < kLongTensors; ++i) {
    const auto& rec = records[static_cast<size_t>(i) + 1];
    ASSERT_EQ(rec.size(), 9u) << i;
    EXPECT_EQ(rec[0], all[i]["name"].get<std::string>()) << i;
    EXPECT_EQ(rec[5], std::to_string(all[i]["nbytes"].get<uint64_t>())) << i;
    EXPECT_EQ(rec[8], std::to_string(all[i]["offset"].get<uint64_t>())) << i;
  }
  r = run_akview({"tensors", path_});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> lines;
  for (size_t at = 0, end; (end = r.out.find('\n', at)) != std::string::npos; at = end + 1)
    lines.push_back(r.out.substr(at, end - at));
  ASSERT_EQ(lines.size(), static_cast<size_t>(kLongTensors) + 1);
  const size_t type_at = lines[0].find("  type") + 2;
  EXPECT_EQ(type_at, std::string("model.layers.69999.self_attn.q_proj.weight").size() + 2);
  for (int i = 0; i < kLongTensors; ++i) {
    const std::string& line = lines[static_cast<size_t>(i) + 1];
    const std::string offset = fmt::format("0x{:x}", all[i]["offset"].get<uint64_t>());
    EXPECT_EQ(line.substr(line.size() - offset.size()), offset) << i;
    if (i % 10 == 9) {   // an ASCII name: the type starts at the column the header says
      EXPECT_EQ(line.compare(0, all[i]["name"].get<std::string>().size(), all[i]["name"].get<std::string>()), 0) << i;
      EXPECT_EQ(line.compare(type_at, std::strlen(kDtypes[i % 4].type), kDtypes[i % 4].type), 0) << line;
    }
  }
}

// The other streamed documents: what nlohmann makes of them again is the same bytes.
TEST_F(StreamingJson, MapDiffMetaStatsJsonEqualTheirNlohmannDump) {
  const std::vector<std::vector<std::string>> commands = {
      {"map", path_, "--json"},  {"diff", path_, path_, "--json"}, {"diff", path_, path_, "--no-values", "--json"},
      {"meta", path_, "--json"}, {"stats", path_, "--json"},       {"tensors", path_, "--json", "--sort", "bpw"},
  };
  for (const auto& args : commands) {
    auto r = run_akview(args);
    ASSERT_EQ(r.exit_code, 0) << args[0] << ": " << r.err;
    auto doc = nlohmann::json::parse(r.out);
    EXPECT_TRUE(r.out == documented(doc)) << args[0] << " " << args.back();
    if (args[0] == "map") {
      ASSERT_EQ(doc["tensors"].size(), static_cast<size_t>(kTensors));
      EXPECT_EQ(doc["unmapped"], kTensors - kTensors / 10);
      EXPECT_EQ(doc["tensors"][9]["canonical"], "layers.9.attention.q.weight");
      EXPECT_EQ(doc["tensors"][9]["layer"], 9);
      EXPECT_EQ(doc["tensors"][0]["name"], tensors_[0].name);
    }
    if (args[0] == "diff") {
      ASSERT_EQ(doc["tensors"].size(), static_cast<size_t>(kTensors));
      EXPECT_EQ(doc["only_a"], 0);
      EXPECT_EQ(doc["only_b"], 0);
      EXPECT_EQ(doc["tensors"][3]["name_a"], tensors_[3].name);
      EXPECT_EQ(doc["tensors"][3]["key"], tensors_[3].name);
      EXPECT_EQ(doc["tensors"][19]["key"], "layers.19.attention.q.weight");
      if (args[3] == "--json") {
        EXPECT_EQ(doc["tensors"][5]["error"]["max_abs"], 0.0);
      }
    }
    if (args[0] == "stats") {
      ASSERT_EQ(doc.size(), static_cast<size_t>(kTensors));
      EXPECT_EQ(doc[1]["name"], tensors_[1].name);
    }
  }
}

// A GGUF name that is not UTF-8: JSON carries U+FFFD in its place, as nlohmann's replace does.
TEST(StreamingJsonGguf, InvalidUtf8NamesAreReplacedAsDocumented) {
  const TempDir dir;
  const std::string path = dir.file("bad_utf8.gguf");
  GgufWriter w;
  w.set("general.architecture", gguf_string("llama"));
  w.add_tensor({"bad\xff\xfe.weight", 0 /* f32 */, {4}});
  w.add_tensor({"cut\xe2\x82.weight", 0 /* f32 */, {4}});
  w.add_tensor({"blk.0.attn_q.weight", 0 /* f32 */, {4, 4}});
  ASSERT_TRUE(w.write(path));
  for (const char* command : {"tensors", "map"}) {
    auto r = run_akview({command, path, "--json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto doc = nlohmann::json::parse(r.out);
    EXPECT_TRUE(r.out == documented(doc)) << command;
    const auto& rows = std::string(command) == "map" ? doc["tensors"] : doc;
    ASSERT_EQ(rows.size(), 3u);
    EXPECT_EQ(rows[0]["name"], "bad\xef\xbf\xbd\xef\xbf\xbd.weight");
    EXPECT_EQ(rows[2]["canonical"], "layers.0.attention.q.weight");
  }
}

// Text tables print each odd name escaped (escape_for_terminal), never a raw control byte.
TEST_F(StreamingJson, TextTablesEscapeEveryName) {
  for (const char* command : {"tensors", "map"}) {
    auto r = run_akview({command, path_});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    for (char c : r.out)
      EXPECT_TRUE(c == '\n' || static_cast<unsigned char>(c) >= 0x20) << command << ": raw control byte";
    EXPECT_NE(r.out.find("new\\x0aline.3"), std::string::npos) << command;
    EXPECT_NE(r.out.find("ctl\\x01\\x1f.2"), std::string::npos) << command;
    EXPECT_NE(r.out.find("del\\x7f.5"), std::string::npos) << command;
    EXPECT_NE(r.out.find("bidi\\u{202e}.7"), std::string::npos) << command;
  }
  auto r = run_akview({"diff", path_, path_, "--no-values"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("tab\\x09bed.4"), std::string::npos);
  EXPECT_NE(r.out.find(std::to_string(kTensors) + " paired, 0 only in A"), std::string::npos);
}

}   // namespace
}   // namespace akview::testing
