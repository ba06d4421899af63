// The untrained demo weights: generated deterministically, marked in their metadata, loadable by the
// ordinary loader (architecture inferred from the official key layout), found through the search path.

#include "sapiens/common/build_info.h"
#include "sapiens/common/log.h"
#include "sapiens/model/architecture.h"
#include "sapiens/model/checkpoint_locator.h"
#include "sapiens/model/demo_weights.h"
#include "sapiens/model/model.h"
#include "sapiens/model/parameter_layout.h"
#include "sapiens/model/safetensors.h"
#include "sapiens/model/task_checkpoints.h"
#include "test_support.h"

#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

#include <cstdlib>
#include <filesystem>

using namespace sapiens;

namespace {

QByteArray readAll(const std::string& path) {
  QFile file(QString::fromStdString(path));
  if (!file.open(QIODevice::ReadOnly)) return {};
  return file.readAll();
}

// Sets an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    ::setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_.empty())
      ::unsetenv(name_);
    else
      ::setenv(name_, old_.c_str(), 1);
  }

 private:
  const char* name_;
  std::string old_;
};

}  // namespace

class TestDemoWeights : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void generationIsDeterministicAndMatchesTheBuild() {
    QTemporaryDir a, b;
    const auto first = demo::writeDemoCheckpoints(a.path().toStdString());
    const auto second = demo::writeDemoCheckpoints(b.path().toStdString());
    QCOMPARE(first.size(), std::size_t{6});  // every head, matting included
    QCOMPARE(second.size(), first.size());
    for (std::size_t i = 0; i < first.size(); ++i) {
      const QByteArray bytes = readAll(first[i]);
      QVERIFY2(bytes.size() > 1000000, first[i].c_str());
      QVERIFY2(bytes == readAll(second[i]), first[i].c_str());
      // The build wrote the same bytes with the same code (core/tools/generate_demo_weights.cpp).
      const std::string built =
          demo::demoCheckpointPath(SAPIENS_DEMO_WEIGHTS_DIR_BUILD, demo::demoTasks()[i]);
      QVERIFY2(bytes == readAll(built), built.c_str());
    }
  }

  void everyTaskLoadsAsAMarkedSmallSapiens2() {
    for (Task task : demo::demoTasks()) {
      const std::string path = demo::demoCheckpointPath(SAPIENS_DEMO_WEIGHTS_DIR_BUILD, task);
      const Model model = Model::load(path, {});
      const std::string name(taskName(task));
      QVERIFY2(model.isDemoWeights(), name.c_str());
      QCOMPARE(model.metadata().at(demo::kMetadataKey), std::string("untrained"));
      QCOMPARE(model.metadata().at(demo::kRecipeKey), std::string(demo::kRecipe));
      QCOMPARE(model.metadata().at("sapiens_demo_task"), name);
      QVERIFY(model.metadata().at("description").find("UNTRAINED") != std::string::npos);
      // Inferred from the tensors alone, exactly the demo architecture; not mistaken for a released one.
      QVERIFY2(model.architecture() == demo::demoArchitecture(task), name.c_str());
      QVERIFY(!officialName(model.architecture()));
      QCOMPARE(model.architecture().backbone.firstGqaBlock(), 2);
      // The official key layout, every tensor stored as F32 like the released files.
      const SafetensorsFile file = SafetensorsFile::open(path);
      QCOMPARE(file.tensors().size(), expectedParameters(model.architecture()).size());
      for (const TensorEntry& entry : file.tensors()) {
        QVERIFY2(entry.name.rfind("backbone.", 0) == 0 || entry.name.rfind("decode_head.", 0) == 0,
                 entry.name.c_str());
        QVERIFY2(entry.dtype == StDType::F32, entry.name.c_str());
      }
      QVERIFY(file.find("backbone.rope_embed.periods") != nullptr);
    }
    QVERIFY(!Model::load(test::fixture("golden/seg/model.safetensors"), {}).isDemoWeights());
    QVERIFY_EXCEPTION_THROWN(demo::demoArchitecture(Task::Backbone), std::invalid_argument);
  }

  void lookupPrefersTheEnvironmentAndSkipsForeignFiles() {
    QTemporaryDir dir;
    const std::string root = dir.path().toStdString();
    ScopedEnv env("SAPIENS_DEMO_WEIGHTS_DIR", root);
    QCOMPARE(demo::demoWeightsSearchPath().front(), root);

    // A file with the demo name that is not demo weights (here a golden fixture) is not used.
    const std::string fake = demo::demoCheckpointPath(root, Task::Seg);
    std::filesystem::create_directories(std::filesystem::path(fake).parent_path());
    std::filesystem::copy_file(test::fixture("golden/seg/model.safetensors"), fake);
    QVERIFY(!demo::isCurrentDemoCheckpoint(fake));
    QVERIFY(demo::findOrCreateDemoCheckpoint(Task::Seg) != fake);

    demo::writeDemoCheckpoint(Task::Pose, demo::demoCheckpointPath(root, Task::Pose));
    QCOMPARE(demo::findOrCreateDemoCheckpoint(Task::Pose), demo::demoCheckpointPath(root, Task::Pose));
  }

  // The one order every front end uses: the user's file, else the official one found, else demo weights.
  void eachTaskGetsTheExplicitThenTheFoundThenTheDemoCheckpoint() {
    QTemporaryDir root;
    const std::string found = officialCheckpointPath(root.path().toStdString(), "1b", Task::Seg);
    std::filesystem::create_directories(std::filesystem::path(found).parent_path());
    std::filesystem::copy_file(test::fixture("golden/seg/model.safetensors"), found);
    CheckpointRequest request;
    request.tasks = {Task::Normal, Task::Pose, Task::Seg};
    request.explicitPaths[Task::Pose] = "/my/pose.safetensors";
    request.root = root.path().toStdString();

    std::vector<TaskCheckpoint> resolved = resolveTaskCheckpoints(request);
    QCOMPARE(resolved.size(), std::size_t{3});
    QVERIFY(resolved[0].task == Task::Seg && resolved[0].source == CheckpointSource::Found);
    QCOMPARE(resolved[0].path, found);  // another official size than the preferred 0.4b
    QVERIFY(resolved[1].task == Task::Pose && resolved[1].source == CheckpointSource::Explicit);
    QCOMPARE(resolved[1].path, std::string("/my/pose.safetensors"));
    QVERIFY(resolved[2].task == Task::Normal && resolved[2].source == CheckpointSource::None);
    QVERIFY(resolved[2].path.empty());
    QVERIFY2(QString::fromStdString(resolved[2].error)
                 .contains(QStringLiteral("no normal checkpoint found under ") + root.path()),
             resolved[2].error.c_str());

    request.demoFallback = true;
    request.tasks.push_back(Task::Albedo);
    QStringList warnings;
    const int listener = log::addCallback([&warnings](log::Level level, std::string_view message) {
      if (level >= log::Level::Warn) warnings << QString::fromUtf8(message.data(), int(message.size()));
    });
    resolved = resolveTaskCheckpoints(request);
    log::removeCallback(listener);
    QVERIFY(resolved[2].source == CheckpointSource::DemoWeights);
    QVERIFY(demo::isCurrentDemoCheckpoint(resolved[2].path));
    QVERIFY(resolved[3].task == Task::Albedo && resolved[3].source == CheckpointSource::DemoWeights);
    QVERIFY(resolved[0].source == CheckpointSource::Found);  // found files still win
    // One warning names the tasks on demo weights (the studio's log panel shows it once, not per task).
    QCOMPARE(warnings.size(), qsizetype{1});
    QVERIFY2(warnings.first().startsWith(QStringLiteral("normal, albedo run on UNTRAINED demo weights")),
             qPrintable(warnings.first()));
  }

  void missingEverywhereIsGeneratedIntoTheLastFolder() {
    QTemporaryDir data;
    {
      ScopedEnv xdg("XDG_DATA_HOME", data.path().toStdString());
      QCOMPARE(demo::demoWeightsSearchPath().back(),
               data.path().toStdString() + "/sapiens2-studio/demo-weights");
    }
    const std::string empty = data.path().toStdString() + "/empty";
    const std::string writable = data.path().toStdString() + "/generated";
    const std::string path = demo::findOrCreateDemoCheckpoint(Task::Normal, {empty, writable});
    QCOMPARE(path, demo::demoCheckpointPath(writable, Task::Normal));
    QVERIFY(demo::isCurrentDemoCheckpoint(path));
    QVERIFY(readAll(path) == readAll(demo::demoCheckpointPath(SAPIENS_DEMO_WEIGHTS_DIR_BUILD, Task::Normal)));
    // Found, not regenerated, the second time.
    const auto written = std::filesystem::last_write_time(path);
    QCOMPARE(demo::findOrCreateDemoCheckpoint(Task::Normal, {empty, writable}), path);
    QVERIFY(std::filesystem::last_write_time(path) == written);
    // A folder that cannot be written: an error naming the task and the folders.
    try {
      demo::findOrCreateDemoCheckpoint(Task::Seg, {"/proc/no-such-folder"});
      QFAIL("expected an error");
    } catch (const std::runtime_error& e) {
      QVERIFY2(QString(e.what()).contains("no seg demo weights in /proc/no-such-folder"), e.what());
    }
  }
};

QTEST_GUILESS_MAIN(TestDemoWeights)
#include "test_demo_weights.moc"
