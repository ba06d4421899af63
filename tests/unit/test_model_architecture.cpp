// Architecture description: the official size table, the exact state-dict layout (checked against the
// documented tensor and element totals), and inference of every dimension from a checkpoint's shapes.

#include "sapiens/model/architecture.h"
#include "sapiens/model/architecture_inference.h"
#include "sapiens/model/model_error.h"
#include "sapiens/model/parameter_layout.h"
#include "sapiens/model/safetensors.h"
#include "test_support.h"

#include <QtTest>
#include <nlohmann/json.hpp>

#include <fstream>

using namespace sapiens;

namespace {

TensorShapes headerShapes(const std::string& path) {
  const SafetensorsFile file = SafetensorsFile::open(path);
  TensorShapes shapes;
  for (const TensorEntry& entry : file.tensors()) shapes[entry.name] = entry.shape;
  return shapes;
}

TensorShapes layoutShapes(const Architecture& arch) {
  TensorShapes shapes;
  for (const ParameterSpec& spec : expectedParameters(arch)) shapes[spec.name] = spec.shape;
  return shapes;
}

std::vector<int> ints(const nlohmann::json& value) {
  return value.get<std::vector<int>>();
}

}  // namespace

class TestModelArchitecture : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void goldenModelsInferredWithoutConfiguration_data() {
    QTest::addColumn<QString>("folder");
    for (const char* f : {"backbone", "backbone_bf16", "pose", "seg", "normal", "albedo", "pointmap"}) {
      QTest::newRow(f) << QString(f);
    }
  }

  void goldenModelsInferredWithoutConfiguration() {
    QFETCH(QString, folder);
    const std::string dir = test::fixture("golden/" + folder.toStdString());
    std::ifstream configFile(dir + "/config.json");
    const nlohmann::json config = nlohmann::json::parse(configFile);
    const Architecture arch =
        inferArchitecture(headerShapes(dir + "/model.safetensors"), "model.safetensors");

    QCOMPARE(QString(taskName(arch.task).data()), QString::fromStdString(config["task"].get<std::string>()));
    const nlohmann::json& bb = config["backbone"];
    const BackboneArch& b = arch.backbone;
    QCOMPARE(b.embedDim, bb["embed_dims"].get<int>());
    QCOMPARE(b.numLayers, bb["num_layers"].get<int>());
    QCOMPARE(b.numHeads, bb["num_heads"].get<int>());
    QCOMPARE(b.headDim, bb["head_dim"].get<int>());
    QCOMPARE(b.ffnDim, bb["feedforward_channels"].get<int>());
    QCOMPARE(b.kvHeads, ints(bb["num_kv_heads_per_block"]));
    QCOMPARE(b.storageTokens, bb["n_storage_tokens"].get<int>());
    QCOMPARE(b.patchSize, bb["patch_size"].get<int>());
    QCOMPARE(b.tokenizer.layers, bb["num_tokenizer_layers"].get<int>());
    QVERIFY(b.qkNorm && b.qkvBias && b.layerScale);
    // The values the fixtures were built with, spelled out.
    QCOMPARE(b.embedDim, 32);
    QCOMPARE(b.numLayers, 18);
    QCOMPARE(b.numHeads, 4);
    QCOMPARE(b.headDim, 8);
    std::vector<int> kv(18, 4);
    kv[8] = kv[9] = 2;
    QCOMPARE(b.kvHeads, kv);
    QCOMPARE(b.firstGqaBlock(), 8);

    if (arch.task != Task::Backbone) {
      const nlohmann::json& kw = config["head"]["kwargs"];
      const HeadArch& h = arch.head;
      if (arch.task == Task::Pose || arch.task == Task::Seg) {
        QCOMPARE(h.deconvChannels, ints(kw["deconv_out_channels"]));
        QCOMPARE(h.deconvKernels, ints(kw["deconv_kernel_sizes"]));
        QCOMPARE(h.outChannels,
                 arch.task == Task::Pose ? kw["out_channels"].get<int>() : kw["num_classes"].get<int>());
      } else {
        QCOMPARE(h.upsampleChannels, ints(kw["upsample_channels"]));
        QCOMPARE(h.outChannels, 3);
      }
      QCOMPARE(h.convChannels, ints(kw["conv_out_channels"]));
      QCOMPARE(h.convKernels, ints(kw["conv_kernel_sizes"]));
      if (arch.task == Task::Pointmap) {
        QCOMPARE(h.scaleConvChannels, ints(kw["scale_conv_out_channels"]));
        QCOMPARE(h.scaleConvKernels, ints(kw["scale_conv_kernel_sizes"]));
        QCOMPARE(h.scaleMlp, ints(kw["scale_final_layer"]));
      }
    }
    QVERIFY(!officialName(arch).has_value());
    QVERIFY(!officialBackboneSize(arch.backbone).has_value());
    const LayoutProblems problems = checkLayout(headerShapes(dir + "/model.safetensors"), arch);
    QVERIFY2(problems.empty(), problems.summary().c_str());
  }

  // Tensor and element totals of doc tables 1.3 and 2.7 (elements include the periods buffer).
  void officialLayoutsMatchDocumentedTotals_data() {
    QTest::addColumn<QString>("size");
    QTest::addColumn<QString>("task");
    QTest::addColumn<int>("tensors");
    QTest::addColumn<qint64>("elements");
    auto row = [](const char* size, const char* task, int tensors, qint64 elements) {
      QTest::addRow("%s %s", size, task) << QString(size) << QString(task) << tensors << elements;
    };
    row("0.1b", "backbone", 210, 113993488);
    row("0.4b", "backbone", 414, 395450384);
    row("0.8b", "backbone", 550, 814283540);
    row("1b", "backbone", 686, 1455474192);
    row("5b", "backbone", 958, 5066902995);
    row("1b-4k", "backbone", 744, 1606588944);
    row("0.4b", "pose", 424, 425677380);
    row("0.4b", "seg", 424, 406601709);
    row("0.4b", "normal", 432, 453357747);
    row("0.4b", "albedo", 440, 453360547);
    row("0.4b", "pointmap", 444, 528675380);
    row("0.8b", "pose", 560, 848704840);
    row("0.8b", "seg", 560, 827532017);
    row("0.8b", "normal", 568, 884577463);
    row("0.8b", "albedo", 576, 884580519);
    row("0.8b", "pointmap", 580, 967366200);
    row("1b", "pose", 696, 1519780164);
    row("1b", "seg", 696, 1470819821);
    row("1b", "normal", 704, 1539334323);
    row("1b", "albedo", 712, 1539337635);
    row("1b", "pointmap", 716, 1629594164);
    row("5b", "pose", 968, 5120198663);
    row("5b", "seg", 968, 5089588656);
    row("5b", "normal", 976, 5316358294);
    row("5b", "albedo", 984, 5316147174);
    row("5b", "pointmap", 988, 5348345879);
  }

  void officialLayoutsMatchDocumentedTotals() {
    QFETCH(QString, size);
    QFETCH(QString, task);
    QFETCH(int, tensors);
    QFETCH(qint64, elements);
    const Architecture arch = officialArchitecture(size.toStdString(), *parseTask(task.toStdString()));
    QCOMPARE(static_cast<int>(expectedParameters(arch).size()), tensors);
    QCOMPARE(static_cast<qint64>(parameterCount(arch)), elements);

    // Inference recovers the official architecture from the layout's shapes alone, and names it.
    const Architecture inferred = inferArchitecture(layoutShapes(arch), "layout");
    QVERIFY(inferred == arch);
    const std::string stem = size == "1b-4k" ? "sapiens2_1b_4k" : "sapiens2_" + size.toStdString();
    QCOMPARE(QString::fromStdString(officialName(inferred).value_or("custom")),
             QString::fromStdString(stem + "_" +
                                    (task == "backbone" ? std::string("pretrain") : task.toStdString())));
  }

  void groupedQueryAttentionFollowsTheOfficialRule() {
    const BackboneArch b04 = officialBackbone("0.4b");
    for (int i = 0; i < 24; ++i) QCOMPARE(b04.kvHeads[i], i >= 8 && i < 16 ? 8 : 16);
    QCOMPARE(officialBackbone("0.1b").firstGqaBlock(), -1);
    const BackboneArch b5 = officialBackbone("5b");
    QCOMPARE(b5.headDim, 76);
    QCOMPARE(b5.kvHeads[47], 16);
    QCOMPARE(b5.kvHeads[48], 32);
    QCOMPARE(officialBackbone("1b-4k").inputMultiple(), 64);
  }

  void unreleasedCombinationsAreRefused() {
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, officialArchitecture("0.1b", Task::Pose));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, officialBackbone("2b"));
  }

  void customHeadOnOfficialBackboneIsNotNamed() {
    Architecture arch = officialArchitecture("0.4b", Task::Seg);
    arch.head.outChannels = 5;
    QVERIFY(!officialName(arch).has_value());
    QCOMPARE(QString::fromStdString(officialBackboneSize(arch.backbone).value_or("")), QString("0.4b"));
  }

  void foreignTensorsAreNotMistakenForSapiens2() {
    const TensorShapes shapes = {{"encoder.layer.0.weight", {4, 4}}, {"encoder.layer.0.bias", {4}}};
    try {
      inferArchitecture(shapes, "other.safetensors");
      QFAIL("no error");
    } catch (const ModelFormatError& e) {
      const QString message = e.what();
      QVERIFY2(message.contains("other.safetensors") && message.contains("encoder.layer.0.bias"), e.what());
    }
  }

  void headWithoutBackbonePrefixIsRefused() {
    TensorShapes shapes = layoutShapes(officialArchitecture("0.4b", Task::Backbone));
    shapes["decode_head.conv_seg.weight"] = {29, 64, 1, 1};
    QVERIFY_THROWS_EXCEPTION(ModelFormatError, inferArchitecture(shapes, "x"));
  }
};

QTEST_APPLESS_MAIN(TestModelArchitecture)
#include "test_model_architecture.moc"
