// Whether OpenBLAS runs slower kernels than the CPU could (doctor's warning): its AVX2 kernels on a CPU
// with AVX-512; and the kernels pinned where it does not know the CPU at all (its SSE3 fallback).

#include "sapiens/common/blas_kernels.h"

#include <QtTest>

using namespace sapiens;

class BlasKernelsTest : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void avx2KernelsOnAnAvx512CpuAreSlower() {
    QVERIFY(blas::slowerKernelsThanTheCpuRuns("Haswell", true));
    QVERIFY(blas::slowerKernelsThanTheCpuRuns("Zen", true));
    QVERIFY(blas::slowerKernelsThanTheCpuRuns("HASWELL", true));
  }

  void everythingElseIsNot() {
    QVERIFY(!blas::slowerKernelsThanTheCpuRuns("Haswell", false));  // an AVX2-only CPU
    QVERIFY(!blas::slowerKernelsThanTheCpuRuns("SkylakeX", true));
    QVERIFY(!blas::slowerKernelsThanTheCpuRuns("Cooperlake", true));
    QVERIFY(!blas::slowerKernelsThanTheCpuRuns("", true));  // not OpenBLAS
  }

  // Debian 12's OpenBLAS takes Intel's Emerald Rapids for a Prescott: matrix products 10x slower.
  void anUnknownCpuGetsTheKernelsOfItsInstructionSet() {
    QCOMPARE(blas::coreTypeToPin("Prescott", true, true), std::string("SkylakeX"));
    QCOMPARE(blas::coreTypeToPin("Nehalem", true, false), std::string("Haswell"));
    QCOMPARE(blas::coreTypeToPin("Prescott", false, false), std::string());  // an old CPU indeed
    for (const char* core : {"Haswell", "Zen", "SkylakeX", "Cooperlake", "SAPPHIRERAPIDS", ""})
      QCOMPARE(blas::coreTypeToPin(core, true, true), std::string());
  }

  void theRunningOpenBlasIsNamed() {
    QVERIFY2(!blas::openBlasCore().empty(),
             "OpenBLAS is the BLAS of the test machines (scripts/install-deps)");
  }
};

QTEST_APPLESS_MAIN(BlasKernelsTest)
#include "test_blas_kernels.moc"
