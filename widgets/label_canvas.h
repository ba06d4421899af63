#pragma once
// The labelling canvas of the fine-tuning panel: one picture with its labels, edited with the mouse.
//   Seg: brush, eraser (back to "not labelled"), flood fill and polygon in the current class; classes can
//        be hidden from view; the brush size is in picture pixels.
//   Keypoints: click places the current keypoint of the current person (then moves on to the next
//        unlabelled one that is shown), drag moves one, right click or Delete removes it, V toggles
//        visible/hidden; groups of keypoints can be hidden (and are then left alone).
//   Read-only: dense tasks, whose targets are imported, not drawn.
// Every edit is a command on undoStack() (a stroke is one command), so undo/redo restore the exact
// pixels. Wheel zooms about the cursor, the middle button pans. Drawn with QPainter.

#include "sapiens/finetune/frame_labels.h"
#include "sapiens/finetune/label_set.h"

#include <opencv2/core/mat.hpp>

#include <QImage>
#include <QPointF>
#include <QVector>
#include <QWidget>

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

class QUndoStack;

namespace sapiens::widgets {

class LabelCanvas : public QWidget {
  Q_OBJECT

 public:
  enum class Mode { Empty, Seg, Keypoints, ReadOnly };
  enum class Tool { Brush, Eraser, Fill, Polygon };

  explicit LabelCanvas(QWidget* parent = nullptr);
  ~LabelCanvas() override;

  /// `bgr` (CV_8UC3) with the seg labels `mask` (CV_8UC1 of its size, kIgnoreLabel = not labelled) of
  /// `classes` (index = mask value). Clears the undo history.
  void setSegFrame(const cv::Mat& bgr, const cv::Mat& mask, std::vector<LabelClass> classes);
  /// `bgr` with `people`, each holding `names.size()` keypoints; `colors` one per keypoint (RGB) and
  /// `links` the skeleton to draw (both may be empty). Clears the undo history.
  void setKeypointFrame(const cv::Mat& bgr, std::vector<PersonLabel> people, std::vector<std::string> names,
                        std::vector<Rgb> colors = {}, std::vector<std::array<int, 2>> links = {});
  /// A picture without editable labels (dense tasks).
  void setReadOnlyFrame(const cv::Mat& bgr);
  void clearFrame();

  Mode mode() const { return mode_; }
  const cv::Mat& image() const { return image_; }
  /// Seg: the labels as edited (CV_8UC1).
  const cv::Mat& mask() const { return mask_; }
  /// Keypoints: the people as edited.
  const std::vector<PersonLabel>& people() const { return people_; }
  QUndoStack* undoStack() const { return undo_; }

  // Seg
  void setTool(Tool tool);
  Tool tool() const { return tool_; }
  void setCurrentClass(int index);
  int currentClass() const { return currentClass_; }
  /// Radius in picture pixels (1 = a 1-pixel dot).
  void setBrushRadius(int radius);
  int brushRadius() const { return brushRadius_; }
  void setClassVisible(int index, bool visible);
  bool classVisible(int index) const;
  /// Opacity of the label colours over the picture, 0..1.
  void setOverlayOpacity(double opacity);
  /// Floods the 4-connected region of equal labels at `pixel` with the current class (undoable).
  void fillAt(const QPoint& pixel);
  /// Fills the polygon with the current class (undoable).
  void fillPolygon(const QVector<QPoint>& pixels);

  // Keypoints
  void setCurrentKeypoint(int index);
  int currentKeypoint() const { return currentKeypoint_; }
  void setCurrentPerson(int index);
  int currentPerson() const { return currentPerson_; }
  /// A new person with no keypoint labelled, made current (undoable).
  void addPerson();
  /// Which keypoints are shown and editable (group filters); empty = all.
  void setKeypointFilter(std::vector<bool> shown);
  bool keypointShown(int index) const;
  /// Visibility given to placed keypoints: 2 visible (default), 1 labelled but hidden.
  void setPlaceVisibility(int visibility);
  /// Sets keypoint `index` of the current person at `pixel` (undoable), as a click does.
  void placeKeypoint(int index, const QPointF& pixel, int visibility);
  /// Removes keypoint `index` of the current person (undoable).
  void deleteKeypoint(int index);
  /// Toggles keypoint `index` of the current person between visible and hidden (undoable).
  void toggleKeypointVisibility(int index);

  /// Widget coordinates of a picture point (pixel centres at +0.5) and back.
  QPointF widgetPoint(const QPointF& imagePoint) const;
  QPointF imagePoint(const QPointF& widgetPoint) const;
  void resetView();

  QSize sizeHint() const override { return {480, 360}; }

 Q_SIGNALS:
  /// The labels changed (an edit, undo or redo).
  void edited();
  void currentKeypointChanged(int index);
  void currentPersonChanged(int index);
  /// The number of people changed.
  void peopleChanged(int count);

 protected:
  void paintEvent(QPaintEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;
  void mouseDoubleClickEvent(QMouseEvent* event) override;
  void wheelEvent(QWheelEvent* event) override;
  void keyPressEvent(QKeyEvent* event) override;
  void leaveEvent(QEvent* event) override;

 private:
  class MaskCommand;
  class PeopleCommand;
  friend class MaskCommand;
  friend class PeopleCommand;

  double scale() const;
  QPointF offset() const;
  QPoint pixelAt(const QPointF& widgetPoint) const;
  void resetFrame();
  void rebuildOverlay(const cv::Rect& region);
  void applyMaskPatch(const cv::Rect& region, const cv::Mat& patch);
  void applyPeople(const std::vector<PersonLabel>& people);
  void pushMaskEdit(const cv::Mat& before, const QString& text);
  void pushPeopleEdit(std::vector<PersonLabel> before, std::vector<PersonLabel> after, const QString& text);
  void paintDab(const QPoint& from, const QPoint& to);
  void finishStroke();
  void closePolygon();
  std::vector<PersonLabel> peopleWithPerson() const;
  int keypointAt(const QPointF& widgetPoint) const;
  void advanceKeypoint();
  QColor keypointColor(int index) const;

  Mode mode_ = Mode::Empty;
  cv::Mat image_;
  QImage picture_;  // image_ as RGB
  cv::Mat mask_;
  QImage overlay_;  // mask_ in colour, ARGB
  std::vector<LabelClass> classes_;
  std::vector<bool> classVisible_;
  double opacity_ = 0.55;
  Tool tool_ = Tool::Brush;
  int currentClass_ = 1;
  int brushRadius_ = 8;

  std::vector<PersonLabel> people_;
  std::vector<std::string> keypointNames_;
  std::vector<Rgb> keypointColors_;
  std::vector<std::array<int, 2>> links_;
  std::vector<bool> keypointShown_;
  int currentKeypoint_ = 0;
  int currentPerson_ = 0;
  int placeVisibility_ = 2;

  QUndoStack* undo_ = nullptr;
  double zoom_ = 1.0;
  QPointF pan_;
  // Interaction in progress.
  bool stroking_ = false;
  cv::Mat strokeBefore_;
  QPoint lastPixel_;
  QVector<QPoint> polygon_;
  int dragging_ = -1;
  bool dragMoved_ = false;
  std::vector<PersonLabel> dragBefore_;
  bool panning_ = false;
  QPointF panStart_;
  std::optional<QPointF> hover_;
};

}  // namespace sapiens::widgets
