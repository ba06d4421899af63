// sapiens-cli inspect and forward on the golden fixtures, through the real binary; forward --expect and
// tools/gpu-check.sh's own logic (dry run, refusal of a CPU-only LibTorch) on this GPU-less machine.

#include "sapiens/model/safetensors_torch.h"
#include "sapiens/model/tensor_difference.h"
#include "test_support.h"

#include <ATen/ATen.h>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>
#include <map>
#include <utility>

using namespace sapiens;

using sapiens::test::describe;

namespace {

QString fixturePath(const QString& folder, const QString& file) {
  return QString::fromStdString(test::fixture("golden/" + folder.toStdString() + "/" + file.toStdString()));
}

std::map<std::string, at::Tensor> readTensors(const QString& path) {
  const SafetensorsFile file = SafetensorsFile::open(path.toStdString());
  std::map<std::string, at::Tensor> tensors;
  for (const TensorEntry& entry : file.tensors())
    tensors[entry.name] = loadTensor(file, entry, at::kFloat).clone();
  return tensors;
}

// 1234567 -> "1,234,567"
QString grouped(qint64 value) {
  QString text = QString::number(value);
  for (int i = static_cast<int>(text.size()) - 3; i > 0; i -= 3) text.insert(i, ',');
  return text;
}

}  // namespace

class TestCliModel : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void inspectDescribesTheCheckpoint() {
    const QString model = fixturePath("pose", "model.safetensors");
    const test::ProcessResult r = test::runCli({"inspect", "--model", model});
    QVERIFY2(r.exitCode == 0 && !r.crashed, qPrintable(describe(r)));
    qint64 elements = 0;
    const SafetensorsFile file = SafetensorsFile::open(model.toStdString());
    for (const TensorEntry& entry : file.tensors()) elements += entry.numel();
    const QStringList expected = {
        "task           pose (308 keypoints)",
        "architecture   custom",
        "embed 32, 18 layers, 4 heads x 8 (head dim), FFN 128, kv heads [4 x8, 2 x2, 4 x8], 8 storage tokens",
        "deconv [32, 24] k[4, 4], conv [24, 16, 16] k[1, 1, 1], 308 keypoints",
        QString("parameters     %1 in %2 tensors").arg(grouped(elements)).arg(file.tensors().size()),
        QString("stored dtypes  F32 x %1").arg(file.tensors().size()),
        QString("(%1 bytes)").arg(grouped(static_cast<qint64>(file.fileSize()))),
    };
    for (const QString& line : expected)
      QVERIFY2(r.out.contains(line), qPrintable(line + "\n" + describe(r)));
  }

  void inspectReportsBf16Storage() {
    const test::ProcessResult r =
        test::runCli({"inspect", fixturePath("backbone_bf16", "model.safetensors")});
    QVERIFY2(r.exitCode == 0, qPrintable(describe(r)));
    QVERIFY2(r.out.contains("task           backbone\n") && r.out.contains("BF16 x "),
             qPrintable(describe(r)));
  }

  void inspectRefusesGarbageWithOneLine() {
    QTemporaryDir dir;
    const QString path = dir.filePath("garbage.safetensors");
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write("this is not a safetensors file at all, just some text that goes on for a while");
    file.close();
    const test::ProcessResult r = test::runCli({"inspect", "--model", path});
    QVERIFY2(r.exitCode == 1 && !r.crashed, qPrintable(describe(r)));
    const QString err = r.err.trimmed();
    QVERIFY2(!err.isEmpty() && !err.contains('\n'), qPrintable(describe(r)));
    QVERIFY2(err.contains("garbage.safetensors"), qPrintable(describe(r)));
    QVERIFY(r.out.isEmpty());
  }

  void forwardMatchesTheReference_data() {
    QTest::addColumn<QString>("folder");
    for (const char* f : {"backbone", "backbone_bf16", "pose", "seg", "normal", "albedo", "pointmap"}) {
      QTest::newRow(f) << QString(f);
    }
  }

  void forwardMatchesTheReference() {
    QFETCH(QString, folder);
    QTemporaryDir dir;
    const QString output = dir.filePath("out.safetensors");
    const QString io = fixturePath(folder, "io.safetensors");
    const test::ProcessResult r =
        test::runCli({"forward", "--model", fixturePath(folder, "model.safetensors"), "--input", io,
                      "--output", output, "--intermediates", "--expect", io});
    QVERIFY2(r.exitCode == 0 && !r.crashed, qPrintable(describe(r)));
    // The CLI's own comparison (what tools/gpu-check.sh relies on) agrees with the one below.
    QVERIFY2(QRegularExpression("parity: (\\d+) of \\1 outputs within bounds").match(r.out).hasMatch(),
             qPrintable(describe(r)));
    const auto got = readTensors(output);
    const auto reference = readTensors(io);
    int compared = 0;
    for (const auto& [name, expected] : reference) {
      if (name == "input") continue;
      QVERIFY2(got.count(name), qPrintable(QString("output lacks %1").arg(name.c_str())));
      const TensorDifference d = tensorDifference(got.at(name), expected);
      QVERIFY2(
          withinTolerance(d, *parityTolerance(name)),
          qPrintable(QString("%1: max %2 mean %3").arg(name.c_str()).arg(d.maxRelative).arg(d.meanRelative)));
      ++compared;
    }
    QVERIFY(compared >= 11);
  }

  void forwardExpectFlagsAnOutputOffTheReference() {
    QTemporaryDir dir;
    const QString io = fixturePath("seg", "io.safetensors");
    // The reference with the logits shifted by 1% of their range: the comparison must catch it.
    NamedTensors shifted;
    for (auto& [name, tensor] : readTensors(io)) {
      if (name == "seg_logits") tensor = tensor + 0.01 * tensor.abs().max();
      shifted.emplace_back(name, tensor);
    }
    const QString reference = dir.filePath("shifted.safetensors");
    saveSafetensors(reference.toStdString(), shifted);
    const test::ProcessResult r =
        test::runCli({"forward", "--model", fixturePath("seg", "model.safetensors"), "--input", io,
                      "--output", dir.filePath("out.safetensors"), "--expect", reference});
    QCOMPARE(r.exitCode, 1);
    QVERIFY2(QRegularExpression("seg_logits +max [^\\n]* OFF").match(r.out).hasMatch(),
             qPrintable(describe(r)));
    QVERIFY2(r.out.contains("backbone_out") && r.out.contains(" ok"), qPrintable(describe(r)));

    // A reference of another model's outputs has nothing to compare.
    const test::ProcessResult none = test::runCli(
        {"forward", "--model", fixturePath("seg", "model.safetensors"), "--input", io, "--output",
         dir.filePath("out2.safetensors"), "--expect", fixturePath("seg", "e2e.safetensors")});
    QCOMPARE(none.exitCode, 1);
    QVERIFY2(none.err.contains("holds no tensor named like an output"), qPrintable(describe(none)));
  }

  void gpuCheckScriptPlansAndRefusesACpuOnlyLibTorch() {
    const QString script = QString::fromStdString(test::resource("../tools/gpu-check.sh"));
    QVERIFY(QFile::exists(script));
    QTemporaryDir dir;
    const auto run = [&](const QStringList& arguments) {
      QProcess process;
      process.setProcessChannelMode(QProcess::MergedChannels);
      process.start("bash", QStringList{script} + arguments);
      process.waitForFinished(120000);
      return std::make_pair(process.exitCode(), QString::fromUtf8(process.readAll()));
    };

    // The dry run plans the whole check and runs nothing.
    const auto [planned, plan] = run({"--dry-run", "--build", dir.filePath("b"), "--out", dir.filePath("o")});
    QVERIFY2(planned == 0, qPrintable(plan));
    QVERIFY(plan.contains("-DSAPIENS_CORE_ONLY=ON") && plan.contains("-DSAPIENS_REQUIRE_CUDA=ON"));
    QCOMPARE(
        plan.count(QRegularExpression("forward .*--device cuda --dtype fp32 .*--expect .*--intermediates "
                                      "--tolerance-scale 1\n")),
        7);
    QCOMPARE(plan.count(QRegularExpression("forward .*--device cuda --dtype bf16 .*--tolerance-scale 150")),
             7);
    for (const char* arch : {"0.4b", "1b", "5b"})
      QCOMPARE(
          plan.count(QRegularExpression(QString("bench --arch %1 .*--batch [18] .*--dtype bf16").arg(arch))),
          2);
    QVERIFY(plan.contains(QRegularExpression("bench --arch 0.4b .*--batch 2048 .*--device cuda")));
    QVERIFY(!QFile::exists(dir.filePath("b")));

    // Bad arguments and a missing LibTorch: exit code 2 and a sentence saying what is wrong.
    const auto [badArch, badArchText] = run({"--dry-run", "--archs", "2b"});
    QCOMPARE(badArch, 2);
    QVERIFY(badArchText.contains("unknown backbone size '2b'"));
    const auto [missing, missingText] =
        run({"--torch-prefix", dir.filePath("nowhere"), "--out", dir.filePath("o")});
    QCOMPARE(missing, 2);
    QVERIFY2(missingText.contains("no LibTorch at"), qPrintable(missingText));

    // Configured against this machine's CPU-only LibTorch, the build is refused before anything compiles.
    const QString cpuTorch = "/usr/lib/x86_64-linux-gnu/cmake/Torch";
    if (!QFile::exists(cpuTorch + "/TorchConfig.cmake")) QSKIP("no Debian LibTorch here");
    const auto [refused, refusal] = run({"--torch-prefix", cpuTorch, "--build", dir.filePath("b"), "--out",
                                         dir.filePath("o"), "--skip-bench"});
    QCOMPARE(refused, 2);
    QVERIFY2(refusal.contains("has no") && refusal.contains("CUDA") && refusal.contains("configure failed"),
             qPrintable(refusal));
    QVERIFY(QFile::exists(dir.filePath("o/gpu-check.log")));
  }

  // A batch the machine has no memory for (here a 4 GB address-space cap standing in for a full GPU):
  // one line naming the batch and what to lower, exit 1, no LibTorch backtrace, no crash. The same check
  // ran on an H200 against real GPU memory (tools/gpu-check.sh, docs/PERFORMANCE.md).
  void aBatchTooLargeForMemoryIsExplained() {
#if defined(__SANITIZE_ADDRESS__)
    QSKIP("AddressSanitizer needs far more address space than the cap this test sets");
#endif
    QProcess process;
    process.start("bash", {"-c",
                           "ulimit -v 4000000 && exec \"$0\" \"$@\"",
                           QString::fromUtf8(SAPIENS_CLI_PATH),
                           "bench",
                           "--arch",
                           "0.1b",
                           "--task",
                           "backbone",
                           "--height",
                           "1024",
                           "--width",
                           "768",
                           "--batch",
                           "32",
                           "--device",
                           "cpu",
                           "--dtype",
                           "fp32",
                           "--iterations",
                           "1",
                           "--warmup",
                           "1"});
    QVERIFY(process.waitForFinished(180000));
    const QString err = QString::fromUtf8(process.readAllStandardError());
    QCOMPARE(process.exitStatus(), QProcess::NormalExit);
    QCOMPARE(process.exitCode(), 1);
    QVERIFY2(err.contains("out of host memory in the forward pass of a batch of 32 at 1024x768"),
             qPrintable(err));
    QVERIFY2(err.contains("lower the batch size or the input resolution"), qPrintable(err));
    QVERIFY2(!err.contains("frame #") && !err.contains("Exception raised from"), qPrintable(err));
  }

  // bench on the CPU says where the forward's time went: the linear layers' products, the attention and
  // the rest of the median forward (of two), each as a share of the floor ratio, the three adding up to it.
  void benchSplitsTheForwardIntoItsParts() {
    const test::ProcessResult r =
        test::runCli({"bench", "--arch", "0.1b", "--height", "256", "--width", "192", "--device", "cpu",
                      "--dtype", "fp32", "--iterations", "2", "--warmup", "1", "--json"});
    QVERIFY2(r.exitCode == 0 && !r.crashed, qPrintable(describe(r)));
    const QJsonObject report = QJsonDocument::fromJson(r.out.toUtf8()).object();
    const QJsonObject parts = report["parts"].toObject();
    const double forwardMs = report["ms_median"].toDouble();
    const double products = parts["products_ms"].toDouble(), attention = parts["attention_ms"].toDouble();
    QVERIFY2(products > 0.1 * forwardMs && attention > 0 && products + attention < forwardMs,
             qPrintable(r.out));
    QCOMPARE(parts["rest_ms"].toDouble() + products + attention, forwardMs);
    const double shares = parts["share_products"].toDouble() + parts["share_attention"].toDouble() +
                          parts["share_rest"].toDouble();
    QVERIFY2(std::abs(shares - report["floor_ratio"].toDouble()) < 1e-6 * shares, qPrintable(r.out));
    // The products' GFLOP are the blocks' linear layers: all of the 0.1b's work but the attention's and
    // the patch embedding's (256 / 16 x 192 / 16 patches of 16 x 16 x 3 into 768 channels).
    const double patchEmbedding = 2.0 * 16 * 12 * 768 * 768 / 1e9;
    QVERIFY(std::abs(parts["products_gflop"].toDouble() + report["gflop_attention"].toDouble() +
                     patchEmbedding - report["gflop"].toDouble()) < 1e-9);
  }

  void forwardRefusesAMissingCudaDevice() {
    if (at::hasCUDA()) QSKIP("this machine has CUDA");
    QTemporaryDir dir;
    const test::ProcessResult r =
        test::runCli({"forward", "--model", fixturePath("pose", "model.safetensors"), "--input",
                      fixturePath("pose", "io.safetensors"), "--output", dir.filePath("out.safetensors"),
                      "--device", "cuda:0"});
    QCOMPARE(r.exitCode, 1);
    QVERIFY2(r.err.trimmed().count('\n') == 0 && r.err.contains("cuda:0"), qPrintable(describe(r)));
  }

  void forwardNeedsATensorNamedInput() {
    QTemporaryDir dir;
    const QString input = dir.filePath("no_input.safetensors");
    saveSafetensors(input.toStdString(), {{"pixels", at::zeros({1, 3, 64, 48})}});
    const test::ProcessResult r =
        test::runCli({"forward", "--model", fixturePath("backbone", "model.safetensors"), "--input", input,
                      "--output", dir.filePath("out.safetensors")});
    QCOMPARE(r.exitCode, 1);
    QVERIFY2(r.err.contains("'input'") && r.err.contains("pixels"), qPrintable(describe(r)));
    QVERIFY(!QFile::exists(dir.filePath("out.safetensors")));
  }
};

QTEST_APPLESS_MAIN(TestCliModel)
#include "test_cli_model.moc"
