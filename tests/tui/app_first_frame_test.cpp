// The shell's first model frame waits for nothing that `akview info` does not do: the open leaves
// the tensor names in the file's header, the Tensors table stores no row index in the model's order,
// and only once the frame is shown (App::frame_shown) are the names packed into a block of their own
// and the background jobs (name map, statistics) started.
#include <chrono>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "tests/common/temp_dir.hpp"
#include "tests/writers/gguf_writer.hpp"
#include "ui/tui/app.hpp"
#include "ui/tui/tensors_pane.hpp"

namespace akview::testing {
namespace {

// Whether the tensor's name lies in the bytes of one of the model's mapped files.
bool name_in_header(const Model& m, const Tensor& t) {
  const auto* p = reinterpret_cast<const uint8_t*>(t.name.data());
  for (const SourceFile& f : m.files)
    if (p >= f.map.data() && p < f.map.data() + f.map.size()) return true;
  return false;
}

TEST(AppFirstFrame, NamesArePackedAndJobsStartOnlyOnceTheFirstFrameIsShown) {
  TempDir dir;
  GgufWriter w;
  w.set("general.architecture", gguf_string("llama"));
  for (int layer = 0; layer < 4; ++layer) w.add_tensor({"blk." + std::to_string(layer) + ".attn_q.weight", 0, {4, 4}});
  const std::string path = dir.file("m.gguf");
  ASSERT_TRUE(w.write(path));

  tui::App app(tui::AppOptions{path, {}, false});
  const auto t0 = std::chrono::steady_clock::now();
  while (!app.model_view() && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(30)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    app.apply_background_results();
  }
  ASSERT_NE(app.model_view(), nullptr);
  const Model& m = app.model_view()->session().model;
  ASSERT_FALSE(m.tensors.empty());
  EXPECT_TRUE(name_in_header(m, m.tensors[0])) << "the names were copied before the first frame";
  EXPECT_TRUE(app.model_view()->find<tui::TensorsPane>()->table().rows().is_virtual());

  tui::Canvas canvas(100, 30);
  app.draw(canvas);
  EXPECT_EQ(app.worker().busy(), 0) << "a job started before the first frame was shown";
  EXPECT_TRUE(name_in_header(m, m.tensors[0]));

  app.frame_shown();
  for (const Tensor& t : m.tensors) EXPECT_FALSE(name_in_header(m, t)) << t.name;
  EXPECT_EQ(m.tensors[2].name, "blk.2.attn_q.weight");
  // The name map lands from the worker: the canonical names show.
  while (app.model_view()->session().names_version == 0 &&
         std::chrono::steady_clock::now() - t0 < std::chrono::seconds(30)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    app.apply_background_results();
  }
  EXPECT_GT(app.model_view()->session().names_version, 0u);
}

}   // namespace
}   // namespace akview::testing
