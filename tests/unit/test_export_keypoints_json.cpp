// Pose predictions as the official demo's JSON sidecar and as a COCO keypoints file: parsed with
// nlohmann::json and checked against each schema, read back by our readers, and errors that name the key.

#include "sapiens/export/coco_keypoints.h"
#include "sapiens/export/keypoints_json.h"
#include "sapiens/io/export_error.h"
#include "sapiens/result/keypoint_metadata.h"
#include "test_support.h"

#include <QDir>
#include <QTemporaryDir>
#include <QtTest>

#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

namespace {

constexpr int kKeypoints = 308;

nlohmann::json parseFile(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

void writeText(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
}

std::set<std::string> keysOf(const nlohmann::json& object) {
  std::set<std::string> keys;
  for (const auto& item : object.items()) keys.insert(item.key());
  return keys;
}

sapiens::PoseInstance makeInstance(double offset, float scoreScale, const std::string& source) {
  sapiens::PoseInstance instance;
  instance.bbox = {10.5f + static_cast<float>(offset), 20.25f, 300.75f, 610.0f};
  instance.bboxSource = source;
  for (int k = 0; k < kKeypoints; ++k) {
    instance.keypoints.push_back({offset + k * 0.731, 1000.0 / (k + 3)});
    instance.scores.push_back(scoreScale * static_cast<float>(k % 10) / 10.0f + 0.013f);
  }
  return instance;
}

sapiens::KeypointPredictions makePredictions() {
  sapiens::KeypointPredictions predictions;
  predictions.video = "walk";
  predictions.imageHeight = 720;
  predictions.imageWidth = 1280;
  predictions.keypointThreshold = 0.3f;
  predictions.frames.push_back(
      {"000001.jpg", {makeInstance(0, 1.0f, "detector"), makeInstance(50, 0.9f, "user")}});
  predictions.frames.push_back({"000002.jpg", {}});
  predictions.frames.push_back({"000003.jpg", {makeInstance(7, 0.5f, "")}});
  return predictions;
}

}  // namespace

class TestExportKeypointsJson : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void officialLayoutMatchesTheSchema();
  void perImageFileHasNoVideoKey();
  void readerGivesBackWhatWasWritten();
  void readerAcceptsTheOfficialDemoOutput();
  void readerNamesTheWrongKey();
  void writerRefusesInstancesOfTheWrongSize();
  void cocoFileMatchesTheCocoSchema();
  void cocoReaderRoundTripsAndChecksImageIds();
};

void TestExportKeypointsJson::officialLayoutMatchesTheSchema() {
  QTemporaryDir dir;
  const std::string path = dir.filePath("walk_predictions.json").toStdString();
  const auto predictions = makePredictions();
  sapiens::writeKeypointsJson(path, predictions);

  const nlohmann::json json = parseFile(path);
  QCOMPARE(keysOf(json),
           (std::set<std::string>{"video", "image_size", "num_keypoints", "kpt_thr_used", "frames"}));
  QCOMPARE(json["video"].get<std::string>(), std::string("walk"));
  QCOMPARE(json["image_size"], nlohmann::json({720, 1280}));  // [H, W]
  QCOMPARE(json["num_keypoints"].get<int>(), kKeypoints);
  QCOMPARE(json["kpt_thr_used"].get<double>(), 0.3);  // the float's short form, not 0.30000001192092896
  QCOMPARE(json["frames"].size(), std::size_t{3});
  QCOMPARE(json["frames"][1]["image_name"].get<std::string>(), std::string("000002.jpg"));
  QVERIFY(json["frames"][1]["instances"].is_array() && json["frames"][1]["instances"].empty());

  for (std::size_t f : {std::size_t{0}, std::size_t{2}}) {
    const auto& frame = json["frames"][f];
    QCOMPARE(keysOf(frame), (std::set<std::string>{"image_name", "instances"}));
    for (std::size_t i = 0; i < frame["instances"].size(); ++i) {
      const auto& instance = frame["instances"][i];
      const auto& source = predictions.frames[f].instances[i];
      const bool hasSource = !source.bboxSource.empty();
      const std::set<std::string> expectedKeys =
          hasSource ? std::set<std::string>{"bbox", "bbox_source", "keypoints", "keypoint_scores"}
                    : std::set<std::string>{"bbox", "keypoints", "keypoint_scores"};
      QCOMPARE(keysOf(instance), expectedKeys);
      QCOMPARE(instance["bbox"].size(), std::size_t{4});
      QCOMPARE(instance["bbox"][0].get<float>(), source.bbox.x1);
      QCOMPARE(instance["bbox"][3].get<float>(), source.bbox.y2);
      if (hasSource) QCOMPARE(instance["bbox_source"].get<std::string>(), source.bboxSource);
      QCOMPARE(instance["keypoints"].size(), std::size_t{kKeypoints});
      QCOMPARE(instance["keypoint_scores"].size(), std::size_t{kKeypoints});
      for (std::size_t k = 0; k < kKeypoints; ++k) {
        QCOMPARE(instance["keypoints"][k].size(), std::size_t{2});
        QCOMPARE(instance["keypoints"][k][0].get<double>(), source.keypoints[k][0]);
        QCOMPARE(instance["keypoints"][k][1].get<double>(), source.keypoints[k][1]);
        QCOMPARE(instance["keypoint_scores"][k].get<float>(), source.scores[k]);
      }
    }
  }
}

void TestExportKeypointsJson::perImageFileHasNoVideoKey() {
  QTemporaryDir dir;
  auto predictions = makePredictions();
  predictions.video.reset();
  predictions.frames.resize(1);
  const std::string path = dir.filePath("photo.json").toStdString();
  sapiens::writeKeypointsJson(path, predictions);
  const nlohmann::json json = parseFile(path);
  QVERIFY(!json.contains("video"));
  QCOMPARE(json["frames"].size(), std::size_t{1});
  QVERIFY(!sapiens::readKeypointsJson(path).video.has_value());
}

void TestExportKeypointsJson::readerGivesBackWhatWasWritten() {
  QTemporaryDir dir;
  auto predictions = makePredictions();
  predictions.frames[0].instances[0].scores[5] = std::nanf("");  // written as null, read as NaN
  const std::string path = dir.filePath("round.json").toStdString();
  sapiens::writeKeypointsJson(path, predictions);
  const auto back = sapiens::readKeypointsJson(path);
  QCOMPARE(back.video, predictions.video);
  QCOMPARE(back.imageHeight, 720);
  QCOMPARE(back.imageWidth, 1280);
  QCOMPARE(back.numKeypoints, kKeypoints);
  QCOMPARE(back.keypointThreshold, 0.3f);
  QCOMPARE(back.frames.size(), predictions.frames.size());
  for (std::size_t f = 0; f < back.frames.size(); ++f) {
    QCOMPARE(back.frames[f].imageName, predictions.frames[f].imageName);
    QCOMPARE(back.frames[f].instances.size(), predictions.frames[f].instances.size());
    for (std::size_t i = 0; i < back.frames[f].instances.size(); ++i) {
      const auto& a = back.frames[f].instances[i];
      const auto& b = predictions.frames[f].instances[i];
      QCOMPARE(a.bbox.x1, b.bbox.x1);
      QCOMPARE(a.bbox.y1, b.bbox.y1);
      QCOMPARE(a.bbox.x2, b.bbox.x2);
      QCOMPARE(a.bbox.y2, b.bbox.y2);
      QCOMPARE(a.bboxSource, b.bboxSource);
      QCOMPARE(a.keypoints, b.keypoints);
      for (std::size_t k = 0; k < kKeypoints; ++k) {
        if (std::isnan(b.scores[k])) {
          QVERIFY(std::isnan(a.scores[k]));
        } else {
          QCOMPARE(a.scores[k], b.scores[k]);
        }
      }
    }
  }
}

void TestExportKeypointsJson::readerAcceptsTheOfficialDemoOutput() {
  QTemporaryDir dir;
  const std::string path = dir.filePath("official.json").toStdString();
  // What vis_pose.py writes: no bbox_source; num_keypoints null when no person was seen.
  writeText(path, R"({"video": "01", "image_size": [480, 640], "num_keypoints": null, "kpt_thr_used": 0.3,
                      "frames": [{"image_name": "a.jpg", "instances": []}]})");
  const auto empty = sapiens::readKeypointsJson(path);
  QCOMPARE(empty.numKeypoints, 0);
  QCOMPARE(empty.frames.size(), std::size_t{1});

  writeText(path, R"({"image_size": [4, 5], "num_keypoints": 2, "kpt_thr_used": 0.5,
                      "frames": [{"image_name": "b.png", "instances": [
                        {"bbox": [0, 0, 4, 3], "keypoints": [[1.5, 2], [3, 0.25]], "keypoint_scores": [0.9, 0.1]}]}]})");
  const auto small = sapiens::readKeypointsJson(path);
  QCOMPARE(small.numKeypoints, 2);
  QCOMPARE(small.frames[0].instances[0].bboxSource, std::string());
  QCOMPARE(small.frames[0].instances[0].keypoints[1][1], 0.25);
  QCOMPARE(small.frames[0].instances[0].scores[0], 0.9f);
}

void TestExportKeypointsJson::readerNamesTheWrongKey() {
  QTemporaryDir dir;
  const std::string path = dir.filePath("broken.json").toStdString();
  auto expectError = [&](const std::string& text, const QString& where) {
    writeText(path, text);
    try {
      sapiens::readKeypointsJson(path);
      QFAIL(qPrintable("accepted: " + QString::fromStdString(text)));
    } catch (const sapiens::ExportError& error) {
      QCOMPARE(error.path(), path);
      QVERIFY2(QString(error.what()).contains(where), error.what());
    }
  };
  expectError(R"({"image_size": [4, 5], "kpt_thr_used": 0.3})", "missing key 'frames'");
  expectError(
      R"({"image_size": [4, 5], "num_keypoints": 2, "kpt_thr_used": 0.3, "frames": [{"image_name": "x",
                  "instances": [{"bbox": [0, 0, 1, 1], "keypoints": [[1, 2]], "keypoint_scores": [0.5]}]}]})",
      "frames[0].instances[0].keypoints");
  expectError(R"({"image_size": [4, 5], "kpt_thr_used": 0.3, "frames": [{"image_name": "x",
                  "instances": [{"bbox": [0, 0, 1], "keypoints": [], "keypoint_scores": []}]}]})",
              "frames[0].instances[0].bbox");
  expectError(R"({"image_size": "4x5", "kpt_thr_used": 0.3, "frames": []})", "image_size");
  expectError("{not json", "not valid JSON");
}

void TestExportKeypointsJson::writerRefusesInstancesOfTheWrongSize() {
  QTemporaryDir dir;
  auto predictions = makePredictions();
  predictions.frames[2].instances[0].scores.pop_back();
  const std::string path = dir.filePath("never.json").toStdString();
  try {
    sapiens::writeKeypointsJson(path, predictions);
    QFAIL("an instance with 307 scores was written");
  } catch (const sapiens::ExportError& error) {
    QVERIFY2(QString(error.what()).contains("frames[2].instances[0]"), error.what());
  }
  QVERIFY(!QFile::exists(QString::fromStdString(path)));
}

void TestExportKeypointsJson::cocoFileMatchesTheCocoSchema() {
  QTemporaryDir dir;
  const auto predictions = makePredictions();
  const std::string path = dir.filePath("coco.json").toStdString();
  const sapiens::KeypointMetadata& metadata = sapiens::keypoints308();
  sapiens::writeCocoKeypoints(path, predictions, metadata);

  const nlohmann::json json = parseFile(path);
  QVERIFY(json.contains("images") && json.contains("annotations") && json.contains("categories"));
  QCOMPARE(json["images"].size(), std::size_t{3});
  QCOMPARE(json["images"][2],
           nlohmann::json({{"id", 3}, {"file_name", "000003.jpg"}, {"width", 1280}, {"height", 720}}));

  // The category carries the 308 names and the 1-based skeleton of the resource file.
  std::ifstream resource(sapiens::test::resource("data/keypoints308.json"));
  const nlohmann::json layout = nlohmann::json::parse(resource);
  QCOMPARE(json["categories"].size(), std::size_t{1});
  const auto& category = json["categories"][0];
  QCOMPARE(category["id"].get<int>(), 1);
  QCOMPARE(category["name"].get<std::string>(), std::string("person"));
  QCOMPARE(category["keypoints"], layout["names"]);
  QCOMPARE(category["skeleton"].size(), layout["skeleton_links"].size());
  for (std::size_t l = 0; l < layout["skeleton_links"].size(); ++l) {
    QCOMPARE(category["skeleton"][l][0].get<int>(), layout["skeleton_links"][l][0].get<int>() + 1);
    QCOMPARE(category["skeleton"][l][1].get<int>(), layout["skeleton_links"][l][1].get<int>() + 1);
  }

  const auto& annotations = json["annotations"];
  QCOMPARE(annotations.size(), std::size_t{3});
  std::set<int> ids;
  const std::vector<std::pair<std::size_t, std::size_t>> sources = {{0, 0}, {0, 1}, {2, 0}};
  for (std::size_t a = 0; a < annotations.size(); ++a) {
    const auto& annotation = annotations[a];
    const auto& source = predictions.frames[sources[a].first].instances[sources[a].second];
    ids.insert(annotation["id"].get<int>());
    QCOMPARE(annotation["image_id"].get<int>(), static_cast<int>(sources[a].first) + 1);
    QCOMPARE(annotation["category_id"].get<int>(), 1);
    QCOMPARE(annotation["iscrowd"].get<int>(), 0);
    QCOMPARE(annotation["bbox"][0].get<float>(), source.bbox.x1);
    QCOMPARE(annotation["bbox"][2].get<float>(), source.bbox.x2 - source.bbox.x1);  // width, not x2
    QCOMPARE(annotation["bbox"][3].get<float>(), source.bbox.y2 - source.bbox.y1);
    QCOMPARE(annotation["keypoints"].size(), std::size_t{3 * kKeypoints});
    int visible = 0;
    for (std::size_t k = 0; k < kKeypoints; ++k) {
      const auto& triple = annotation["keypoints"];
      if (source.scores[k] >= 0.3f) {
        ++visible;
        QCOMPARE(triple[3 * k + 2].get<int>(), 2);
        QCOMPARE(triple[3 * k].get<double>(), source.keypoints[k][0]);
        QCOMPARE(triple[3 * k + 1].get<double>(), source.keypoints[k][1]);
      } else {
        QCOMPARE(triple[3 * k + 2].get<int>(), 0);
        QCOMPARE(triple[3 * k].get<double>(), 0.0);
        QCOMPARE(triple[3 * k + 1].get<double>(), 0.0);
      }
    }
    QVERIFY(visible > 0 && visible < kKeypoints);
    QCOMPARE(annotation["num_keypoints"].get<int>(), visible);
  }
  QCOMPARE(ids.size(), std::size_t{3});  // unique
}

void TestExportKeypointsJson::cocoReaderRoundTripsAndChecksImageIds() {
  QTemporaryDir dir;
  const auto predictions = makePredictions();
  const std::string path = dir.filePath("coco.json").toStdString();
  sapiens::writeCocoKeypoints(path, predictions, sapiens::keypoints308());
  const sapiens::CocoKeypointDataset dataset = sapiens::readCocoKeypoints(path);
  QCOMPARE(dataset.images.size(), std::size_t{3});
  QCOMPARE(dataset.images[0].fileName, std::string("000001.jpg"));
  QCOMPARE(dataset.keypointNames, sapiens::keypoints308().names);
  QCOMPARE(dataset.skeleton, sapiens::keypoints308().skeletonLinks);
  QCOMPARE(dataset.annotations.size(), std::size_t{3});
  const auto& second = dataset.annotations[1];
  const auto& source = predictions.frames[0].instances[1];
  QCOMPARE(second.imageId, std::int64_t{1});
  QCOMPARE(second.bbox.x2, source.bbox.x2);
  QCOMPARE(second.keypoints.size(), std::size_t{kKeypoints});
  for (std::size_t k = 0; k < kKeypoints; ++k) {
    QCOMPARE(second.visibility[k], source.scores[k] >= 0.3f ? 2 : 0);
    if (second.visibility[k] == 2) QCOMPARE(second.keypoints[k], source.keypoints[k]);
  }

  writeText(path, R"({"images": [{"id": 4, "file_name": "a.jpg", "width": 2, "height": 2}], "categories": [],
                      "annotations": [{"id": 1, "image_id": 5, "bbox": [0, 0, 1, 1], "keypoints": []}]})");
  try {
    sapiens::readCocoKeypoints(path);
    QFAIL("an annotation of an unknown image was accepted");
  } catch (const sapiens::ExportError& error) {
    QVERIFY2(QString(error.what()).contains("annotations[0].image_id"), error.what());
  }
}

QTEST_APPLESS_MAIN(TestExportKeypointsJson)
#include "test_export_keypoints_json.moc"
