#include "result_layers.h"

#include "background_work.h"
#include "cloud_preview.h"

#include "image_view.h"
#include "point_cloud_view.h"

#include "sapiens/common/log.h"
#include "sapiens/export/map_png.h"
#include "sapiens/export/matte_png.h"
#include "sapiens/export/pixel_description.h"
#include "sapiens/export/point_cloud.h"
#include "sapiens/export/pose_skeleton_3d.h"
#include "sapiens/result/keypoint_metadata.h"

#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include <QStringList>

#include <memory>
#include <utility>

namespace sapiens::studio {
namespace {

// A dense map picture (BGR) as the view's BGRA colour map: opaque over the person when segmentation
// ran (the official pictures paint the background a flat colour), everywhere otherwise.
cv::Mat withForegroundAlpha(const cv::Mat& bgr, const cv::Mat& foreground) {
  cv::Mat bgra;
  cv::cvtColor(bgr, bgra, cv::COLOR_BGR2BGRA);
  if (!foreground.empty()) {
    cv::Mat alpha = foreground > 0;
    const int fromTo[] = {0, 3};
    cv::mixChannels(&alpha, 1, &bgra, 1, fromTo, 1);
  }
  return bgra;
}

// The person over a grey checkerboard (16-pixel squares), as image editors show transparency: opaque BGRA.
cv::Mat checkerboardCutout(const cv::Mat& bgr, const cv::Mat& alpha) {
  const cv::Mat cutout = cutoutImage(bgr, alpha);
  cv::Mat out(cutout.size(), CV_8UC4);
  for (int y = 0; y < out.rows; ++y) {
    const auto* c = cutout.ptr<cv::Vec4b>(y);
    auto* o = out.ptr<cv::Vec4b>(y);
    for (int x = 0; x < out.cols; ++x) {
      const float k = c[x][3] / 255.0f;
      const float square = ((x / 16 + y / 16) % 2) ? 200.0f : 150.0f;
      for (int ch = 0; ch < 3; ++ch) o[x][ch] = cv::saturate_cast<uchar>(k * c[x][ch] + (1.0f - k) * square);
      o[x][3] = 255;
    }
  }
  return out;
}

// The picture of `layer` for the view's colour-map layer (empty when the task did not run).
cv::Mat denseLayerImage(const FrameResult& result, const cv::Mat& picture, DenseLayer layer) {
  const cv::Mat foreground = result.has(Task::Seg) ? result.segLabels : cv::Mat();
  switch (layer) {
    case DenseLayer::None:
      break;
    case DenseLayer::Normal:
      if (result.has(Task::Normal))
        return withForegroundAlpha(normalMapImage(result.normal, foreground), foreground);
      break;
    case DenseLayer::Albedo:
      if (result.has(Task::Albedo))
        return withForegroundAlpha(albedoImage(result.albedo, foreground), foreground);
      break;
    case DenseLayer::Depth:
      if (result.has(Task::Pointmap)) {
        const auto range = foregroundDepthRange(result.pointmap, foreground);
        return withForegroundAlpha(depthImage(result.pointmap, foreground, range), foreground);
      }
      break;
    case DenseLayer::Alpha:
      if (result.has(Task::Matting)) {
        cv::Mat grey, bgr;
        alphaImage16(result.alpha).convertTo(grey, CV_8U, 1.0 / 257.0);
        cv::cvtColor(grey, bgr, cv::COLOR_GRAY2BGR);
        return withForegroundAlpha(bgr, cv::Mat());
      }
      break;
    case DenseLayer::Cutout:
      if (result.has(Task::Matting) && picture.size() == result.alpha.size())
        return checkerboardCutout(picture, result.alpha);
      break;
  }
  return {};
}

struct PreparedPoints {
  std::shared_ptr<const widgets::PointCloudView::PreparedCloud> cloud;
  std::size_t count = 0;
};

}  // namespace

ResultLayers::ResultLayers(widgets::ImageView* view, widgets::PointCloudView* cloud, const TasksPanel* panel,
                           QThreadPool* pool, QObject* parent)
    : QObject(parent), view_(view), cloud_(cloud), panel_(panel), pool_(pool) {}

void ResultLayers::clear(const cv::Mat& picture) {
  picture_ = picture;
  result_.reset();
  ++generation_;
  ++denseRequest_;  // a layer still being made belongs to the picture being left
  denseLayer_ = DenseLayer::None;
}

void ResultLayers::setResult(FrameResult result) {
  result_ = std::move(result);
  changed();
  if (result_->has(Task::Pointmap)) showPointCloud();
}

void ResultLayers::setPoses(std::vector<PoseInstance> poses, std::optional<double> inferenceMs) {
  if (!result_) return;
  result_->poses = std::move(poses);
  if (inferenceMs) result_->inferenceMs[Task::Pose] = *inferenceMs;
  changed();
}

void ResultLayers::changed() {
  ++generation_;
  apply();
}

void ResultLayers::apply() {
  if (!result_) return;
  const FrameResult& result = *result_;
  // The view's copies of the mask and the poses change with the result, not with the drawing settings
  // (a new mask is uploaded again; new poses drop the box selection).
  if (drawnGeneration_ != generation_) {
    drawnGeneration_ = generation_;
    view_->setMaskLayer(result.has(Task::Seg) ? result.segLabels : cv::Mat());
    view_->setPoses(result.poses);
  }
  view_->setMaskPalette(panel_->maskPalette());
  view_->setMaskOpacity(panel_->maskOpacity());
  view_->setMaskVisible(panel_->maskVisible());
  showDenseLayer();
  view_->setColorMapOpacity(panel_->denseOpacity());
  view_->setKeypointThreshold(panel_->keypointThreshold());
  view_->setPosesVisible(panel_->keypointsVisible());
  view_->setBoxesVisible(panel_->boxesVisible());
  showSkeletons();
}

// A few hundred points per person: made here, at the keypoint threshold the picture's overlay uses.
void ResultLayers::showSkeletons() {
  const PoseSkeletons3d skeletons =
      poseSkeletons3d(result_->poses, panel_->keypointThreshold(), keypoints308().skeletonLinks);
  cloud_->setSkeletons(skeletons.positions.data(), skeletons.colors.data(), skeletons.pointCount(),
                       skeletons.joints, skeletons.bones);
}

void ResultLayers::showDenseLayer() {
  const DenseLayer layer = panel_->denseLayer();
  if (layer == denseLayer_ && denseGeneration_ == generation_) return;
  denseLayer_ = layer;
  denseGeneration_ = generation_;
  const quint64 request = ++denseRequest_;
  if (layer == DenseLayer::None) {
    view_->setColorMapLayer(cv::Mat());
    return;
  }
  // A full-size colour picture of a float map: made in the background, like the point cloud.
  runInBackground(
      *pool_, this,
      [layer, frame = *result_, picture = picture_] { return denseLayerImage(frame, picture, layer); },
      [this, request](const cv::Mat& dense, const QString& error) {
        if (request != denseRequest_) return;
        if (!error.isEmpty()) {
          logger().error("cannot draw the layer: {}", error.toStdString());
          Q_EMIT problem(error);
        }
        view_->setColorMapLayer(dense);
        Q_EMIT denseLayerShown();
      });
}

void ResultLayers::setPointColoring(PointColoring mode) {
  if (mode == coloring_) return;
  coloring_ = mode;
  if (result_ && result_->has(Task::Pointmap)) showPointCloud(/*keepCamera=*/true);
}

void ResultLayers::showPointCloud(bool keepCamera) {
  const quint64 request = ++cloudRequest_;
  runInBackground(
      *pool_, this,
      [frame = *result_, image = picture_, coloring = coloring_] {
        PointCloud all = buildPointCloud(frame, image);
        colorPointCloud(all, coloring, frame.segLabels, frame.width);
        const PointCloud cloud = previewCloud(all, frame.width);
        PreparedPoints points;
        points.count = cloud.vertexCount();
        points.cloud = widgets::PointCloudView::prepare(
            cloud.positions.data(), cloud.colors.empty() ? nullptr : cloud.colors.data(), points.count);
        return points;
      },
      [this, request, keepCamera](const PreparedPoints& points, const QString& error) {
        if (request != cloudRequest_) return;
        if (!error.isEmpty()) {
          logger().error("cannot build the point cloud: {}", error.toStdString());
          Q_EMIT problem(error);
          return;
        }
        cloud_->setCloud(points.cloud, keepCamera);
        Q_EMIT pointCloudShown(qulonglong(points.count));
      });
}

QString ResultLayers::describe(const QPoint& pixel) const {
  if (!result_) return {};
  QStringList parts;
  for (const std::string& part : describePixel(*result_, pixel.x(), pixel.y(), panel_->keypointThreshold()))
    parts << QString::fromStdString(part);
  return parts.join(QStringLiteral("   "));
}

}  // namespace sapiens::studio
