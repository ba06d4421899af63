// Hostile checkpoints through Model::load: files that are not safetensors, header bombs, NaN/Inf weights,
// a 4K-tokenizer backbone fed a size off its grid. Each is refused with one line naming the file (and the
// tensor), quickly, never a crash. The format's own corner cases are in test_safetensors, the layout and
// task checks in test_model_loading.

#include "sapiens/finetune/finetuned_model_file.h"
#include "sapiens/model/model.h"
#include "sapiens/model/model_error.h"
#include "sapiens/model/safetensors.h"
#include "sapiens/model/safetensors_torch.h"
#include "test_support.h"

#include <ATen/ATen.h>
#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>

#include <QElapsedTimer>
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>
#include <limits>

using namespace sapiens;

namespace {

std::string modelPath(const std::string& folder) {
  return test::fixture("golden/" + folder + "/model.safetensors");
}

// Every tensor of a file, in its stored dtype, as writable copies.
NamedTensors readAll(const std::string& path) {
  const SafetensorsFile file = SafetensorsFile::open(path);
  NamedTensors tensors;
  for (const TensorEntry& entry : file.tensors())
    tensors.emplace_back(entry.name, loadTensor(file, entry).clone());
  return tensors;
}

void writeBytes(const QString& path, const QByteArray& bytes) {
  QFile file(path);
  QVERIFY(file.open(QIODevice::WriteOnly));
  QCOMPARE(file.write(bytes), qint64(bytes.size()));
}

QByteArray littleEndian64(std::uint64_t value) {
  QByteArray bytes(8, 0);
  for (int i = 0; i < 8; ++i) bytes[i] = char((value >> (8 * i)) & 0xFF);
  return bytes;
}

// The message of the SafetensorsError or ModelFormatError `action` throws; "" when none is thrown.
template <typename Action>
QString loadError(Action action) {
  try {
    action();
  } catch (const SafetensorsError& e) {
    return QString::fromUtf8(e.what());
  } catch (const ModelFormatError& e) {
    return QString::fromUtf8(e.what());
  }
  return {};
}

}  // namespace

class TestCheckpointAbuse : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void filesThatAreNotCheckpointsAreRefused_data() {
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<QString>("reason");
    std::vector<uchar> png;
    cv::imencode(".png", cv::Mat(32, 32, CV_8UC3, cv::Scalar(1, 2, 3)), png);
    QTest::newRow("a PNG") << QByteArray(reinterpret_cast<const char*>(png.data()), int(png.size()))
                           << QStringLiteral("absurd");
    QTest::newRow("a text file") << QByteArray("this is not a checkpoint\n").repeated(40)
                                 << QStringLiteral("absurd");
    // A PyTorch .pt/.bin (zip) renamed: "PK\3\4" makes a header length in the exabytes.
    QTest::newRow("a zip (PyTorch .pt)")
        << (QByteArray("PK\x03\x04\x14\0\0\0", 8) + QByteArray(500, 'z')) << QStringLiteral("absurd");
    // Header bombs: lengths that would make a reader allocate gigabytes before seeing any JSON.
    QTest::newRow("header length 2^62")
        << (littleEndian64(std::uint64_t{1} << 62) + QByteArray(64, '{')) << QStringLiteral("absurd");
    QTest::newRow("header length just under the limit, file small")
        << (littleEndian64(99'000'000) + QByteArray("{}")) << QStringLiteral("goes beyond the file");
    // Valid length, but JSON nested 200000 deep (a recursive parser would overflow the stack).
    const QByteArray nested = QByteArray(200000, '[') + QByteArray(200000, ']');
    QTest::newRow("deeply nested header")
        << (littleEndian64(std::uint64_t(nested.size())) + nested) << QStringLiteral("not a JSON object");
    const QByteArray nestedObject = "{\"w\": " + nested + "}";
    QTest::newRow("deeply nested entry")
        << (littleEndian64(std::uint64_t(nestedObject.size())) + nestedObject) << QStringLiteral("w");
    QTest::newRow("empty header") << littleEndian64(0) << QStringLiteral("JSON");
    QTest::newRow("no tensors") << (littleEndian64(2) + QByteArray("{}")) << QStringLiteral("");
  }

  void filesThatAreNotCheckpointsAreRefused() {
    QFETCH(QByteArray, bytes);
    QFETCH(QString, reason);
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("hostile.safetensors"));
    writeBytes(path, bytes);
    QElapsedTimer timer;
    timer.start();
    const QString error = loadError([&] { Model::load(path.toStdString()); });
    QVERIFY2(timer.elapsed() < 2000, qPrintable(QString::number(timer.elapsed())));
    QVERIFY2(error.contains(QStringLiteral("hostile.safetensors")), qPrintable(error));
    QVERIFY2(error.contains(reason), qPrintable(error));
    QVERIFY2(!error.contains('\n'), qPrintable(error));
  }

  // NaN or infinite weights give NaN outputs and no error; they are refused at load, naming the tensor.
  void nonFiniteWeightsAreRefusedNamingTheTensor_data() {
    QTest::addColumn<QString>("fixture");
    QTest::addColumn<QString>("key");
    QTest::addColumn<double>("value");
    QTest::addColumn<QString>("count");
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double inf = std::numeric_limits<double>::infinity();
    QTest::newRow("NaN in a backbone weight")
        << QStringLiteral("pose") << QStringLiteral("backbone.blocks.2.attn.wq.weight") << nan
        << QStringLiteral("1 NaN and 0 infinite");
    QTest::newRow("+Inf in a head bias")
        << QStringLiteral("seg") << QStringLiteral("decode_head.conv_seg.bias") << inf
        << QStringLiteral("0 NaN and 1 infinite");
    QTest::newRow("-Inf in a bf16 file")
        << QStringLiteral("backbone_bf16") << QStringLiteral("blocks.0.ffn.w3.weight") << -inf
        << QStringLiteral("0 NaN and 1 infinite");
    QTest::newRow("NaN in the bf16 RoPE periods")
        << QStringLiteral("backbone") << QStringLiteral("rope_embed.periods") << nan
        << QStringLiteral("1 NaN and 0 infinite");
  }

  void nonFiniteWeightsAreRefusedNamingTheTensor() {
    QFETCH(QString, fixture);
    QFETCH(QString, key);
    QFETCH(double, value);
    QFETCH(QString, count);
    NamedTensors tensors = readAll(modelPath(fixture.toStdString()));
    bool found = false;
    for (auto& [name, tensor] : tensors) {
      if (name != key.toStdString()) continue;
      tensor.view({-1})[tensor.numel() / 2].fill_(value);
      found = true;
    }
    QVERIFY(found);
    QTemporaryDir dir;
    const std::string path = dir.filePath(QStringLiteral("damaged.safetensors")).toStdString();
    saveSafetensors(path, tensors);
    const QString error = loadError([&] { Model::load(path); });
    QVERIFY2(error.startsWith(QStringLiteral("damaged.safetensors: tensor '") + key + "'"),
             qPrintable(error));
    QVERIFY2(error.contains(count), qPrintable(error));
  }

  // Large finite values are not mistaken for infinities (a sum over them may overflow; the elements don't).
  void largeFiniteWeightsStillLoad() {
    NamedTensors tensors = readAll(modelPath("seg"));
    for (auto& [name, tensor] : tensors) {
      if (name == "decode_head.conv_seg.weight") tensor.fill_(3.0e38);
    }
    QTemporaryDir dir;
    const std::string path = dir.filePath(QStringLiteral("large.safetensors")).toStdString();
    saveSafetensors(path, tensors);
    QCOMPARE(loadError([&] { Model::load(path); }), QString());
  }

  // A fine-tuned head saved alone is checked the same way when it is put on its base.
  void nonFiniteFinetunedHeadIsRefused() {
    Model model = Model::load(modelPath("seg"));
    model.parameters().at("decode_head.conv_seg.weight").view({-1})[3].fill_(std::nan(""));
    QTemporaryDir dir;
    const std::string path = dir.filePath(QStringLiteral("head.safetensors")).toStdString();
    saveFinetunedModel(path, model, false, {{"base_checkpoint", modelPath("seg")}});
    const QString error = loadError([&] { loadFinetunedModel(path, {}, {}); });
    QVERIFY2(error.startsWith(QStringLiteral("head.safetensors: tensor 'decode_head.conv_seg.weight'")),
             qPrintable(error));
  }

  // No 4K checkpoint is small enough to commit: a random one with the 4K tokenizer is made here, saved,
  // loaded back (the tokenizer is inferred from its tensors) and given sizes off and on its window grid.
  void tokenizerBackboneRefusesSizesOffItsGrid() {
    Architecture arch;
    arch.backbone.embedDim = 16;
    arch.backbone.numLayers = 1;
    arch.backbone.numHeads = 2;
    arch.backbone.headDim = 8;
    arch.backbone.ffnDim = 32;
    arch.backbone.kvHeads = {2};
    arch.backbone.tokenizer = TokenizerArch{1, 4, 32};
    const Model random = Model::random(arch, {}, 5);
    NamedTensors tensors(random.parameters().begin(), random.parameters().end());
    QTemporaryDir dir;
    const std::string path = dir.filePath(QStringLiteral("tiny_4k.safetensors")).toStdString();
    saveSafetensors(path, tensors);
    const Model model = Model::load(path);
    QCOMPARE(model.architecture().backbone.tokenizer.layers, 1);
    QCOMPARE(model.architecture().backbone.inputMultiple(), 64);
    // 1040x784 suits the other backbones (multiples of 16) but not 4 x 4 windows of 16-pixel patches.
    for (const auto& size : {std::pair<int, int>{1040, 784}, std::pair<int, int>{48, 64}}) {
      try {
        model.forward(at::zeros({1, 3, size.first, size.second}));
        QFAIL(qPrintable(QStringLiteral("accepted %1x%2").arg(size.first).arg(size.second)));
      } catch (const ModelRunError& e) {
        QVERIFY2(QString(e.what()).contains(QStringLiteral("multiples of 64")), e.what());
      }
    }
    const at::Tensor featmap = model.forward(at::zeros({1, 3, 128, 64})).get("backbone_featmap");
    QCOMPARE(featmap.sizes(), (at::IntArrayRef{1, 16, 2, 1}));
    QVERIFY(at::isfinite(featmap).all().item<bool>());
  }
};

QTEST_APPLESS_MAIN(TestCheckpointAbuse)
#include "test_checkpoint_abuse.moc"
