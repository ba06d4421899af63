// sapiens-bench-postprocess [--repeat N] [--classes C]: segmentation post-processing of C-class (default 29)
// 256 x 192 logits (the seg model's 1/4-resolution output) to 1920x1080 and 3840x2160 label maps, on the
// CPU: "reference" = the previous segLabels (at::upsample_bilinear2d of every class to the full picture,
// argmax, uint8) and "fused" = segLabels now (row-by-row upsampling + argmax). Each case runs in its own
// process, so that its peak RSS growth (VmHWM minus VmRSS before the first run) is its own; prints
// the median ms of N runs (default 5, after one warm-up) and a hash of the labels (equal hashes = equal
// labels). Figures: docs/PERFORMANCE.md.

#include "pipeline/postprocess.h"
#include "sapiens/common/threads.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace {

/// A field of /proc/self/status in kB (VmRSS, VmHWM).
long statusKb(const char* field) {
  std::ifstream status("/proc/self/status");
  std::string line;
  const std::string prefix = std::string(field) + ":";
  while (std::getline(status, line)) {
    if (line.rfind(prefix, 0) == 0) return std::strtol(line.c_str() + prefix.size(), nullptr, 10);
  }
  return -1;
}

cv::Mat referenceLabels(const at::Tensor& logits, cv::Size size) {
  const at::Tensor labels =
      sapiens::upsampleSegLogits(logits, size).argmax(1).squeeze(0).to(at::kByte).contiguous();
  cv::Mat mat(size, CV_8UC1);
  std::memcpy(mat.data, labels.data_ptr<std::uint8_t>(), static_cast<std::size_t>(labels.numel()));
  return mat;
}

std::uint64_t hashOf(const cv::Mat& labels) {
  std::uint64_t hash = 1469598103934665603ull;  // FNV-1a
  for (int y = 0; y < labels.rows; ++y) {
    const auto* row = labels.ptr<std::uint8_t>(y);
    for (int x = 0; x < labels.cols; ++x) hash = (hash ^ row[x]) * 1099511628211ull;
  }
  return hash;
}

void runCase(bool fused, cv::Size size, int classes, int repeat) {
  sapiens::threads::configure(0);  // as sapiens-cli and the studio: one intra-op thread per core
  at::manual_seed(7);
  const at::Tensor logits = at::randn({1, classes, 256, 192}) * 4.0;
  const long before = statusKb("VmRSS");
  std::vector<double> ms;
  cv::Mat labels;
  for (int i = 0; i <= repeat; ++i) {
    const auto start = std::chrono::steady_clock::now();
    labels = fused ? sapiens::segLabels(logits, size).labels : referenceLabels(logits, size);
    const std::chrono::duration<double, std::milli> elapsed = std::chrono::steady_clock::now() - start;
    if (i > 0) ms.push_back(elapsed.count());  // run 0 warms up
  }
  std::sort(ms.begin(), ms.end());
  const long peak = statusKb("VmHWM");
  std::printf(
      "%-9s %3d classes 256x192 -> %4dx%-4d %d threads  median %8.1f ms  (min %8.1f)  peak RSS +%6.0f MB  "
      "labels %016llx\n",
      fused ? "fused" : "reference", classes, size.width, size.height, at::get_num_threads(),
      ms[ms.size() / 2], ms.front(), static_cast<double>(peak - before) / 1024.0,
      static_cast<unsigned long long>(hashOf(labels)));
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  int repeat = 5;
  int classes = 29;
  int caseWidth = 0, caseHeight = 0;
  std::string caseMode;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--repeat" && i + 1 < argc) {
      repeat = std::max(1, std::atoi(argv[++i]));
    } else if (arg == "--classes" && i + 1 < argc) {
      classes = std::clamp(std::atoi(argv[++i]), 1, 256);
    } else if (arg == "--case" && i + 3 < argc) {  // internal: one case in this process
      caseMode = argv[++i];
      caseWidth = std::atoi(argv[++i]);
      caseHeight = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: sapiens-bench-postprocess [--repeat N] [--classes C]\n");
      return 2;
    }
  }
  if (!caseMode.empty()) {
    runCase(caseMode == "fused", cv::Size(caseWidth, caseHeight), classes, repeat);
    return 0;
  }
  std::printf("segmentation post-processing on the CPU, median of %d runs\n", repeat);
  std::fflush(stdout);
  // Each case in a fresh process (its own peak RSS and thread pools).
  for (const cv::Size size : {cv::Size(1920, 1080), cv::Size(3840, 2160)}) {
    for (const char* mode : {"reference", "fused"}) {
      const std::string command = fmt::format("'/proc/{}/exe' --repeat {} --classes {} --case {} {} {}",
                                              getpid(), repeat, classes, mode, size.width, size.height);
      if (std::system(command.c_str()) != 0) {
        std::fprintf(stderr, "sapiens-bench-postprocess: the %s case at %dx%d failed\n", mode, size.width,
                     size.height);
        return 1;
      }
    }
  }
  return 0;
}
