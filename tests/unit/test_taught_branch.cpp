// The two-branch head that keeps what fine-tuning is not taught: at the start it predicts what the
// starting head does, its untaught outputs read only the untouched starting branch, and what trains is
// exactly the copy feeding the taught outputs.

#include "finetune/taught_branch.h"
#include "sapiens/model/model.h"
#include "sapiens/model/parameter_layout.h"
#include "test_support.h"

#include <ATen/ATen.h>

#include <QtTest>

using namespace sapiens;

namespace {

Model loadFp32(const std::string& task) {
  ModelOptions options;
  options.dtype = at::kFloat;
  return Model::load(test::fixture("golden/" + task + "/model.safetensors"), options);
}

std::map<std::string, at::Tensor> headTensors(const Model& model) {
  std::map<std::string, at::Tensor> tensors;
  for (auto& [name, tensor] : model.headParameters()) tensors[name] = tensor.detach();
  return tensors;
}

// Features of the backbone's shape for `model` (B, C, H/16, W/16) from a real picture size.
at::Tensor someFeatures(const Model& model) {
  at::manual_seed(3);
  const at::Tensor input = at::randn({1, 3, 256, 192});
  return model.backboneFeatures(input);
}

}  // namespace

class TestTaughtBranch : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void startsAsTheStartingHeadAndTrainsOnlyTheCopy_data() {
    QTest::addColumn<QString>("task");
    QTest::newRow("pose") << "pose";
    QTest::newRow("seg") << "seg";
  }

  void startsAsTheStartingHeadAndTrainsOnlyTheCopy() {
    QFETCH(QString, task);
    const std::string name = task.toStdString();
    const Model start = loadFp32(name);
    const Task t = start.task();
    const std::string output = t == Task::Pose ? "pose_heatmaps" : "seg_logits";
    const std::int64_t outputs = start.architecture().head.outChannels;
    at::Tensor taught = at::zeros({outputs}, at::kBool);
    taught.narrow(0, 1, 3).fill_(true);

    const sapiens::detail::TaughtBranchHead widened =
        sapiens::detail::widenForTaughtOutputs(t, start.architecture().head, headTensors(start), taught);
    for (std::size_t i = 0; i < start.architecture().head.deconvChannels.size(); ++i)
      QCOMPARE(widened.head.deconvChannels[i], 2 * start.architecture().head.deconvChannels[i]);
    QCOMPARE(widened.head.outChannels, start.architecture().head.outChannels);

    Model branched = loadFp32(name);
    branched.setHead(widened.head, widened.tensors, "widened");
    const at::Tensor features = someFeatures(start);
    const at::Tensor before = start.forwardHead(features).get(output);
    const at::Tensor after = branched.forwardHead(features).get(output);
    QVERIFY2(at::allclose(before, after, 1e-4, 1e-5),
             qPrintable(QString("largest difference %1").arg((before - after).abs().max().item<double>())));

    // Changing every trainable entry moves the taught outputs and leaves the others exactly as they were.
    {
      at::NoGradGuard noGrad;
      for (auto& [key, tensor] : branched.headParameters())
        tensor.add_(widened.trainable.at(key) * at::randn_like(tensor) * 0.5);
    }
    const at::Tensor moved = branched.forwardHead(features).get(output);
    const at::Tensor untaught = taught.logical_not().nonzero().view({-1});
    QVERIFY(at::equal(moved.index_select(1, untaught), after.index_select(1, untaught)));
    QVERIFY(!at::allclose(moved.index_select(1, taught.nonzero().view({-1})),
                          after.index_select(1, taught.nonzero().view({-1}))));

    // Every tensor of the widened head says where it trains.
    QCOMPARE(widened.trainable.size(), widened.tensors.size());
  }

  void trainingTheCopyAloneComputesTheTwoBranchHead_data() {
    startsAsTheStartingHeadAndTrainsOnlyTheCopy_data();
  }

  // What training runs (the copy at the starting head's size, the untaught outputs from the starting
  // head) is what the widened head it saves computes, after the copy moved too.
  void trainingTheCopyAloneComputesTheTwoBranchHead() {
    QFETCH(QString, task);
    const Model start = loadFp32(task.toStdString());
    const Task t = start.task();
    at::Tensor taught = at::zeros({start.architecture().head.outChannels}, at::kBool);
    taught.narrow(0, 2, 2).fill_(true);
    sapiens::detail::TaughtBranchTraining training(t, start.architecture().head, headTensors(start), taught);
    const at::Tensor features = someFeatures(start);
    const at::Tensor startingOutputs = training.startingOutputs(features);
    QVERIFY(!startingOutputs.requires_grad());

    const at::Tensor before = training.forward(features, startingOutputs);
    QVERIFY(at::allclose(before, startingOutputs, 1e-4, 1e-5));
    {
      at::NoGradGuard noGrad;
      for (at::Tensor& tensor : training.trainedTensors()) tensor.add_(at::randn_like(tensor) * 0.5);
    }
    training.copyChanged();
    const at::Tensor moved = training.forward(features, startingOutputs);
    QVERIFY(moved.requires_grad());  // what trains is the copy
    // Starting outputs handed over (a temporary, as the trainer's stacked batch) hold the result in place:
    // the same values, and a differentiable result.
    const at::Tensor handedOver = training.forward(features, startingOutputs.clone());
    QVERIFY(handedOver.requires_grad());
    QVERIFY(at::equal(handedOver.detach(), moved.detach()));
    Model branched = loadFp32(task.toStdString());
    branched.setHead(training.widened().head, training.widened().tensors, "widened");
    const at::Tensor widenedOutputs = branched.forwardHead(features).get(training.outputName());
    QVERIFY2(at::allclose(moved.detach(), widenedOutputs, 1e-4, 1e-4),
             qPrintable(QString("largest difference %1")
                            .arg((moved.detach() - widenedOutputs).abs().max().item<double>())));
    const at::Tensor untaught = taught.logical_not().nonzero().view({-1});
    QVERIFY(at::equal(moved.detach().index_select(1, untaught), startingOutputs.index_select(1, untaught)));
    QVERIFY(!at::allclose(moved.detach(), startingOutputs, 1e-3, 1e-3));
  }

  void refusesWhatItCannotWiden() {
    const Model normal = loadFp32("normal");
    QVERIFY_EXCEPTION_THROWN(
        sapiens::detail::widenForTaughtOutputs(Task::Normal, normal.architecture().head, headTensors(normal),
                                               at::ones({3}, at::kBool)),
        std::invalid_argument);
    const Model pose = loadFp32("pose");
    QVERIFY_EXCEPTION_THROWN(
        sapiens::detail::widenForTaughtOutputs(Task::Pose, pose.architecture().head, headTensors(pose),
                                               at::ones({5}, at::kBool)),
        std::invalid_argument);
  }
};

QTEST_APPLESS_MAIN(TestTaughtBranch)
#include "test_taught_branch.moc"
