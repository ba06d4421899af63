// sapiens-demo-weights OUTPUT_DIR: writes the untrained demo weights of every task in the official folder
// layout (OUTPUT_DIR/<task>/sapiens2_demo_<task>.safetensors). Run by the build (core/CMakeLists.txt);
// the bytes depend only on the generator's recipe, so two runs give identical files.

#include "sapiens/model/demo_weights.h"

#include <ATen/Parallel.h>

#include <chrono>
#include <cstdio>
#include <exception>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUTPUT_DIR\n", argv[0]);
    return 2;
  }
  at::set_num_threads(1);  // nothing here is worth more threads, and the build runs other jobs
  const auto start = std::chrono::steady_clock::now();
  try {
    const auto written = sapiens::demo::writeDemoCheckpoints(argv[1]);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("sapiens-demo-weights: %zu untrained demo checkpoints in %s (%.1f s)\n", written.size(),
                argv[1], seconds);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sapiens-demo-weights: %s\n", e.what());
    return 1;
  }
  return 0;
}
