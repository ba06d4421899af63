#pragma once
// A video with two people who cross, made at test time from the bundled sample: A (the sample shrunk to
// 60x80) walks right, B (its mirror image) walks left 10 px lower, and A passes in front. The box file
// lists both people's boxes per frame (`--bbox-file`, File > Person Boxes for Video), except B's in
// frames 16-20, where B is behind A: a 5-frame occlusion.

#include "test_support.h"

#include "sapiens/media/video_writer.h"

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <cmath>
#include <string>

namespace sapiens::test {

struct CrossingScene {
  static constexpr int kFrames = 40, kWidth = 60, kHeight = 80;
  static constexpr int kVideoWidth = 320, kVideoHeight = 160;
  static constexpr double kFps = 25;
  static cv::Rect a(int i) { return {20 + 6 * i, 30, kWidth, kHeight}; }
  static cv::Rect b(int i) { return {240 - 6 * i, 40, kWidth, kHeight}; }
  static bool bHidden(int i) { return i >= 16 && i <= 20; }
  /// Which person a pose of frame `i` is, by its box's top-left corner: 'a', 'b' or '?'.
  static char whoIs(double x1, double y1, int i) {
    if (std::abs(x1 - a(i).x) < 1 && std::abs(y1 - a(i).y) < 1) return 'a';
    if (std::abs(x1 - b(i).x) < 1 && std::abs(y1 - b(i).y) < 1) return 'b';
    return '?';
  }
};

/// Writes DIR/crossing.mp4; returns its path.
inline std::string writeCrossingVideo(const std::string& dir) {
  const std::string path = dir + "/crossing.mp4";
  cv::Mat a = cv::imread(resource("samples/astronaut.png")), b;
  cv::resize(a, a, cv::Size(CrossingScene::kWidth, CrossingScene::kHeight), 0, 0, cv::INTER_AREA);
  cv::flip(a, b, 1);
  VideoWriterOptions options;
  options.width = CrossingScene::kVideoWidth;
  options.height = CrossingScene::kVideoHeight;
  options.fps = CrossingScene::kFps;
  VideoWriter writer(path, options);
  for (int i = 0; i < CrossingScene::kFrames; ++i) {
    cv::Mat frame(options.height, options.width, CV_8UC3, cv::Scalar(90, 110, 120));
    b.copyTo(frame(CrossingScene::b(i)));
    a.copyTo(frame(CrossingScene::a(i)));
    writer.write(frame, i / CrossingScene::kFps);
  }
  writer.finish();
  return path;
}

/// Writes DIR/crossing.boxes.json ({"frames": [{"frame": i, "boxes": [A, B]}, ...]}); returns its path.
inline std::string writeCrossingBoxes(const std::string& dir) {
  const auto box = [](const cv::Rect& r) { return QJsonArray{r.x, r.y, r.x + r.width, r.y + r.height}; };
  QJsonArray frames;
  for (int i = 0; i < CrossingScene::kFrames; ++i) {
    QJsonArray boxes{box(CrossingScene::a(i))};
    if (!CrossingScene::bHidden(i)) boxes.append(box(CrossingScene::b(i)));
    frames.append(QJsonObject{{"frame", i}, {"boxes", boxes}});
  }
  const std::string path = dir + "/crossing.boxes.json";
  QFile file(QString::fromStdString(path));
  if (file.open(QIODevice::WriteOnly)) file.write(QJsonDocument(QJsonObject{{"frames", frames}}).toJson());
  return path;
}

}  // namespace sapiens::test
