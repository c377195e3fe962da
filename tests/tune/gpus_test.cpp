// Which GPUs the controller lends and how trials hold them.
#include "tune/system/gpus.h"

#include <doctest/doctest.h>
#include <stdlib.h>

namespace tune {
namespace {

std::vector<std::string> visible_with(const char* value) {
  const char* old = getenv("CUDA_VISIBLE_DEVICES");
  const std::string saved = old ? old : "";
  setenv("CUDA_VISIBLE_DEVICES", value, 1);
  auto ids = visible_gpus();
  if (old) {
    setenv("CUDA_VISIBLE_DEVICES", saved.c_str(), 1);
  } else {
    unsetenv("CUDA_VISIBLE_DEVICES");
  }
  return ids;
}

TEST_CASE("CUDA_VISIBLE_DEVICES limits the GPUs lent, up to its first invalid entry") {
  CHECK(visible_with("0,2") == std::vector<std::string>{"0", "2"});
  CHECK(visible_with("GPU-8c1f,GPU-77aa") == std::vector<std::string>{"GPU-8c1f", "GPU-77aa"});
  CHECK(visible_with("1,-1,2") == std::vector<std::string>{"1"});
  CHECK(visible_with("-1").empty());
  CHECK(visible_with("").empty());
}

TEST_CASE("a GPU pool hands out free devices whole and takes them back") {
  GpuPool pool({"0", "1", "2"});
  auto a = pool.take(2);
  REQUIRE(a);
  CHECK(*a == std::vector<std::string>{"0", "1"});
  CHECK(pool.num_free() == 1);
  CHECK_FALSE(pool.take(2));  // not enough: nothing is taken
  CHECK(pool.num_free() == 1);
  pool.give_back({"0"});
  auto b = pool.take(2);
  REQUIRE(b);
  CHECK(*b == std::vector<std::string>{"0", "2"});
  CHECK(pool.num_free() == 0);
  CHECK(pool.take(0)->empty());
}

}  // namespace
}  // namespace tune
