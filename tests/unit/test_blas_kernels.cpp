// Whether OpenBLAS runs slower kernels than the CPU could (doctor's warning): its AVX2 kernels on a CPU
// with AVX-512.

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

  void theRunningOpenBlasIsNamed() {
    QVERIFY2(!blas::openBlasCore().empty(),
             "OpenBLAS is the BLAS of the test machines (scripts/install-deps)");
  }
};

QTEST_APPLESS_MAIN(BlasKernelsTest)
#include "test_blas_kernels.moc"
