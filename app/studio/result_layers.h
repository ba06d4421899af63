#pragma once
// The results of the picture on display and how they are drawn: the part mask, the poses and the dense
// colour map over the image, the points in the 3-D view, the read-out under the cursor. The colour map
// and the points are made off the GUI thread; what belongs to a picture or result that has since been
// left is dropped.

#include "tasks_panel.h"

#include "sapiens/result/frame_result.h"

#include <opencv2/core/mat.hpp>

#include "sapiens/export/point_coloring.h"

#include <QObject>
#include <QPoint>
#include <QString>

#include <optional>
#include <vector>

class QThreadPool;

namespace sapiens::widgets {
class ImageView;
class PointCloudView;
}  // namespace sapiens::widgets

namespace sapiens::studio {

class ResultLayers : public QObject {
  Q_OBJECT

 public:
  /// Draws into `view` and `cloud` as `panel` says; builds in `pool`, which its owner waits for before
  /// this goes.
  ResultLayers(widgets::ImageView* view, widgets::PointCloudView* cloud, const TasksPanel* panel,
               QThreadPool* pool, QObject* parent = nullptr);

  /// A new picture is on display, without results yet.
  void clear(const cv::Mat& picture);
  /// The results of the picture on display: drawn at once, the colour map and the points follow.
  void setResult(FrameResult result);
  /// Only the poses change (a pose run in the user's boxes; empty: the last box was removed).
  void setPoses(std::vector<PoseInstance> poses, std::optional<double> inferenceMs);
  const std::optional<FrameResult>& result() const { return result_; }
  /// The picture the result belongs to.
  const cv::Mat& picture() const { return picture_; }
  /// Draws the layers again with the panel's settings (opacity, threshold, the dense layer chosen).
  void apply();
  /// What the 3-D view colours the points by; the points on show are coloured again (the camera stays).
  void setPointColoring(PointColoring mode);
  PointColoring pointColoring() const { return coloring_; }
  /// The read-out of the results at `pixel` ("Torso   Nose 0.93   depth 2.41 m"); empty outside.
  QString describe(const QPoint& pixel) const;

 Q_SIGNALS:
  /// The chosen dense layer is drawn.
  void denseLayerShown();
  /// The 3-D view has the result's points (previewCloud's: at most kMaxPreviewPoints).
  void pointCloudShown(qulonglong pointCount);
  /// A layer or the points could not be made; `message` says why.
  void problem(const QString& message);

 private:
  void changed();
  void showDenseLayer();
  void showPointCloud(bool keepCamera = false);
  void showSkeletons();

  widgets::ImageView* view_;
  widgets::PointCloudView* cloud_;
  const TasksPanel* panel_;
  QThreadPool* pool_;
  std::optional<FrameResult> result_;
  cv::Mat picture_;
  quint64 generation_ = 0;  // counts changes of result_
  quint64 drawnGeneration_ = 0;
  DenseLayer denseLayer_ = DenseLayer::None;
  quint64 denseGeneration_ = 0;
  quint64 denseRequest_ = 0;
  quint64 cloudRequest_ = 0;
  PointColoring coloring_ = PointColoring::Picture;
};

}  // namespace sapiens::studio
