// What `--dtype auto` runs on the CPU (native bf16 and a measured speed-up, or fp32, with the reason), the
// environment switches that turn native bf16 off, and a bf16 load of an F32 checkpoint holding only the
// bf16 weights (converted tensor by tensor from the mapped file).

#include "sapiens/common/allocator.h"
#include "sapiens/common/cpu_features.h"
#include "sapiens/model/architecture.h"
#include "sapiens/model/compute_options.h"
#include "sapiens/model/model.h"
#include "sapiens/model/parameter_layout.h"
#include "sapiens/model/safetensors_torch.h"
#include "test_support.h"

#include <ATen/ATen.h>
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

#include <fstream>
#include <string>

using namespace sapiens;

namespace {

// Sets (or with an empty value removes) an environment variable for the scope.
class ScopedEnvironment {
 public:
  ScopedEnvironment(const char* name, const QByteArray& value) : name_(name), old_(qgetenv(name)) {
    had_ = qEnvironmentVariableIsSet(name);
    if (value.isEmpty())
      qunsetenv(name);
    else
      qputenv(name, value);
  }
  ~ScopedEnvironment() {
    if (had_)
      qputenv(name_, old_);
    else
      qunsetenv(name_);
  }
  ScopedEnvironment(const ScopedEnvironment&) = delete;
  ScopedEnvironment& operator=(const ScopedEnvironment&) = delete;

 private:
  const char* name_;
  QByteArray old_;
  bool had_ = false;
};

CpuBf16Support nativeAvx512Bf16() {
  CpuBf16Support s;
  s.avx512Bf16 = true;
  return s;
}

GemmRates rates(double fp32, double bf16) {
  GemmRates r;
  r.size = 1024;
  r.fp32Gflops = fp32;
  r.bf16Gflops = bf16;
  return r;
}

// kB from a "Name:   1234 kB" line of /proc/self/status; -1 when missing.
long long statusKb(const char* field) {
  std::ifstream status("/proc/self/status");
  std::string line;
  const std::string prefix = std::string(field) + ":";
  while (std::getline(status, line)) {
    if (line.rfind(prefix, 0) == 0) return std::stoll(line.substr(prefix.size()));
  }
  return -1;
}

// Resets VmHWM (the peak resident set) to the current resident set (Linux 4.0+).
bool resetPeakRss() {
  std::ofstream clear("/proc/self/clear_refs");
  clear << "5";
  clear.flush();
  return static_cast<bool>(clear);
}

}  // namespace

class TestCpuBf16 : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void autoPicksBf16OnlyWithNativeBf16AndEnoughSpeed() {
    const CpuPrecisionChoice fast = chooseCpuPrecision(nativeAvx512Bf16(), rates(200, 420));
    QCOMPARE(fast.dtype, at::kBFloat16);
    QVERIFY2(fast.reason.find("native bf16 (avx512_bf16)") != std::string::npos &&
                 fast.reason.find("2.10x") != std::string::npos,
             fast.reason.c_str());

    const CpuPrecisionChoice slow = chooseCpuPrecision(nativeAvx512Bf16(), rates(200, 250));
    QCOMPARE(slow.dtype, at::kFloat);
    QVERIFY2(slow.reason.find("only 1.25x") != std::string::npos, slow.reason.c_str());
    QCOMPARE(chooseCpuPrecision(nativeAvx512Bf16(), rates(200, 300)).dtype, at::kBFloat16);  // 1.5x

    const CpuPrecisionChoice none = chooseCpuPrecision(CpuBf16Support{}, std::nullopt);
    QCOMPARE(none.dtype, at::kFloat);
    QCOMPARE(none.reason, std::string("no native bf16 (the CPU has neither avx512_bf16 nor amx_bf16)"));

    CpuBf16Support off = nativeAvx512Bf16();
    off.amxBf16 = true;
    off.disabledBy = "SAPIENS_CPU_BF16=0";
    const CpuPrecisionChoice disabled = chooseCpuPrecision(off, rates(200, 800));
    QCOMPARE(disabled.dtype, at::kFloat);
    QCOMPARE(
        disabled.reason,
        std::string("no native bf16 (turned off by SAPIENS_CPU_BF16=0; the CPU has avx512_bf16, amx_bf16)"));

    const CpuPrecisionChoice unmeasured = chooseCpuPrecision(nativeAvx512Bf16(), std::nullopt, "no kernel");
    QCOMPARE(unmeasured.dtype, at::kFloat);
    QVERIFY2(unmeasured.reason.find("no kernel") != std::string::npos, unmeasured.reason.c_str());

    CpuBf16Support forced;
    forced.forced = true;
    const CpuPrecisionChoice forcedChoice = chooseCpuPrecision(forced, std::nullopt);
    QCOMPARE(forcedChoice.dtype, at::kBFloat16);
    QVERIFY2(forcedChoice.reason.find("SAPIENS_CPU_BF16=1") != std::string::npos,
             forcedChoice.reason.c_str());
  }

  void theEnvironmentTurnsNativeBf16Off() {
    const ScopedEnvironment noAten("ATEN_CPU_CAPABILITY", {});
    const ScopedEnvironment noOnednn("ONEDNN_MAX_CPU_ISA", {});
    const ScopedEnvironment noDnnl("DNNL_MAX_CPU_ISA", {});
    {
      const ScopedEnvironment unset("SAPIENS_CPU_BF16", {});
      const CpuBf16Support s = cpuBf16Support();
      QCOMPARE(s.avx512Bf16, cpu::hasAvx512Bf16());
      QCOMPARE(s.amxBf16, cpu::hasAmxBf16());
      QVERIFY(s.disabledBy.empty());
      QVERIFY(!s.forced);
      QCOMPARE(s.native(), cpu::hasAvx512Bf16() || cpu::hasAmxBf16());
      qInfo("this CPU: native bf16 %s (%s)", s.native() ? "yes" : "no", s.features().c_str());
    }
    {
      const ScopedEnvironment off("SAPIENS_CPU_BF16", "0");
      const CpuBf16Support s = cpuBf16Support();
      QCOMPARE(s.disabledBy, std::string("SAPIENS_CPU_BF16=0"));
      QVERIFY(!s.native());
      QCOMPARE(chooseCpuPrecision(s, std::nullopt).dtype, at::kFloat);
    }
    {
      const ScopedEnvironment on("SAPIENS_CPU_BF16", "1");
      QVERIFY(cpuBf16Support().forced);
    }
    const ScopedEnvironment unset("SAPIENS_CPU_BF16", {});
    {
      const ScopedEnvironment avx2("ATEN_CPU_CAPABILITY", "avx2");
      QCOMPARE(cpuBf16Support().disabledBy, std::string("ATEN_CPU_CAPABILITY=avx2"));
    }
    {
      const ScopedEnvironment avx512("ATEN_CPU_CAPABILITY", "avx512");
      QVERIFY(cpuBf16Support().disabledBy.empty());
    }
    {
      const ScopedEnvironment core("ONEDNN_MAX_CPU_ISA", "AVX512_CORE");
      QCOMPARE(cpuBf16Support().disabledBy, std::string("ONEDNN_MAX_CPU_ISA=AVX512_CORE"));
    }
    {
      const ScopedEnvironment amx("ONEDNN_MAX_CPU_ISA", "avx512_core_amx");
      QVERIFY(cpuBf16Support().disabledBy.empty());
    }
  }

  void theProbeMeasuresBothDtypesQuickly() {
    QElapsedTimer clock;
    clock.start();
    const GemmRates r = measureCpuGemmRates(256, 50);
    qInfo("256^3: fp32 %.1f GFLOP/s, bf16 %.1f GFLOP/s (%.2fx) in %lld ms", r.fp32Gflops, r.bf16Gflops,
          r.speedup(), static_cast<long long>(clock.elapsed()));
    QCOMPARE(r.size, 256);
    QVERIFY(r.fp32Gflops > 0 && r.bf16Gflops > 0);
    QVERIFY2(clock.elapsed() < 5000, qPrintable(QString::number(clock.elapsed())));
    // The choice this process made is cached and names its reason; without native bf16, fp32.
    const CpuPrecisionChoice& choice = cpuAutoPrecision();
    QCOMPARE(&choice, &cpuAutoPrecision());
    QVERIFY(!choice.reason.empty());
    if (!choice.support.native() && !choice.support.forced) {
      QCOMPARE(choice.dtype, at::kFloat);
      QVERIFY(choice.reason.rfind("no native bf16", 0) == 0);
      QVERIFY(!choice.rates);  // nothing measured: nothing to gain
    }
    QCOMPARE(computeDtypeReason("fp32", c10::Device(c10::kCPU)), std::string("requested"));
    QVERIFY(computeDtypeReason("auto", c10::Device(c10::kCPU)).rfind("auto on the CPU: ", 0) == 0);
  }

  void theChunkedCopyEqualsTheWholeLoad() {
    for (const char* folder : {"seg", "backbone_bf16"}) {
      const SafetensorsFile file =
          SafetensorsFile::open(test::fixture(std::string("golden/") + folder + "/model.safetensors"));
      for (const TensorEntry& entry : file.tensors()) {
        for (const c10::ScalarType as : {at::kFloat, at::kBFloat16}) {
          const at::Tensor whole = loadTensor(file, entry, as).clone();
          // 1000 bytes: chunks that end inside pages and inside elements' neighbours' pages.
          const at::Tensor chunked = copyTensorReleasingPages(file, entry, as, 1000);
          QCOMPARE(chunked.scalar_type(), as);
          QVERIFY2(chunked.sizes() == whole.sizes() && at::equal(chunked, whole), entry.name.c_str());
          QVERIFY(chunked.data_ptr() != static_cast<const void*>(file.data(entry)));
        }
      }
    }
  }

  // An F32 checkpoint loaded as bf16: the peak resident set grows by the bf16 weights (and one tensor's
  // conversion), not by the F32 file's pages on top. SAPIENS_LOAD_MEMORY_SIZE=0.4b measures an official
  // size instead of the cut-down one (1.6 GB written to the temporary folder).
  void aBf16LoadOfAnF32FileHoldsOnlyTheBf16Weights() {
    const QByteArray size = qgetenv("SAPIENS_LOAD_MEMORY_SIZE");
    Architecture arch = officialArchitecture(size.isEmpty() ? "0.1b" : size.toStdString(), Task::Backbone);
    if (size.isEmpty()) {  // 0.1b with 6 of its blocks: 43 M parameters
      arch.backbone.numLayers = 6;
      arch.backbone.kvHeads.resize(6);
    }
    QTemporaryDir dir;
    const std::string path = dir.filePath(QStringLiteral("f32.safetensors")).toStdString();
    {
      ModelOptions fp32;
      fp32.dtype = at::kFloat;
      const Model model = Model::random(arch, fp32, 1);
      NamedTensors tensors(model.parameters().begin(), model.parameters().end());
      saveSafetensors(path, tensors);
    }
    memory::releaseFreeMemory();
    const double bf16Mb = static_cast<double>(parameterCount(arch)) * 2 / (1 << 20);
    const double fileMb = static_cast<double>(QFile(QString::fromStdString(path)).size()) / (1 << 20);
    if (!resetPeakRss() || statusKb("VmHWM") < 0) QSKIP("this kernel cannot reset the peak resident set");
    const long long before = statusKb("VmRSS");
    ModelOptions bf16;
    bf16.dtype = at::kBFloat16;
    const Model model = Model::load(path, bf16);
    const double peakMb = static_cast<double>(statusKb("VmHWM") - before) / 1024;
    const double heldMb = static_cast<double>(statusKb("VmRSS") - before) / 1024;
    qInfo("bf16 load of a %.0f MB F32 file: peak +%.0f MB, held +%.0f MB, bf16 weights %.0f MB (%.2fx)",
          fileMb, peakMb, heldMb, bf16Mb, peakMb / bf16Mb);
    QCOMPARE(model.dtype(), at::kBFloat16);
    QVERIFY2(peakMb <= 1.1 * bf16Mb,
             qPrintable(QString("peak %1 MB for %2 MB of bf16 weights").arg(peakMb).arg(bf16Mb)));
  }
};

QTEST_MAIN(TestCpuBf16)
#include "test_cpu_bf16.moc"
