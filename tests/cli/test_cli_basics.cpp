// The CLI's front door: --version, usage errors, and `doctor` telling a good set-up from a broken one.

#include "sapiens/common/blas_kernels.h"
#include "sapiens/common/cpu_features.h"
#include "test_support.h"

#include <QDir>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

using namespace sapiens;
using sapiens::test::runCli;

class CliBasicsTest : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void versionPrintsTheVersion() {
    auto r = runCli({"--version"});
    QCOMPARE(r.exitCode, 0);
    QVERIFY2(r.out.startsWith("sapiens-cli 0."), qPrintable(r.out));
  }

  void unknownSubcommandIsAUsageError() {
    auto r = runCli({"frobnicate"});
    QVERIFY(!r.crashed);
    QVERIFY(r.exitCode != 0);
    QVERIFY2(r.err.contains("frobnicate") || r.out.contains("frobnicate"), qPrintable(r.err));
  }

  void doctorReportsAFastBlasAndSeveralThreads() {
    auto r = runCli({"doctor", "--json"});
    QVERIFY2(!r.crashed, qPrintable(r.err));
    QCOMPARE(r.exitCode, 0);
    const QJsonObject report = QJsonDocument::fromJson(r.out.toUtf8()).object();
    QVERIFY2(!report.isEmpty(), qPrintable(r.out));
    const QJsonObject blas = report["blas"].toObject();
    QVERIFY2(blas["implementation"].toString().contains("OpenBLAS"),
             qPrintable(blas["implementation"].toString()));
    // The reference BLAS manages ~5 GFLOP/s here; OpenBLAS on two cores 70-190.
    QVERIFY2(blas["sgemm_1024_gflops"].toDouble() > 20.0,
             qPrintable(QString::number(blas["sgemm_1024_gflops"].toDouble())));
    const QJsonObject threads = report["threads"].toObject();
    QVERIFY(threads["intra_op"].toInt() >= std::min(2, threads["cores_available"].toInt()));
    QCOMPARE(threads["omp_wait_policy"].toString(), QString("PASSIVE"));
    QVERIFY(report["versions"].toObject().contains("LibTorch"));
    QVERIFY(report["versions"].toObject().contains("OpenCV"));
    QVERIFY(report["versions"].toObject().contains("FFmpeg"));
    QCOMPARE(report["problems"].toArray().size(), 0);
  }

  // Native bf16 (which instructions), both measured matrix-product rates and what --dtype auto picks.
  void doctorReportsTheCpuPrecisionAutoPicks() {
    auto r = runCli({"doctor", "--json"}, 300000,
                    {"SAPIENS_CPU_BF16", "ATEN_CPU_CAPABILITY", "ONEDNN_MAX_CPU_ISA"});
    QCOMPARE(r.exitCode, 0);
    QJsonObject precision = QJsonDocument::fromJson(r.out.toUtf8()).object()["cpu_precision"].toObject();
    const bool hardware = cpu::hasAvx512Bf16() || cpu::hasAmxBf16();
    QCOMPARE(precision["native_bf16"].toBool(), hardware);
    QCOMPARE(precision["bf16_features"].toArray().contains(QString("avx512_bf16")), cpu::hasAvx512Bf16());
    QCOMPARE(precision["bf16_features"].toArray().contains(QString("amx_bf16")), cpu::hasAmxBf16());
    QVERIFY2(precision["fp32_gflops"].toDouble() > 1 && precision["bf16_gflops"].toDouble() > 0,
             qPrintable(QJsonDocument(precision).toJson()));
    const QString picked = precision["auto"].toString();
    QVERIFY(picked == "fp32" || picked == "bf16");
    if (!hardware) {
      QCOMPARE(picked, QString("fp32"));
      QVERIFY(precision["auto_reason"].toString().startsWith("no native bf16"));
    } else {
      // With native bf16 the rates are auto's own measurement, and the pick follows them.
      QCOMPARE(picked == "bf16",
               precision["bf16_speedup"].toDouble() >= precision["auto_min_speedup"].toDouble());
    }

    auto text = runCli({"doctor"}, 300000, {"SAPIENS_CPU_BF16=0"});
    QCOMPARE(text.exitCode, 0);
    QVERIFY2(text.out.contains(QRegularExpression("native bf16 +no")), qPrintable(text.out));
    QVERIFY2(text.out.contains(QRegularExpression("CPU matrix product +fp32 [0-9.]+, bf16 [0-9.]+ GFLOP/s")),
             qPrintable(text.out));
    QVERIFY2(text.out.contains(QRegularExpression("CPU dtype auto +fp32: no native bf16")),
             qPrintable(text.out));
  }

  void doctorNamesTheBlasKernelsAndWarnsOfPinnedAvx2Kernels() {
    // OPENBLAS_CORETYPE=Haswell pins the AVX2 kernels (some machines set it for every process).
    auto pinned = runCli({"doctor", "--json"}, 300000, {"OPENBLAS_CORETYPE=Haswell"});
    QCOMPARE(pinned.exitCode, 0);
    const QJsonObject report = QJsonDocument::fromJson(pinned.out.toUtf8()).object();
    QCOMPARE(report["blas"].toObject()["core"].toString(), QString("Haswell"));
    const QString warnings = QJsonDocument(report["warnings"].toArray()).toJson();
    QCOMPARE(
        warnings.contains("AVX2 Haswell kernels on a CPU with AVX-512 (OPENBLAS_CORETYPE=Haswell is set)"),
        cpu::hasAvx512());

    // Left to itself (0.3.21 picks Cooperlake on the Zen 5 here), the warning follows its own choice.
    auto chosen = runCli({"doctor", "--json"}, 300000, {"OPENBLAS_CORETYPE"});
    QCOMPARE(chosen.exitCode, 0);
    const QJsonObject own = QJsonDocument::fromJson(chosen.out.toUtf8()).object();
    const QString core = own["blas"].toObject()["core"].toString();
    QVERIFY2(!core.isEmpty(), qPrintable(chosen.out));
    QCOMPARE(QJsonDocument(own["warnings"].toArray()).toJson().contains("kernels on a CPU with AVX-512"),
             blas::slowerKernelsThanTheCpuRuns(core.toStdString(), cpu::hasAvx512()));
  }

  void doctorFailsOnTheReferenceBlas() {
    const QString referenceBlasDir = "/usr/lib/x86_64-linux-gnu/blas";
    if (!QFileInfo::exists(referenceBlasDir + "/libblas.so.3"))
      QSKIP("Debian's reference BLAS is not installed");
    auto r = runCli({"doctor"}, 300000, {"LD_LIBRARY_PATH=" + referenceBlasDir});
    QVERIFY(!r.crashed);
    QCOMPARE(r.exitCode, 4);
    QVERIFY2(r.out.contains("reference BLAS is active"), qPrintable(r.out));
  }

  void threadsOptionIsHonoured() {
    auto r = runCli({"--threads", "1", "doctor", "--json"});
    QCOMPARE(r.exitCode, 0);
    QCOMPARE(QJsonDocument::fromJson(r.out.toUtf8()).object()["threads"].toObject()["intra_op"].toInt(), 1);
  }
};

QTEST_APPLESS_MAIN(CliBasicsTest)
#include "test_cli_basics.moc"
