#pragma once
// The 2-D view: an image drawn as a GL texture by shaders/image.{vert,frag}, with zoom to the cursor
// (wheel), pan (drag), fit (F) and 1:1 (1), and a read-out of the pixel under the cursor. Result layers
// over it: a class-index mask coloured through a palette, one dense colour map (normals, albedo, depth),
// and the pose keypoints, skeleton and person boxes. The layers are blended over the whole image, or
// compared with it side by side (two panes sharing zoom and pan) or across a draggable split divider.
// Person boxes can be edited: Shift + drag draws one, a click selects one and Delete removes it (the
// view reports the edit; whoever owns the results re-runs pose). Tracked people (a video) have their
// box in their track's colour with the id on it; one track can be highlighted, with its path.

#include "sapiens/result/frame_result.h"

#include <opencv2/core/mat.hpp>

#include <QColor>
#include <QOpenGLFunctions>
#include <QOpenGLWidget>
#include <QPoint>
#include <QPointF>
#include <QRectF>

#include <memory>
#include <vector>

class QOpenGLShaderProgram;
class QPainter;
class QOpenGLVertexArrayObject;

namespace sapiens::widgets {

class ImageView : public QOpenGLWidget, protected QOpenGLFunctions {
  Q_OBJECT

 public:
  /// How the result layers are compared with the image.
  enum class CompareMode { Blend, SideBySide, Split };
  Q_ENUM(CompareMode)
  /// Side by side shows the plain image in the left pane and the layers in the right one; in the other
  /// modes both are the one pane.
  enum class Pane { Image, Layers };

  explicit ImageView(QWidget* parent = nullptr);
  ~ImageView() override;

  /// Shows `bgr` (CV_8UC3), fitted to the view. The view shares the pixels: do not write to them later.
  void setImage(const cv::Mat& bgr);
  /// The next frame of a video: like setImage, but zoom and pan stay when the size is unchanged.
  void setFrame(const cv::Mat& bgr);
  void clear();
  const cv::Mat& image() const { return image_; }
  bool hasImage() const { return !image_.empty(); }

  /// Widget (logical) pixels per image pixel.
  double zoom() const { return zoom_; }
  /// True while the view re-fits the image on every resize (until the user zooms or pans).
  bool fitsToView() const { return fitToView_; }
  /// Image coordinates (pixel centres at +0.5) of a widget position in either pane, and back (into
  /// `pane`).
  QPointF widgetToImage(const QPointF& widgetPos) const;
  QPointF imageToWidget(const QPointF& imagePos, Pane pane = Pane::Layers) const;

  void setCompareMode(CompareMode mode);
  CompareMode compareMode() const { return compareMode_; }
  /// Split mode: the divider's position as a share of the view's width, clamped to [0, 1].
  void setSplitPosition(double fraction);
  double splitPosition() const { return splitPosition_; }
  /// The widget rectangle of `pane`.
  QRectF paneRect(Pane pane) const;

  /// Part mask: `labels` (CV_8UC1 class indices, any size; empty = none) drawn through `palette`
  /// (up to 256 colours; alpha 0 leaves a class undrawn) at `opacity`.
  void setMaskLayer(const cv::Mat& labels);
  bool hasMaskLayer() const { return !mask_.empty(); }
  void setMaskPalette(const std::vector<QColor>& palette);
  void setMaskOpacity(double opacity);
  void setMaskVisible(bool visible);
  /// Dense colour map: `bgra` (CV_8UC4, any size; empty = none) mixed by opacity x its alpha.
  void setColorMapLayer(const cv::Mat& bgra);
  const cv::Mat& colorMapLayer() const { return colorMap_; }
  void setColorMapOpacity(double opacity);
  void setColorMapVisible(bool visible);
  /// Pose: keypoints whose score is >= the threshold, the links between two such keypoints, and each
  /// person's box, in the official colours of the 308-keypoint layout.
  void setPoses(const std::vector<PoseInstance>& poses);
  void setKeypointThreshold(double threshold);
  void setPosesVisible(bool visible);
  void setBoxesVisible(bool visible);
  const std::vector<PoseInstance>& poses() const { return poses_; }
  double keypointThreshold() const { return keypointThreshold_; }
  /// The selected person box (an index into poses()), or -1.
  int selectedBox() const { return selectedBox_; }
  void selectBox(int index);
  /// Draws the person of track `trackId` (-1: none) emphasised, the others faded, and `path` (image
  /// points, e.g. where the track's feet were frame by frame) as a line in the track's colour.
  void setHighlightedTrack(int trackId, const std::vector<QPointF>& path = {});
  int highlightedTrack() const { return highlightedTrack_; }
  const std::vector<QPointF>& trackPath() const { return trackPath_; }
  /// Removes every result layer (a new image is on the way).
  void clearLayers();

  static constexpr double kMinZoom = 1.0 / 64.0;
  static constexpr double kMaxZoom = 64.0;

 public Q_SLOTS:
  void fitToView();
  void showActualSize();
  /// Multiplies the zoom by `factor`, keeping the image point under `anchor` (widget position) in place.
  void zoomAt(const QPointF& anchor, double factor);
  void zoomIn();
  void zoomOut();

 Q_SIGNALS:
  /// A new image has been drawn for the first time.
  void imageShown();
  void zoomChanged(double zoom);
  /// The cursor is over image pixel `pixel`, whose colour is `color`.
  void pixelHovered(const QPoint& pixel, const QColor& color);
  /// The cursor left the image (or the view).
  void hoverLeft();
  void compareModeChanged(sapiens::widgets::ImageView::CompareMode mode);
  /// The user moved the split divider (setSplitPosition does not report).
  void splitPositionMoved(double fraction);
  /// The user drew a person box (Shift + drag); image pixels, inside the image.
  void personBoxDrawn(const QRectF& imageRect);
  /// The user asked to delete person box `index` (a box was selected and Delete pressed).
  void personBoxDeleteRequested(int index);
  void selectedBoxChanged(int index);
  /// The user clicked person `index` (an index into poses()), or beside every person (-1).
  void personClicked(int index);

 protected:
  void initializeGL() override;
  void resizeGL(int width, int height) override;
  void paintGL() override;
  void wheelEvent(QWheelEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;
  void keyPressEvent(QKeyEvent* event) override;
  void leaveEvent(QEvent* event) override;

 private:
  void releaseGl();
  void uploadTexture();
  void uploadLayers();
  void drawImagePane(const QRectF& pane, float layersFromX);
  void paintPoses(QPainter& painter);
  void paintTrackPath(QPainter& painter);
  void paintTrackTag(QPainter& painter, const PoseInstance& pose, const QColor& color);
  void paintComparisonMarks(QPainter& painter);
  void paintBoxSketch(QPainter& painter);
  /// Where the layers are drawn (widget pixels).
  QRectF layersRect() const;
  int boxAt(const QPointF& imagePoint) const;
  QPointF clampToImage(const QPointF& imagePoint) const;
  bool nearDivider(const QPointF& widgetPos) const;
  double paneWidth() const;
  /// Widget position -> the same position relative to its pane's top-left corner.
  QPointF toPane(const QPointF& widgetPos) const;
  double fitZoom() const;
  void setZoomAndOrigin(double zoom, const QPointF& origin);
  void reportHover(const QPointF& widgetPos);

  cv::Mat image_;
  bool textureStale_ = false;
  bool shownPending_ = false;
  double zoom_ = 1.0;
  QPointF origin_;  // the image's top-left corner, relative to its pane's (every pane draws it there)
  bool fitToView_ = true;
  bool dragging_ = false;
  QPointF lastDragPos_;
  QPointF pressPos_;
  bool draggingDivider_ = false;
  bool sketchingBox_ = false;
  QPointF sketchStart_;  // image pixels
  QPointF sketchEnd_;
  CompareMode compareMode_ = CompareMode::Blend;
  double splitPosition_ = 0.5;
  int selectedBox_ = -1;

  cv::Mat mask_;
  std::vector<QColor> palette_;
  double maskOpacity_ = 0.5;
  bool maskVisible_ = true;
  bool maskStale_ = false;
  bool paletteStale_ = false;
  cv::Mat colorMap_;
  double colorMapOpacity_ = 0.7;
  bool colorMapVisible_ = true;
  bool colorMapStale_ = false;
  std::vector<PoseInstance> poses_;
  double keypointThreshold_ = 0.3;
  bool posesVisible_ = true;
  bool boxesVisible_ = true;
  int highlightedTrack_ = -1;
  std::vector<QPointF> trackPath_;

  /// A texture name and the storage allocated for it: pictures of the same size (video frames, new
  /// results) are written into the existing storage instead of allocating it again.
  struct GlTexture {
    unsigned int id = 0;
    int width = 0;
    int height = 0;
    unsigned int internalFormat = 0;
  };
  void updateMipmaps();
  void uploadPixels(GlTexture& texture, int unit, unsigned int internalFormat, int width, int height,
                    unsigned int format, unsigned int type, const void* pixels);
  GlTexture texture_;
  bool mipmapsStale_ = false;  // made only when the picture is drawn smaller than 1:1
  GlTexture maskTexture_;
  GlTexture paletteTexture_;
  GlTexture colorMapTexture_;
  std::unique_ptr<QOpenGLShaderProgram> program_;
  std::unique_ptr<QOpenGLVertexArrayObject> vertexArray_;
  QMetaObject::Connection contextDestroyed_;
};

}  // namespace sapiens::widgets
