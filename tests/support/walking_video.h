#pragma once
// A clip of one person walking, made at test time from the bundled sample: the sample, 160 px tall,
// moving 4 px a frame to the right over a grey 320x200 frame at 25 fps, and its box per frame
// (`--bbox-file`, File > Person Boxes for Video) so that the untrained fixture models pose one person.

#include "test_support.h"

#include "sapiens/media/video_writer.h"

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QString>

namespace sapiens::test {

inline constexpr double kWalkFps = 25;

/// Writes DIR/walk.mp4 with `frames` frames; returns its path.
inline QString writeWalkingSample(const QString& dir, int frames) {
  const std::string path = (dir + "/walk.mp4").toStdString();
  cv::Mat person = cv::imread(resource("samples/astronaut.png"));
  cv::resize(person, person, cv::Size(160, 160), 0, 0, cv::INTER_AREA);
  VideoWriterOptions options;
  options.width = 320;
  options.height = 200;
  options.fps = kWalkFps;
  VideoWriter writer(path, options);
  for (int i = 0; i < frames; ++i) {
    cv::Mat frame(options.height, options.width, CV_8UC3, cv::Scalar(120, 120, 120));
    person.copyTo(frame(cv::Rect(20 + 4 * i, 20, person.cols, person.rows)));
    writer.write(frame, i / kWalkFps);
  }
  writer.finish();
  return QString::fromStdString(path);
}

/// Writes DIR/walk.boxes.json, the walker's box in each of `frames` frames; returns its path.
inline QString writeWalkingBoxes(const QString& dir, int frames) {
  QJsonArray boxes;
  for (int i = 0; i < frames; ++i)
    boxes.append(
        QJsonObject{{"frame", i}, {"boxes", QJsonArray{QJsonArray{20 + 4 * i, 20, 180 + 4 * i, 180}}}});
  const QString path = dir + "/walk.boxes.json";
  QFile file(path);
  if (file.open(QIODevice::WriteOnly)) file.write(QJsonDocument(QJsonObject{{"frames", boxes}}).toJson());
  return path;
}

}  // namespace sapiens::test
