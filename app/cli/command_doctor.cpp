// sapiens-cli doctor: what this machine runs on, measured, and whether anything is wrong with it.

#include "cli_command.h"

#include "sapiens/common/blas_kernels.h"
#include "sapiens/common/log.h"
#include "sapiens/common/paths.h"
#include "sapiens/common/threads.h"
#include "sapiens/common/version.h"
#include "sapiens/model/compute_options.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/detail/CUDAHooksInterface.h>
#ifdef SAPIENS_HAVE_CUDA
#include <ATen/cuda/CUDAContext.h>
#endif
#ifdef SAPIENS_HAVE_MEDIA
#include <opencv2/core/version.hpp>
extern "C" {
#include <libavutil/avutil.h>
}
#endif

#include <nlohmann/json.hpp>

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <optional>
#include <sstream>

namespace sapiens::cli {
namespace {

struct BlasInfo {
  std::string name;  // "OpenBLAS (pthread)", "reference BLAS (netlib)", ...
  std::string library;
  std::string core;  // OpenBLAS's kernel family in use
  bool reference = false;
};

// The BLAS LibTorch calls is whichever library the dynamic loader resolved `sgemm_` to (Debian's
// alternatives pick libblas.so.3; LD_LIBRARY_PATH can override it), so ask the loader, after a
// matrix product has run.
BlasInfo detectBlas() {
  BlasInfo info;
  void* symbol = dlsym(RTLD_DEFAULT, "sgemm_");
  Dl_info where{};
  if (!symbol || !dladdr(symbol, &where) || !where.dli_fname) {
    info.name = "built into LibTorch (no system sgemm_ found)";
    return info;
  }
  std::error_code ec;
  std::string resolved = std::filesystem::canonical(where.dli_fname, ec).string();
  if (ec) resolved = where.dli_fname;
  info.library = resolved;
  if (resolved.find("openblas") != std::string::npos) {
    info.name = resolved.find("pthread") != std::string::npos  ? "OpenBLAS (pthread)"
                : resolved.find("openmp") != std::string::npos ? "OpenBLAS (OpenMP)"
                                                               : "OpenBLAS";
  } else if (resolved.find("mkl") != std::string::npos) {
    info.name = "Intel MKL";
  } else if (resolved.find("blis") != std::string::npos) {
    info.name = "BLIS";
  } else if (resolved.find("atlas") != std::string::npos) {
    info.name = "ATLAS";
  } else if (resolved.find("/blas/") != std::string::npos) {
    info.name = "reference BLAS (netlib)";
    info.reference = true;
  } else {
    info.name = "unknown BLAS";
  }
  info.core = blas::openBlasCore();
  return info;
}

// Best-of-N fp32 matrix product rate, in GFLOP/s.
double measureSgemm(int n, int repeats) {
  c10::InferenceMode guard;
  at::manual_seed(0);
  at::Tensor a = at::randn({n, n});
  at::Tensor b = at::randn({n, n});
  at::Tensor c = at::mm(a, b);  // warm-up: loads the BLAS, starts its threads
  double best = 1e30;
  for (int i = 0; i < repeats; ++i) {
    auto start = std::chrono::steady_clock::now();
    at::mm_out(c, a, b);
    std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
    best = std::min(best, elapsed.count());
  }
  return 2.0 * n * n * static_cast<double>(n) / best / 1e9;
}

struct Checkpoint {
  std::string path;
  std::uintmax_t bytes = 0;
};

std::vector<Checkpoint> listCheckpoints(const std::string& root) {
  namespace fs = std::filesystem;
  std::vector<Checkpoint> found;
  std::error_code ec;
  if (!fs::is_directory(root, ec)) return found;
  for (auto it = fs::recursive_directory_iterator(root, fs::directory_options::skip_permission_denied, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (it.depth() > 2) it.disable_recursion_pending();
    if (it->is_regular_file(ec) && it->path().extension() == ".safetensors")
      found.push_back({fs::relative(it->path(), root, ec).string(), it->file_size(ec)});
  }
  std::sort(found.begin(), found.end(), [](auto& a, auto& b) { return a.path < b.path; });
  return found;
}

// What doctor finds, section by section; the report holds it all for --json.
struct Diagnosis {
  nlohmann::json report;
  std::vector<std::string> problems;
  std::vector<std::string> warnings;
  std::vector<std::pair<std::string, std::string>> versions;
  int cudaDevices = 0;
  int threadCount = 0, cores = 0;
  std::string waitPolicy, blasTimeout;
  double gflops = 0;
  BlasInfo blas;
  CpuPrecisionChoice cpuChoice;
  std::optional<GemmRates> cpuRates;
  std::string cpuRatesError;
  std::string root;
  std::vector<Checkpoint> checkpoints;

  void checkVersionsAndCuda() {
    versions = componentVersions();
#ifdef SAPIENS_HAVE_MEDIA
    versions.emplace_back("OpenCV", CV_VERSION);
    versions.emplace_back("FFmpeg", av_version_info());
#endif
    for (auto& [name, version] : versions) report["versions"][name] = version;
    cudaDevices = at::hasCUDA() ? at::detail::getCUDAHooks().getNumGPUs() : 0;
    report["cuda"]["available"] = cudaDevices > 0;
    report["cuda"]["devices"] = nlohmann::json::array();
#ifdef SAPIENS_HAVE_CUDA
    for (int i = 0; i < cudaDevices; ++i) {
      auto* props = at::cuda::getDeviceProperties(i);
      report["cuda"]["devices"].push_back(
          {{"index", i},
           {"name", props->name},
           {"memory_gib", props->totalGlobalMem / double(1ull << 30)},
           {"compute_capability", std::to_string(props->major) + "." + std::to_string(props->minor)}});
    }
#endif
  }

  void checkThreadsAndBlas() {
    threadCount = threads::current();
    cores = threads::defaultCount();
    const char* policy = std::getenv("OMP_WAIT_POLICY");
    const char* timeout = std::getenv("OPENBLAS_THREAD_TIMEOUT");
    waitPolicy = policy ? policy : "(unset)";
    blasTimeout = timeout ? timeout : "(unset)";
    report["threads"] = {{"intra_op", threadCount},
                         {"cores_available", cores},
                         {"omp_wait_policy", waitPolicy},
                         {"openblas_thread_timeout", blasTimeout}};
    if (threadCount < 2 && cores >= 2)
      warnings.push_back("LibTorch runs on 1 thread although " + std::to_string(cores) +
                         " cores are available");
    if (waitPolicy != "PASSIVE")
      warnings.push_back(
          "OMP_WAIT_POLICY is not PASSIVE: spinning OpenMP threads slow everything under load");
    gflops = measureSgemm(1024, 5);
    blas = detectBlas();
    report["blas"] = {{"implementation", blas.name},
                      {"library", blas.library},
                      {"core", blas.core},
                      {"sgemm_1024_gflops", gflops}};
    if (blas.reference)
      problems.push_back("the reference BLAS is active (" + blas.library +
                         "): inference is ~30x slower. Install libopenblas0-pthread (scripts/install-deps)");
    else if (gflops < 10.0)
      warnings.push_back("fp32 matrix products run at only " + std::to_string(gflops) + " GFLOP/s");
    if (const std::string slow = blas::slowKernelsWarning(); !slow.empty()) warnings.push_back(slow);
  }

  // What --dtype auto runs on the CPU, and both rates (measured here when auto had no reason to).
  void checkCpuPrecision() {
    cpuChoice = cpuAutoPrecision();
    cpuRates = cpuChoice.rates;
    if (!cpuRates) {
      try {
        // Smaller without native bf16: LibTorch's generic bf16 product can be 50x slower than fp32.
        cpuRates = measureCpuGemmRates(cpuChoice.support.native() ? 1024 : 512, 100);
      } catch (const std::exception& e) {
        cpuRatesError = e.what();
        cpuRatesError.resize(std::min(cpuRatesError.find('\n'), cpuRatesError.size()));
      }
    }
    const CpuBf16Support& bf16 = cpuChoice.support;
    nlohmann::json features = nlohmann::json::array();
    if (bf16.avx512Bf16) features.push_back("avx512_bf16");
    if (bf16.amxBf16) features.push_back("amx_bf16");
    nlohmann::json& cpu = report["cpu_precision"];
    cpu = {{"native_bf16", bf16.native()},
           {"bf16_features", features},
           {"disabled_by", bf16.disabledBy},
           {"forced_bf16", bf16.forced},
           {"auto", computeDtypeName(cpuChoice.dtype)},
           {"auto_reason", cpuChoice.reason},
           {"auto_min_speedup", kCpuBf16MinSpeedup}};
    if (cpuRates) {
      cpu["gemm_size"] = cpuRates->size;
      cpu["fp32_gflops"] = cpuRates->fp32Gflops;
      cpu["bf16_gflops"] = cpuRates->bf16Gflops;
      cpu["bf16_speedup"] = cpuRates->speedup();
    } else {
      cpu["gemm_error"] = cpuRatesError;
    }
  }

  void checkModels() {
    root = paths::checkpointRoot();
    checkpoints = listCheckpoints(root);
    report["models"]["root"] = root;
    report["models"]["exists"] = std::filesystem::is_directory(root);
    report["models"]["checkpoints"] = nlohmann::json::array();
    for (auto& c : checkpoints)
      report["models"]["checkpoints"].push_back({{"file", c.path}, {"bytes", c.bytes}});
    report["resources"] = paths::resourceDir();
    report["log_file"] = log::logFilePath();
    report["problems"] = problems;
    report["warnings"] = warnings;
  }

  static void row(const std::string& key, const std::string& value) {
    std::cout << "  " << std::left << std::setw(22) << key << value << "\n";
  }

  void printCompute() const {
    std::cout << "Compute\n";
    row("CUDA", cudaDevices > 0 ? std::to_string(cudaDevices) + " device(s)"
                                : "not available (CPU, " + computeDtypeName(cpuChoice.dtype) + ")");
    for (auto& d : report["cuda"]["devices"])
      row("  cuda:" + std::to_string(d["index"].get<int>()), d["name"].get<std::string>());
    row("BLAS", blas.name + (blas.library.empty() ? "" : "  [" + blas.library + "]"));
    if (!blas.core.empty()) row("BLAS kernels", blas.core);
    std::ostringstream rate;
    rate << std::fixed << std::setprecision(1) << gflops << " GFLOP/s (fp32 1024x1024, best of 5)";
    row("sgemm", rate.str());
    const CpuBf16Support& bf16 = cpuChoice.support;
    std::string native = bf16.native() ? "yes (" + bf16.features() + ")" : "no";
    if (!bf16.native() && bf16.hardware())
      native += " (turned off by " + bf16.disabledBy + "; the CPU has " + bf16.features() + ")";
    else if (!bf16.hardware())
      native += " (the CPU has neither avx512_bf16 nor amx_bf16)";
    row("native bf16", native);
    if (cpuRates) {
      std::ostringstream rates;
      rates << std::fixed << std::setprecision(1) << "fp32 " << cpuRates->fp32Gflops << ", bf16 "
            << cpuRates->bf16Gflops << " GFLOP/s (" << cpuRates->size << "^3, bf16 " << std::setprecision(2)
            << cpuRates->speedup() << "x)";
      row("CPU matrix product", rates.str());
    } else {
      row("CPU matrix product", "not measured: " + cpuRatesError);
    }
    row("CPU dtype auto", computeDtypeName(cpuChoice.dtype) + ": " + cpuChoice.reason);
    row("threads", std::to_string(threadCount) + " intra-op of " + std::to_string(cores) +
                       " cores, OMP_WAIT_POLICY=" + waitPolicy + ", OPENBLAS_THREAD_TIMEOUT=" + blasTimeout);
  }

  void printText() const {
    std::cout << "Versions\n";
    for (auto& [name, version] : versions) row(name, version);
    printCompute();
    std::cout << "Models\n";
    row("checkpoint root", root + (std::filesystem::is_directory(root) ? "" : "  (missing)"));
    for (auto& c : checkpoints) row("", c.path + "  (" + std::to_string(c.bytes / (1024 * 1024)) + " MiB)");
    if (checkpoints.empty()) row("", "no .safetensors checkpoints found");
    row("resources", paths::resourceDir());
    row("log file", log::logFilePath().empty() ? "(none)" : log::logFilePath());
    for (auto& w : warnings) std::cout << "warning: " << w << "\n";
    for (auto& p : problems) std::cout << "PROBLEM: " << p << "\n";
    std::cout << (problems.empty() ? "doctor: OK\n"
                                   : "doctor: " + std::to_string(problems.size()) + " problem(s)\n");
  }
};

int runDoctor(bool asJson) {
  Diagnosis d;
  d.checkVersionsAndCuda();
  d.checkThreadsAndBlas();
  d.checkCpuPrecision();
  d.checkModels();
  if (asJson)
    std::cout << d.report.dump(2) << "\n";
  else
    d.printText();
  return d.problems.empty() ? kOk : kEnvironment;
}

CliCommand doctorCommand("doctor", [](CLI::App& app) -> CommandAction {
  auto asJson = std::make_shared<bool>(false);
  auto* sub = app.add_subcommand("doctor",
                                 "Report versions, compute devices, BLAS speed, threads and models; "
                                 "exit non-zero when the set-up is broken");
  sub->add_flag("--json", *asJson, "Print the report as JSON");
  return [asJson] { return runDoctor(*asJson); };
});

}  // namespace
}  // namespace sapiens::cli
