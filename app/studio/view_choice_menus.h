#pragma once
// The View menu's two remembered choices: how the image view compares the layers with the image
// (View > Comparison) and the colour theme (View > Theme). Each is saved when chosen and restored at start.

#include "image_view.h"
#include "theme.h"

#include <QObject>

class QActionGroup;
class QMenu;

namespace sapiens::studio {

class CompareModeMenu : public QObject {
  Q_OBJECT

 public:
  /// Adds View > Comparison to `viewMenu`.
  CompareModeMenu(widgets::ImageView* view, QMenu* viewMenu);
  void set(widgets::ImageView::CompareMode mode);
  /// The mode remembered from the last run (blend the first time).
  void restore();

 private:
  widgets::ImageView* view_;
  QActionGroup* group_;
};

class ThemeMenu : public QObject {
  Q_OBJECT

 public:
  /// Adds View > Theme to `viewMenu`.
  explicit ThemeMenu(QMenu* viewMenu);
  void set(Theme theme);
  /// The theme remembered from the last run (applied unless it is the system's own).
  void restore();

 private:
  QActionGroup* group_;
};

}  // namespace sapiens::studio
