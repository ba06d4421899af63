// finetune/label_set and frame_labels: the manifest round trip, the official seg layout and COCO
// keypoints in and out, and clear errors (naming the file) for every kind of malformed set.

#include "sapiens/export/mask_png.h"
#include "sapiens/export/npy.h"
#include "sapiens/finetune/frame_labels.h"
#include "sapiens/finetune/label_set.h"
#include "sapiens/finetune/prediction_labels.h"
#include "test_support.h"

#include <nlohmann/json.hpp>
#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>

#include <QTemporaryDir>
#include <QtTest>

#include <filesystem>
#include <fstream>

using namespace sapiens;
namespace fs = std::filesystem;

namespace {

cv::Mat picture(int width, int height) {
  cv::Mat image(height, width, CV_8UC3);
  cv::randu(image, 0, 255);
  return image;
}

cv::Mat mask(int width, int height, std::uint8_t value) {
  return cv::Mat(height, width, CV_8UC1, cv::Scalar(value));
}

LabelSet segSet(const std::string& folder, int frames = 2) {
  LabelSet labels;
  labels.folder = folder;
  labels.task = Task::Seg;
  for (int i = 0; i < frames; ++i) {
    FrameLabels frame;
    frame.image = picture(40, 30);
    frame.mask = mask(40, 30, static_cast<std::uint8_t>(i + 1));
    addFrame(labels, "f" + std::to_string(i), frame);
  }
  return labels;
}

// The LabelSetError's message from `fn`, or "" when it throws none.
template <typename Fn>
std::string errorOf(Fn&& fn) {
  try {
    fn();
  } catch (const LabelSetError& e) {
    return e.what();
  }
  return {};
}

void writeText(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

class TestFinetuneLabelSet : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void aSavedSetLoadsBackTheSame() {
    QTemporaryDir dir;
    LabelSet labels = segSet(dir.filePath("set").toStdString());
    labels.classes = {{"bg", {1, 2, 3}, std::nullopt}, {"a", {4, 5, 6}, 0.5}, {"b", {7, 8, 9}, std::nullopt}};
    labels.frames[1].split = FrameSplit::Validation;
    saveLabelSet(labels);
    const LabelSet loaded = loadLabelSet(labels.folder);
    QCOMPARE(loaded.task, Task::Seg);
    QCOMPARE(loaded.classes.size(), std::size_t(3));
    QVERIFY(loaded.classes[1].name == "a" && loaded.classes[1].color == (Rgb{4, 5, 6}) &&
            loaded.classes[1].weight == 0.5);
    QVERIFY(!loaded.classes[0].weight);
    QCOMPARE(loaded.frames.size(), std::size_t(2));
    QCOMPARE(loaded.frames[1].split, FrameSplit::Validation);
    QCOMPARE(loaded.frames[0].mask, std::string("masks/f0.png"));
    const FrameLabels frame = readFrameLabels(loaded, 1);
    QCOMPARE(frame.image.size(), cv::Size(40, 30));
    QCOMPARE(cv::countNonZero(frame.mask != 2), 0);

    // Editing a frame's labels rewrites the mask file (atomically) and nothing else.
    FrameLabels edited = frame;
    edited.mask = mask(40, 30, 0);
    LabelSet editable = loaded;
    writeFrameLabels(editable, 1, edited);
    QCOMPARE(cv::countNonZero(readFrameLabels(editable, 1).mask), 0);
    QCOMPARE(cv::countNonZero(readFrameLabels(editable, 0).mask != 1), 0);
    // No temporary files are left behind.
    for (const auto& entry : fs::recursive_directory_iterator(labels.folder))
      QVERIFY2(entry.path().filename().string().find(".tmp") == std::string::npos, entry.path().c_str());
  }

  void malformedSetsNameTheFile() {
    QTemporaryDir dir;
    const LabelSet labels = segSet(dir.filePath("set").toStdString());

    // Missing image.
    fs::remove(labels.resolve(labels.frames[0].image));
    std::string error = errorOf([&] { loadLabelSet(labels.folder); });
    QVERIFY2(contains(error, "images/f0.png") && contains(error, "missing"), error.c_str());

    // Mask of another size than its image.
    const LabelSet sized = segSet(dir.filePath("sized").toStdString());
    writeLabelPng(sized.resolve(sized.frames[1].mask), mask(41, 30, 1));
    error = errorOf([&] { readFrameLabels(sized, 1); });
    QVERIFY2(contains(error, "masks/f1.png") && contains(error, "41x30") && contains(error, "40x30"),
             error.c_str());

    // Class index out of range (29 classes by default; 255 = not labelled is fine).
    cv::Mat bad = mask(40, 30, 255);
    bad.at<std::uint8_t>(7, 5) = 40;
    writeLabelPng(sized.resolve(sized.frames[0].mask), bad);
    error = errorOf([&] { readFrameLabels(sized, 0); });
    QVERIFY2(
        contains(error, "masks/f0.png") && contains(error, "class index 40") && contains(error, "(5, 7)"),
        error.c_str());

    // A colour picture as a mask.
    cv::imwrite(sized.resolve(sized.frames[0].mask), picture(40, 30));
    error = errorOf([&] { readFrameLabels(sized, 0); });
    QVERIFY2(contains(error, "masks/f0.png") && contains(error, "single-channel"), error.c_str());

    // Bad JSON, and a manifest with an unknown task.
    writeText(sized.manifestPath(), "{\"task\": \"seg\", \"frames\": [");
    error = errorOf([&] { loadLabelSet(sized.folder); });
    QVERIFY2(contains(error, "labelset.json") && contains(error, "JSON"), error.c_str());
    writeText(sized.manifestPath(), R"({"task": "dance", "frames": []})");
    error = errorOf([&] { loadLabelSet(sized.folder); });
    QVERIFY2(contains(error, "labelset.json") && contains(error, "dance"), error.c_str());
    writeText(sized.manifestPath(), R"({"task": "seg", "frames": [{"mask": "masks/f0.png"}]})");
    error = errorOf([&] { loadLabelSet(sized.folder); });
    QVERIFY2(contains(error, "frames[0]") && contains(error, "image"), error.c_str());

    // Pose: wrong keypoint count and visibility.
    LabelSet pose;
    pose.folder = dir.filePath("pose").toStdString();
    pose.task = Task::Pose;
    pose.classes = {{"a", {}, std::nullopt}, {"b", {}, std::nullopt}};
    FrameLabels frame;
    frame.image = picture(20, 20);
    frame.people.push_back({std::nullopt, {{1, 2, 2}, {3, 4, 1}}});
    addFrame(pose, "p", frame);
    QCOMPARE(readFrameLabels(pose, 0).people.at(0).keypoints.at(1).visibility, 1);
    writeText(pose.resolve(pose.frames[0].keypoints), R"({"instances": [{"keypoints": [[1, 2, 2]]}]})");
    error = errorOf([&] { readFrameLabels(pose, 0); });
    QVERIFY2(contains(error, "keypoints/p.json") && contains(error, "instances[0].keypoints"), error.c_str());
    writeText(pose.resolve(pose.frames[0].keypoints),
              R"({"instances": [{"keypoints": [[1, 2, 2], [3, 4, 7]]}]})");
    error = errorOf([&] { readFrameLabels(pose, 0); });
    QVERIFY2(contains(error, "keypoints/p.json") && contains(error, "visibility"), error.c_str());

    // Dense target of the wrong size.
    LabelSet normal;
    normal.folder = dir.filePath("normal").toStdString();
    normal.task = Task::Normal;
    FrameLabels dense;
    dense.image = picture(20, 10);
    dense.target = cv::Mat(10, 20, CV_32FC3, cv::Scalar(0, 0, 1));
    addFrame(normal, "n", dense);
    QCOMPARE(readFrameLabels(normal, 0).target.size(), cv::Size(20, 10));
    dense.target = cv::Mat(11, 20, CV_32FC3, cv::Scalar(0, 0, 1));
    writeFrameLabels(normal, 0, dense);
    error = errorOf([&] { readFrameLabels(normal, 0); });
    QVERIFY2(contains(error, "targets/n.npy") && contains(error, "20x11"), error.c_str());
  }

  void theOfficialSegLayoutOpensInPlaceImportsAndExports() {
    QTemporaryDir dir;
    const std::string bare = dir.filePath("bare").toStdString();
    fs::create_directories(bare + "/images");
    fs::create_directories(bare + "/masks");
    cv::imwrite(bare + "/images/a.jpg", picture(32, 24));
    cv::imwrite(bare + "/images/b.png", picture(32, 24));
    cv::imwrite(bare + "/images/orphan.png", picture(32, 24));
    writeLabelPng(bare + "/masks/a.png", mask(32, 24, 3));
    writeLabelPng(bare + "/masks/b.png", mask(32, 24, 5));
    const LabelSet opened = openLabelSet(bare, Task::Seg);
    QCOMPARE(opened.frames.size(), std::size_t(2));  // the orphan is left out
    QCOMPARE(opened.frames[0].mask, std::string("masks/a.png"));
    QVERIFY(!fs::exists(bare + "/labelset.json"));  // nothing written
    QVERIFY(contains(errorOf([&] { openLabelSet(bare, Task::Pose); }), "not pose"));

    const LabelSet imported = importOfficialSegLayout(bare, dir.filePath("ours").toStdString());
    QCOMPARE(loadLabelSet(imported.folder).frames.size(), std::size_t(2));
    QCOMPARE(cv::countNonZero(readFrameLabels(imported, 1).mask != 5), 0);
    exportOfficialSegLayout(imported, dir.filePath("back").toStdString());
    QVERIFY(fs::exists(dir.filePath("back/images/a.jpg").toStdString()));
    QCOMPARE(cv::countNonZero(
                 cv::imread(dir.filePath("back/masks/b.png").toStdString(), cv::IMREAD_UNCHANGED) != 5),
             0);

    const std::string empty = dir.filePath("empty").toStdString();
    fs::create_directories(empty + "/images");
    fs::create_directories(empty + "/masks");
    QVERIFY(contains(errorOf([&] { openLabelSet(empty); }), "no picture"));
    QVERIFY(
        contains(errorOf([&] { openLabelSet(dir.filePath("nothing").toStdString()); }), "no such folder"));
  }

  void cocoKeypointsImportAndExport() {
    QTemporaryDir dir;
    const std::string images = dir.filePath("images").toStdString();
    fs::create_directories(images);
    cv::imwrite(images + "/one.png", picture(50, 40));
    const nlohmann::json coco{
        {"images", {{{"id", 7}, {"file_name", "one.png"}, {"width", 50}, {"height", 40}}}},
        {"annotations",
         {{{"id", 1},
           {"image_id", 7},
           {"category_id", 1},
           {"bbox", {5, 6, 30, 20}},
           {"num_keypoints", 2},
           {"keypoints", {10, 12, 2, 20, 22, 1, 0, 0, 0}}}}},
        {"categories",
         {{{"id", 1},
           {"name", "person"},
           {"keypoints", {"a", "b", "c"}},
           {"skeleton", nlohmann::json::array()}}}}};
    writeText(dir.filePath("coco.json").toStdString(), coco.dump());
    const LabelSet labels = importCocoKeypoints(dir.filePath("coco.json").toStdString(), images,
                                                dir.filePath("set").toStdString());
    QCOMPARE(labels.task, Task::Pose);
    QCOMPARE(labels.classes.size(), std::size_t(3));
    const FrameLabels frame = readFrameLabels(loadLabelSet(labels.folder), 0);
    QCOMPARE(frame.people.size(), std::size_t(1));
    QCOMPARE(frame.people[0].keypoints[1].x, 20.0);
    QCOMPARE(frame.people[0].keypoints[1].visibility, 1);
    QCOMPARE(frame.people[0].keypoints[2].visibility, 0);
    QCOMPARE(frame.people[0].bbox->x2, 35.0f);

    exportCocoKeypoints(labels, dir.filePath("out.json").toStdString());
    std::ifstream in(dir.filePath("out.json").toStdString());
    const nlohmann::json out = nlohmann::json::parse(in);
    QCOMPARE(out["annotations"][0]["keypoints"], (nlohmann::json{10.0, 12.0, 2, 20.0, 22.0, 1, 0.0, 0.0, 0}));
    QCOMPARE(out["annotations"][0]["bbox"][2].get<double>(), 30.0);
    QCOMPARE(out["categories"][0]["keypoints"][2].get<std::string>(), std::string("c"));
  }

  // An import asked to stop stops before its next picture with LabelImportCancelled, not a LabelSetError:
  // the seg layout writes no manifest, COCO and the dense targets' writing pass list the frames done, the
  // dense targets' checking pass writes nothing.
  void importsStopBeforeTheNextPictureWhenCancelled() {
    QTemporaryDir dir;
    const std::string source = dir.filePath("source").toStdString(), images = source + "/images";
    for (const char* sub : {"/images", "/masks", "/targets"}) fs::create_directories(source + sub);
    nlohmann::json cocoImages = nlohmann::json::array(), annotations = nlohmann::json::array();
    for (int i = 0; i < 4; ++i) {
      const std::string stem = "p" + std::to_string(i);
      cv::imwrite(images + "/" + stem + ".png", picture(32, 24));
      writeLabelPng(source + "/masks/" + stem + ".png", mask(32, 24, 1));
      writeNpy(source + "/targets/" + stem + ".npy", cv::Mat(24, 32, CV_32FC3, cv::Scalar(0, 0, -1)));
      cocoImages.push_back({{"id", i}, {"file_name", stem + ".png"}, {"width", 32}, {"height", 24}});
      annotations.push_back({{"id", i + 1},
                             {"image_id", i},
                             {"category_id", 1},
                             {"bbox", {1, 1, 20, 20}},
                             {"num_keypoints", 1},
                             {"keypoints", {10, 12, 2}}});
    }
    const nlohmann::json coco{
        {"images", cocoImages},
        {"annotations", annotations},
        {"categories",
         {{{"id", 1}, {"name", "person"}, {"keypoints", {"a"}}, {"skeleton", nlohmann::json::array()}}}}};
    writeText(source + "/coco.json", coco.dump());
    int polls = 0;
    int allowed = 0;  // pictures before the cancel
    const std::function<bool()> isCancelled = [&] { return ++polls > allowed; };
    const auto cancelledAfter = [&](int pictures, const std::function<void()>& import) {
      polls = 0, allowed = pictures;
      try {
        import();
      } catch (const LabelImportCancelled&) {
        return polls == pictures + 1;
      }
      return false;
    };
    const auto out = [&](const char* name) { return dir.filePath(name).toStdString(); };

    QVERIFY(cancelledAfter(2, [&] { importOfficialSegLayout(source, out("seg"), isCancelled); }));
    QVERIFY(!fs::exists(out("seg") + "/labelset.json"));
    QVERIFY(cancelledAfter(
        2, [&] { importCocoKeypoints(source + "/coco.json", images, out("coco"), isCancelled); }));
    QCOMPARE(loadLabelSet(out("coco")).frames.size(), std::size_t(2));
    QVERIFY(cancelledAfter(2, [&] {
      importDenseTargets(Task::Normal, images, source + "/targets", out("checked"), isCancelled);
    }));
    QVERIFY(!fs::exists(out("checked")));
    QVERIFY(cancelledAfter(4 + 3, [&] {
      importDenseTargets(Task::Normal, images, source + "/targets", out("dense"), isCancelled);
    }));
    QCOMPARE(loadLabelSet(out("dense")).frames.size(), std::size_t(3));
    // Never cancelled: all of it.
    allowed = 1000;
    QCOMPARE(importOfficialSegLayout(source, out("all"), isCancelled).frames.size(), std::size_t(4));
  }

  // "Start from prediction": the keypoints scored at the threshold become labels, the others stay
  // unlabelled; a seg prediction with classes the set lacks, or no result, starts empty and says why.
  void aPredictionBecomesLabelsWhereItFits() {
    const cv::Mat picture(40, 30, CV_8UC3, cv::Scalar(10, 20, 30));
    LabelSet pose;
    pose.task = Task::Pose;
    FrameResult result;
    result.width = 30;
    result.height = 40;
    PoseInstance person;
    person.bbox = {1, 2, 20, 30};
    person.keypoints.assign(keypoints308().size(), {5.0, 6.0});
    person.scores.assign(keypoints308().size(), 0.1f);
    person.scores[0] = kDefaultKeypointThreshold;
    result.poses = {person};
    PredictionLabels made = labelsFromPrediction(pose, picture, &result, true);
    QVERIFY(made.use == PredictionUse::Used && made.frame && made.frame->people.size() == 1);
    QCOMPARE(made.frame->people[0].keypoints[0].visibility, 2);
    QCOMPARE(made.frame->people[0].keypoints[0].x, 5.0);
    QCOMPARE(made.frame->people[0].keypoints[1].visibility, 0);
    QVERIFY(labelsFromPrediction(pose, picture, &result, false).frame->people.empty());
    QVERIFY(labelsFromPrediction(pose, cv::Mat(41, 30, CV_8UC3), &result, true).use ==
            PredictionUse::NoPrediction);

    LabelSet seg;
    seg.task = Task::Seg;
    seg.classes = {{"background", {0, 0, 0}, std::nullopt}, {"person", {255, 0, 0}, std::nullopt}};
    result.segLabels = cv::Mat(40, 30, CV_8UC1, cv::Scalar(1));
    made = labelsFromPrediction(seg, picture, &result, true);
    QVERIFY(made.use == PredictionUse::Used);
    QCOMPARE(cv::countNonZero(made.frame->mask == 1), 40 * 30);
    result.segLabels.at<std::uint8_t>(3, 3) = 7;  // a class the set does not have
    made = labelsFromPrediction(seg, picture, &result, true);
    QVERIFY(made.use == PredictionUse::ClassesDoNotFit);
    QCOMPARE(cv::countNonZero(made.frame->mask == kIgnoreLabel), 40 * 30);
    LabelSet normal;
    normal.task = Task::Normal;
    QVERIFY(!labelsFromPrediction(normal, picture, nullptr, true).frame);
    QVERIFY(keypoints308().groups.at("left_hand").size() == 20 &&
            keypoints308().groups.at("body").size() == 17);
  }
};

QTEST_APPLESS_MAIN(TestFinetuneLabelSet)
#include "test_finetune_label_set.moc"
