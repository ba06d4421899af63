// Loading Sapiens2 checkpoints: strictness (every problem named), task checks, dtype handling, devices,
// random models, input validation and the parameters' role for fine-tuning.

#include "sapiens/model/architecture_inference.h"
#include "sapiens/model/compute_options.h"
#include "sapiens/model/model.h"
#include "sapiens/model/model_error.h"
#include "sapiens/model/parameter_layout.h"
#include "sapiens/model/safetensors_torch.h"
#include "sapiens/model/tensor_difference.h"
#include "test_support.h"

#include <ATen/ATen.h>
#include <QTemporaryDir>
#include <QtTest>

using namespace sapiens;

namespace {

std::string modelPath(const std::string& folder) {
  return test::fixture("golden/" + folder + "/model.safetensors");
}

NamedTensors readAll(const std::string& path) {
  const SafetensorsFile file = SafetensorsFile::open(path);
  NamedTensors tensors;
  for (const TensorEntry& entry : file.tensors())
    tensors.emplace_back(entry.name, loadTensor(file, entry).clone());
  return tensors;
}

at::Tensor fixtureInput(const std::string& folder) {
  for (auto& [name, tensor] : readAll(test::fixture("golden/" + folder + "/io.safetensors"))) {
    if (name == "input") return tensor;
  }
  return {};
}

// Runs `load` and returns the ModelFormatError message ("" if nothing was thrown).
template <typename Load>
QString formatError(Load load) {
  try {
    load();
  } catch (const ModelFormatError& e) {
    return QString::fromUtf8(e.what());
  }
  return {};
}

}  // namespace

class TestModelLoading : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void taskMismatchSaysWhatTheFileIs() {
    ModelOptions options;
    options.expectedTask = Task::Pose;
    QCOMPARE(formatError([&] { Model::load(modelPath("seg"), options); }),
             QString("model.safetensors is a seg checkpoint (29 classes), not pose"));
    options.expectedTask = Task::Backbone;
    QCOMPARE(formatError([&] { Model::load(modelPath("pose"), options); }),
             QString("model.safetensors is a pose checkpoint (308 keypoints), not backbone"));
    options.expectedTask = Task::Normal;
    QCOMPARE(formatError([&] { Model::load(modelPath("backbone"), options); }),
             QString("model.safetensors is a backbone-only (pretrain) checkpoint, not normal"));
    options.expectedTask = Task::Pointmap;
    QCOMPARE(Model::load(modelPath("pointmap"), options).task(), Task::Pointmap);
  }

  void brokenCheckpointNamesEveryProblem() {
    NamedTensors tensors = readAll(modelPath("pose"));
    NamedTensors broken;
    for (auto& [name, tensor] : tensors) {
      if (name == "backbone.blocks.3.attn.wq.bias" || name == "decode_head.conv_layers.3.bias") continue;
      if (name == "backbone.blocks.5.ffn.w3.weight") {
        broken.emplace_back(name, tensor.narrow(1, 0, 64).contiguous());
      } else if (name == "decode_head.conv_pose.bias") {
        broken.emplace_back(name, tensor.narrow(0, 0, 300).contiguous());
      } else {
        broken.emplace_back(name, tensor);
      }
    }
    broken.emplace_back("backbone.blocks.3.attn.extra_scale", at::ones({4}));
    QTemporaryDir dir;
    const std::string path = dir.filePath("broken_pose.safetensors").toStdString();
    saveSafetensors(path, broken);

    const QString message = formatError([&] { Model::load(path); });
    QVERIFY2(message.startsWith("broken_pose.safetensors "), qPrintable(message));
    for (const char* name : {"backbone.blocks.3.attn.wq.bias", "decode_head.conv_layers.3.bias",
                             "backbone.blocks.3.attn.extra_scale", "backbone.blocks.5.ffn.w3.weight",
                             "decode_head.conv_pose.bias"}) {
      QVERIFY2(message.contains(name), qPrintable(QString("%1 not named in: %2").arg(name, message)));
    }
    QVERIFY2(message.contains("2 missing") && message.contains("1 unexpected") &&
                 message.contains("2 shape mismatches"),
             qPrintable(message));
    QVERIFY2(message.contains("[32, 64], expected [32, 128]"), qPrintable(message));
    QVERIFY(!message.contains('\n'));
  }

  void bf16WeightsBecomeFloat32PeriodsStayBf16() {
    const Model bf16 = Model::load(modelPath("backbone_bf16"));
    const Model fp32 = Model::load(modelPath("backbone"));
    QCOMPARE(bf16.dtype(), at::kFloat);
    const at::Tensor& w = bf16.parameters().at("blocks.0.attn.wq.weight");
    QCOMPARE(w.scalar_type(), at::kFloat);
    // Exact widening: the float32 weights hold bf16 values that are the fp32 fixture's weights rounded.
    QVERIFY(at::equal(w, w.to(at::kBFloat16).to(at::kFloat)));
    QVERIFY(at::equal(w, fp32.parameters().at("blocks.0.attn.wq.weight").to(at::kBFloat16).to(at::kFloat)));
    const at::Tensor& periods = bf16.parameters().at("rope_embed.periods");
    QCOMPARE(periods.scalar_type(), at::kBFloat16);
    QCOMPARE(fp32.parameters().at("rope_embed.periods").scalar_type(), at::kBFloat16);
    QVERIFY(at::equal(periods.to(at::kFloat), at::tensor({1.0f, 10.0f})));
  }

  void bf16ComputeStaysCloseToFloat32() {
    ModelOptions options;
    options.dtype = at::kBFloat16;
    const Model model = Model::load(modelPath("pose"), options);
    QCOMPARE(model.parameters().at("backbone.blocks.0.ln1.weight").scalar_type(), at::kBFloat16);
    const at::Tensor input = fixtureInput("pose");
    const at::Tensor got = model.forward(input).get("pose_heatmaps");
    QCOMPARE(got.scalar_type(), at::kBFloat16);
    const at::Tensor reference = Model::load(modelPath("pose")).forward(input).get("pose_heatmaps");
    const TensorDifference d = tensorDifference(got, reference);
    qInfo("bf16 vs fp32 pose heatmaps: max %.2e mean %.2e", d.maxRelative, d.meanRelative);
    QVERIFY(d.meanRelative < 2e-2);
    QVERIFY(d.maxRelative > 0);  // it really ran in bf16
  }

  void devicesAndDtypesAreParsed() {
    QCOMPARE(resolveDevice("cpu"), c10::Device(c10::kCPU));
    QCOMPARE(parseComputeDtype("bf16"), at::kBFloat16);
    QCOMPARE(parseComputeDtype("FP16"), at::kHalf);
    // auto: what the CPU's probe chose (fp32 without native bf16), bf16 on CUDA.
    QCOMPARE(defaultComputeDtype(c10::Device(c10::kCPU)), cpuAutoPrecision().dtype);
    if (!cpuBf16Support().native() && !cpuBf16Support().forced)
      QCOMPARE(defaultComputeDtype(c10::Device(c10::kCPU)), at::kFloat);
    QVERIFY(!parseComputeDtypeChoice("auto"));
    QVERIFY(!parseComputeDtypeChoice("AUTO"));
    QVERIFY(!parseComputeDtypeChoice(""));
    QVERIFY(parseComputeDtypeChoice("bf16") == at::kBFloat16);
    QCOMPARE(resolveComputeDtype("auto", c10::Device(c10::kCPU)), cpuAutoPrecision().dtype);
    QCOMPARE(resolveComputeDtype("fp32", c10::Device(c10::kCPU)), at::kFloat);
    QVERIFY_THROWS_EXCEPTION(ModelRunError, parseComputeDtype("auto"));  // needs a device
    QVERIFY_THROWS_EXCEPTION(ModelRunError, resolveDevice("gpu"));
    QVERIFY_THROWS_EXCEPTION(ModelRunError, resolveDevice("cuda:x"));
    QVERIFY_THROWS_EXCEPTION(ModelRunError, parseComputeDtype("int8"));
    ModelOptions halfOnCpu;
    halfOnCpu.dtype = at::kHalf;
    QVERIFY_THROWS_EXCEPTION(ModelRunError, Model::load(modelPath("backbone"), halfOnCpu));
    if (!at::hasCUDA()) {
      QCOMPARE(resolveDevice("auto"), c10::Device(c10::kCPU));
      try {
        resolveDevice("cuda:0");
        QFAIL("cuda accepted without CUDA");
      } catch (const ModelRunError& e) {
        QVERIFY2(QString(e.what()).contains("cuda:0"), e.what());
      }
    } else {
      QCOMPARE(resolveDevice("auto"), c10::Device(c10::kCUDA, 0));
    }
  }

  void randomModelsFollowTheLayoutAndSeed() {
    const Architecture arch = Model::load(modelPath("pose")).architecture();
    const Model a = Model::random(arch, {}, 7);
    const Model b = Model::random(arch, {}, 7);
    const Model c = Model::random(arch, {}, 8);
    const auto specs = expectedParameters(arch);
    QCOMPARE(a.parameters().size(), specs.size());
    bool anyDifferent = false;
    for (const ParameterSpec& spec : specs) {
      const at::Tensor& t = a.parameters().at(spec.name);
      QCOMPARE(t.sizes().vec(), spec.shape);
      QVERIFY(at::equal(t, b.parameters().at(spec.name)));
      anyDifferent = anyDifferent || !at::equal(t, c.parameters().at(spec.name));
    }
    QVERIFY(anyDifferent);
    QVERIFY(at::equal(a.parameters().at("backbone.rope_embed.periods").to(at::kFloat),
                      at::tensor({1.0f, 10.0f})));
    const at::Tensor heatmaps = a.forward(at::randn({1, 3, 64, 48})).get("pose_heatmaps");
    QCOMPARE(heatmaps.sizes(), (at::IntArrayRef{1, 308, 16, 12}));
    QVERIFY(at::isfinite(heatmaps).all().item<bool>());
  }

  // Periods are computed on bf16 tensors at init; for head size 80 that gives 2.0 where rounding an fp32
  // computation would give 1.9921875 (doc 1.5) - which is why loading never recomputes them.
  void randomPeriodsUseTheBf16Recipe() {
    Architecture arch;
    arch.backbone.embedDim = 160;
    arch.backbone.numLayers = 1;
    arch.backbone.numHeads = 2;
    arch.backbone.headDim = 80;
    arch.backbone.ffnDim = 64;
    arch.backbone.kvHeads = {2};
    const at::Tensor periods = Model::random(arch).parameters().at("rope_embed.periods").to(at::kFloat);
    QCOMPARE(periods.size(0), 20);
    QCOMPARE(periods[3].item<float>(), 2.0f);
  }

  void unusableInputsAreRefused() {
    const Model model = Model::load(modelPath("backbone"));
    try {
      model.forward(at::zeros({1, 3, 60, 48}));
      QFAIL("accepted 60x48");
    } catch (const ModelRunError& e) {
      QVERIFY2(QString(e.what()).contains("multiples of 16") && QString(e.what()).contains("1x3x60x48"),
               e.what());
    }
    QVERIFY_THROWS_EXCEPTION(ModelRunError, model.forward(at::zeros({1, 1, 64, 48})));
    // The pointmap scale branch is tied to its training resolution (192x144 for this fixture).
    const Model pointmap = Model::load(modelPath("pointmap"));
    try {
      pointmap.forward(at::zeros({1, 3, 64, 48}));
      QFAIL("pointmap accepted 64x48");
    } catch (const ModelRunError& e) {
      QVERIFY2(QString(e.what()).contains("needs 32 features"), e.what());
    }
  }

  // parameters() are the tensors the forward pass reads, and gradients flow when asked for.
  void parametersAreLiveAndTrainable() {
    Model model = Model::load(modelPath("seg"));
    const at::Tensor input = fixtureInput("seg");
    at::Tensor& weight = model.parameters().at("decode_head.conv_seg.weight");
    weight.requires_grad_(true);
    ForwardOptions training;
    training.inferenceMode = false;
    const at::Tensor logits = model.forward(input, training).get("seg_logits");
    logits.sum().backward();
    QVERIFY(weight.grad().defined());
    QVERIFY(weight.grad().abs().sum().item<double>() > 0);
    weight.requires_grad_(false);

    {
      at::NoGradGuard noGrad;
      weight.zero_();
      model.parameters().at("decode_head.conv_seg.bias").fill_(0.25);
    }
    const at::Tensor constant = model.forward(input).get("seg_logits");
    QVERIFY(at::allclose(constant, at::full_like(constant, 0.25)));
  }

  // The 4K tokenizer runs windows in chunks of 1024; a chunk spanning two images must not mix them.
  void tokenizerChunksKeepImagesApart() {
    Architecture arch;
    arch.backbone.embedDim = 16;
    arch.backbone.numLayers = 1;
    arch.backbone.numHeads = 2;
    arch.backbone.headDim = 8;
    arch.backbone.ffnDim = 32;
    arch.backbone.kvHeads = {2};
    arch.backbone.tokenizer = TokenizerArch{1, 4, 32};
    const Model model = Model::random(arch, {}, 3);
    // 3072x2048 -> 192x128 patches -> 48x32 = 1536 windows per image, 3072 for the batch.
    const at::Tensor input = at::randn({2, 3, 3072, 2048}, at::TensorOptions().dtype(at::kFloat));
    const at::Tensor both = model.forward(input).get("backbone_featmap");
    QCOMPARE(both.sizes(), (at::IntArrayRef{2, 16, 48, 32}));
    for (int64_t i = 0; i < 2; ++i) {
      const at::Tensor alone = model.forward(input.narrow(0, i, 1)).get("backbone_featmap");
      const TensorDifference d = tensorDifference(alone, both.narrow(0, i, 1));
      QVERIFY2(d.maxRelative < 1e-3, qPrintable(QString("image %1 differs by %2").arg(i).arg(d.maxRelative)));
    }
  }
};

QTEST_APPLESS_MAIN(TestModelLoading)
#include "test_model_loading.moc"
