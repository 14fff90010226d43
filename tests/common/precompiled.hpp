// The headers most test files include, precompiled once for every test binary (tests/CMakeLists.txt:
// AKVIEW_PCH). Each test file still includes what it uses: builds without the precompiled header
// (those with a compiler launcher such as ccache) compile it as written.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
