// dump / groups / stats / map / diff / run / devices through the real binary, checked against the
// oracle references (values bit for bit, errors against error_vs_orig, outputs against matvec y).
#include <gtest/gtest.h>

#include <dlfcn.h>
#include <link.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "compute/backend.hpp"
#include "tests/cli/cli_util.hpp"
#include "tests/cli/run_process.hpp"

namespace akview::testing {
namespace {

// Every GGUF tensor with a deq reference dumps to .npy and raw .f32 bit for bit.
TEST(ValueCommands, DumpEqualsTheReferenceBitForBit) {
  auto manifest = load_json(kOracles + "/manifest.json");
  int checked = 0;
  for (const auto& f : manifest["gguf"]["files"]) {
    std::string path = kOracles + "/" + f["path"].get<std::string>();
    for (const auto& t : f["tensors"]) {
      if (!t.contains("deq") || t["name"] != "blk.0.attn_k.weight") continue;
      auto want = read_bytes(kOracles + "/" + t["deq"]["path"].get<std::string>());
      const TempDir dir;   // removed even when an assertion returns early
      std::string npy = dir.file("dump.npy"), raw = dir.file("dump.f32");
      auto r = run_akview({"dump", path, t["name"], "--out", npy});
      ASSERT_EQ(r.exit_code, 0) << path << r.err;
      auto got = read_bytes(npy);
      ASSERT_GE(got.size(), 10u);
      ASSERT_EQ(std::string(got.data(), 6), "\x93NUMPY");
      size_t header = 10 + static_cast<unsigned char>(got[8]) + 256 * static_cast<unsigned char>(got[9]);
      EXPECT_NE(std::string(got.data(), header).find("'shape': (32, 512)"), std::string::npos);
      ASSERT_EQ(got.size() - header, want.size()) << path;
      EXPECT_EQ(std::memcmp(got.data() + header, want.data(), want.size()), 0) << path << " " << t["type"];
      ASSERT_EQ(run_akview({"dump", path, t["name"], "--out", raw}).exit_code, 0);
      EXPECT_EQ(read_bytes(raw), want) << path;
      std::remove(npy.c_str());
      std::remove(raw.c_str());
      ++checked;
    }
  }
  EXPECT_GE(checked, 20);
}

TEST(ValueCommands, DumpRowsAsJsonAndByCanonicalName) {
  std::string dir = kOracles + "/st/mlx_q4_g64_f16";
  auto want = read_f32(kOracles + "/st/ref/mlx_q4_g64_f16/model.layers.0.self_attn.q_proj.deq.f32");
  auto r = run_akview({"dump", dir, "layers.0.attention.q.weight", "--rows", "3:5", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["name"], "model.layers.0.self_attn.q_proj.weight");
  EXPECT_EQ(j["type"], "mlx.affine");
  ASSERT_EQ(j["values"].size(), 2u);
  for (int row = 0; row < 2; ++row)
    for (int c = 0; c < 128; ++c) EXPECT_EQ(j["values"][row][c].get<float>(), want[(3 + row) * 128 + c]);
  EXPECT_EQ(run_akview({"dump", dir, "layers.0.attention.q.weight", "--rows", "5:999"}).exit_code, 2);
  EXPECT_EQ(run_akview({"dump", dir, "no.such.tensor"}).exit_code, 1);
}

TEST(ValueCommands, GroupsCoverTheRowAndBoundItsValues) {
  std::string path = kOracles + "/gguf/lq_q4_k_m.gguf";
  auto r = run_akview({"groups", path, "blk.0.attn_k.weight", "--rows", "2:3", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  auto values = read_f32(kOracles + "/gguf/ref/lq_q4_k_m/blk.0.attn_k.weight.deq.f32");
  int64_t covered = 0;
  for (const auto& g : j["groups"]) {
    EXPECT_EQ(g["row"], 2);
    EXPECT_EQ(g["col"], covered);
    float lo = INFINITY, hi = -INFINITY;
    for (int64_t c = g["col"]; c < g["col"].get<int64_t>() + g["n"].get<int64_t>(); ++c) {
      lo = std::min(lo, values[2 * 512 + c]);
      hi = std::max(hi, values[2 * 512 + c]);
    }
    EXPECT_EQ(g["min"].get<float>(), lo);
    EXPECT_EQ(g["max"].get<float>(), hi);
    EXPECT_LE(g["levels_used"].get<int>(), 16);
    covered += g["n"].get<int64_t>();
  }
  EXPECT_EQ(covered, 512);
  EXPECT_EQ(run_akview({"groups", kOracles + "/gguf/f32.gguf", "blk.0.attn_k.weight"}).exit_code, 1);   // not quantized
}

TEST(ValueCommands, StatsAgreeWithTheReference) {
  auto r = run_akview({"stats", kOracles + "/gguf/q8_0.gguf", "blk.0.attn_v.weight", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto s = nlohmann::json::parse(r.out).at(0);
  auto values = read_f32(kOracles + "/gguf/ref/q8_0/blk.0.attn_v.weight.deq.f32");
  double lo = INFINITY, hi = -INFINITY, sum = 0;
  uint64_t zeros = 0;
  for (float v : values) {
    lo = std::min<double>(lo, v);
    hi = std::max<double>(hi, v);
    sum += v;
    zeros += v == 0.0f;
  }
  EXPECT_EQ(s["count"], values.size());
  EXPECT_EQ(s["min"].get<double>(), lo);
  EXPECT_EQ(s["max"].get<double>(), hi);
  EXPECT_NEAR(s["mean"].get<double>(), sum / values.size(), 1e-9);
  EXPECT_EQ(s["zeros"], zeros);
  uint64_t binned = 0;
  for (const auto& c : s["histogram"]["counts"]) binned += c.get<uint64_t>();
  EXPECT_EQ(binned, values.size());
}

TEST(ValueCommands, MapGivesEveryOracleTensorACanonicalName) {
  for (const char* rel : {"/gguf/q4_0.gguf", "/st/plain_bf16", "/st/mlx_q8_g32_bf16", "/ollama_st"}) {
    auto r = run_akview({"map", kOracles + rel, "--json"});
    ASSERT_EQ(r.exit_code, 0) << rel << r.err;
    auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["unmapped"], 0) << rel;
    ASSERT_TRUE(j["tensors"].is_array()) << rel;
    ASSERT_FALSE(j["tensors"].empty()) << rel;
    for (const auto& t : j["tensors"]) EXPECT_FALSE(t["canonical"].is_null()) << rel << " " << t["name"];
    EXPECT_FALSE(j["config"]["fields"]["dim"].is_null()) << rel;
  }
}

TEST(ValueCommands, DiffReproducesErrorVsOrig) {
  auto manifest = load_json(kOracles + "/manifest.json");
  int models = 0;
  for (const auto& m : manifest["safetensors"]["models"]) {
    if (m["kind"] != "safetensors-mlx-affine") continue;
    ++models;
    std::string orig_dir = kOracles + "/st/" + (m["dtype"] == "F16" ? "plain_f16" : "plain_bf16");
    auto r = run_akview({"diff", kOracles + "/" + m["dir"].get<std::string>(), orig_dir, "--json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["only_a"], 0);
    EXPECT_EQ(j["only_b"], 0);
    std::map<std::string, nlohmann::json> by_a;
    for (const auto& row : j["tensors"])
      if (row["name_a"].is_string()) by_a[row["name_a"]] = row;
    int compared = 0;
    for (const auto& t : m["tensors"]) {
      if (!t.value("quantized", false)) continue;
      const auto& row = by_a.at(t["weight"]["name"].get<std::string>());
      const auto& want = t["error_vs_orig"];
      for (auto [ours, theirs] : {std::pair{"max_abs", "max_abs"}, {"rmse", "rmse"}, {"rel_rmse", "rel_rmse"}})
        EXPECT_NEAR(row["error"][ours].get<double>(), want[theirs].get<double>(), 1e-6 * want[theirs].get<double>())
            << m["name"] << " " << t["name"] << " " << ours;
      ++compared;
    }
    EXPECT_GE(compared, 9);
  }
  EXPECT_EQ(models, 2);   // the MLX affine models of the oracle manifest
}

TEST(ValueCommands, RunMatchesTheOracleOutputs) {
  auto manifest = load_json(kOracles + "/manifest.json");
  const auto& file = manifest["gguf"]["files"][7];   // q8_0.gguf
  ASSERT_EQ(file["path"], "gguf/q8_0.gguf");
  const TempDir dir;   // removed even when an assertion returns early
  std::string y_out = dir.file("y.f32");
  auto r = run_akview({"run", kOracles + "/gguf/q8_0.gguf", "--backend", "cpu", "--repeat", "2", "--x",
                       kOracles + "/gguf/ref/x_512.f32", "--y-out", y_out, "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  auto y = read_f32(y_out);
  size_t at = 0;
  int runs = 0;
  for (const auto& run : j["runs"]) {
    EXPECT_EQ(run["backend"], "cpu");
    EXPECT_EQ(run["repeats"], 2);
    EXPECT_GT(run["vs_reference"]["cosine"].get<double>(), 0.999999);
    for (const auto& t : file["tensors"]) {
      if (t["name"] != run["name"]) continue;
      auto want = read_f32(kOracles + "/" + t["matvec"]["y"]["path"].get<std::string>());
      ASSERT_LE(at + want.size(), y.size());
      for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(y[at + i], want[i], 1e-4 * (1 + std::fabs(want[i])));
      at += want.size();
      ++runs;
    }
  }
  EXPECT_EQ(runs, 3);   // the three matrices of the file
  EXPECT_EQ(at, y.size());
  std::remove(y_out.c_str());
  EXPECT_EQ(run_akview({"run", kOracles + "/gguf/q8_0.gguf", "--backend", "warp"}).exit_code, 2);
  EXPECT_EQ(run_akview({"run", kOracles + "/gguf/q8_0.gguf", "--layer", "7"}).exit_code, 1);
}

TEST(ValueCommands, DevicesListsEveryBackend) {
  auto r = run_akview({"devices", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  std::set<std::string> names;
  for (const auto& b : j["backends"]) {
    names.insert(b["name"]);
    if (!b["available"].get<bool>()) {
      EXPECT_FALSE(b["reason"].get<std::string>().empty()) << b["name"];
    }
  }
  std::set<std::string> table;
  for (const auto& row : compute::backend_table()) table.emplace(row.name);
  EXPECT_EQ(names, table);
}

// No platform while a GPU vendor's OpenCL library is loadable (NVIDIA's driver in a container: the
// library without the ICD file): `devices` says how to make the file. The library is stood in for by
// a link named libnvidia-opencl.so.1 to glibc's libanl (a library akview does not load otherwise:
// another name for a loaded one stays attached to it, which LeakSanitizer reports), found through
// LD_LIBRARY_PATH; the ICD loader is pointed at an empty folder.
TEST(ValueCommands, DevicesSaysHowToNameAVendorLibraryNoIcdFileNames) {
  const TempDir dir;
  void* stand_in = dlopen("libanl.so.1", RTLD_LAZY);
  if (!stand_in) GTEST_SKIP() << "no libanl.so.1 to stand in for a vendor library";
  link_map* map = nullptr;
  ASSERT_EQ(dlinfo(stand_in, RTLD_DI_LINKMAP, &map), 0);
  std::filesystem::create_symlink(map->l_name, dir.file("libnvidia-opencl.so.1"));
  std::filesystem::create_directory(dir.file("icd"));
  const std::vector<std::string> no_icd = {"OCL_ICD_VENDORS=" + dir.file("icd")};
  auto plain = run_akview({"devices"}, no_icd);
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  if (plain.out.find("cannot load libOpenCL") != std::string::npos) GTEST_SKIP() << "no ICD loader here";
  EXPECT_NE(plain.out.find("no OpenCL platform"), std::string::npos) << plain.out;
  std::vector<std::string> with_library = no_icd;
  with_library.push_back("LD_LIBRARY_PATH=" + dir.path());
  auto hinted = run_akview({"devices"}, with_library);
  ASSERT_EQ(hinted.exit_code, 0) << hinted.err;
  EXPECT_NE(hinted.out.find("libnvidia-opencl.so.1 is here but no ICD file names it: echo libnvidia-opencl.so.1 > "
                            "DIR/nvidia.icd and set OCL_ICD_VENDORS=DIR"),
            std::string::npos)
      << hinted.out;
  dlclose(stand_in);
  void* real = dlopen("libnvidia-opencl.so.1", RTLD_LAZY);
  if (real) {
    dlclose(real);
    return;
  }
  dlerror();   // read and cleared: glibc keeps the message per thread until then
  dlerror();
  EXPECT_EQ(plain.out.find("is here but no ICD file"), std::string::npos) << plain.out;   // none without the link
}

// `run --device N` runs on the device `devices` lists with index N (the run names it), and an index
// past the list is a usage error (exit 2) naming the valid range.
TEST(ValueCommands, RunOnAChosenOpenClDevice) {
  auto d = run_akview({"devices", "--json"});
  ASSERT_EQ(d.exit_code, 0) << d.err;
  auto j = nlohmann::json::parse(d.out);
  std::vector<std::string> device_names;
  for (const auto& p : j["opencl_platforms"])
    for (const auto& dev : p["devices"]) {
      EXPECT_EQ(dev["index"].get<int>(), static_cast<int>(device_names.size()));
      device_names.push_back(dev["name"]);
    }
  auto past = run_akview(
      {"run", kOracles + "/gguf/q8_0.gguf", "--backend", "opencl", "--device", std::to_string(device_names.size())});
  EXPECT_EQ(past.exit_code, device_names.empty() ? 1 : 2) << past.err;   // no OpenCL at all: unavailable
  EXPECT_NE(past.err.find("opencl"), std::string::npos) << past.err;
  if (device_names.empty()) GTEST_SKIP() << "no OpenCL device";
  const int last = static_cast<int>(device_names.size()) - 1;
  auto r = run_akview(
      {"run", kOracles + "/gguf/q8_0.gguf", "--backend", "opencl", "--device", std::to_string(last), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto runs = nlohmann::json::parse(r.out)["runs"];
  ASSERT_FALSE(runs.empty());
  for (const auto& run : runs) {
    EXPECT_EQ(run["backend"], "opencl");
    EXPECT_EQ(run["device"].get<std::string>().rfind(device_names[last], 0), 0u) << run["device"];
    EXPECT_GT(run["vs_reference"]["cosine"].get<double>(), 0.999999);
  }
}

}   // namespace
}   // namespace akview::testing
