#include "view_choice_menus.h"

#include <QAction>
#include <QActionGroup>
#include <QMenu>
#include <QSettings>

#include <tuple>

namespace sapiens::studio {
namespace {

using CompareMode = widgets::ImageView::CompareMode;

struct CompareModeInfo {
  CompareMode mode;
  const char* id;  // QSettings value and action name suffix
  const char* label;
  const char* keys;
};

constexpr CompareModeInfo kCompareModes[] = {
    {CompareMode::Blend, "blend", "&Blend", "Ctrl+1"},
    {CompareMode::SideBySide, "sideBySide", "&Side by Side", "Ctrl+2"},
    {CompareMode::Split, "split", "S&plit Slider", "Ctrl+3"}};

CompareMode compareModeFromId(const QString& id) {
  for (const CompareModeInfo& info : kCompareModes) {
    if (id == QLatin1String(info.id)) return info.mode;
  }
  return CompareMode::Blend;
}

const char* compareModeId(CompareMode mode) {
  for (const CompareModeInfo& info : kCompareModes) {
    if (info.mode == mode) return info.id;
  }
  return kCompareModes[0].id;
}

void checkOnly(QActionGroup* group, const QString& id) {
  for (QAction* action : group->actions()) action->setChecked(action->data().toString() == id);
}

}  // namespace

CompareModeMenu::CompareModeMenu(widgets::ImageView* view, QMenu* viewMenu)
    : QObject(viewMenu), view_(view), group_(new QActionGroup(this)) {
  QMenu* compare = viewMenu->addMenu(tr("&Comparison"));
  compare->setObjectName(QStringLiteral("compareMenu"));
  for (const CompareModeInfo& info : kCompareModes) {
    QAction* action = compare->addAction(tr(info.label));
    action->setObjectName(QStringLiteral("actionCompare_") + QLatin1String(info.id));
    action->setShortcut(QKeySequence(QString::fromLatin1(info.keys)));
    action->setCheckable(true);
    action->setData(QLatin1String(info.id));
    action->setChecked(info.mode == view_->compareMode());
    const CompareMode mode = info.mode;
    connect(action, &QAction::triggered, this, [this, mode] { set(mode); });
    group_->addAction(action);
  }
}

void CompareModeMenu::set(CompareMode mode) {
  view_->setCompareMode(mode);
  const QString id = QLatin1String(compareModeId(mode));
  checkOnly(group_, id);
  QSettings().setValue(QStringLiteral("view/compareMode"), id);
}

void CompareModeMenu::restore() {
  set(compareModeFromId(QSettings().value(QStringLiteral("view/compareMode")).toString()));
}

ThemeMenu::ThemeMenu(QMenu* viewMenu) : QObject(viewMenu), group_(new QActionGroup(this)) {
  QMenu* themes = viewMenu->addMenu(tr("&Theme"));
  themes->setObjectName(QStringLiteral("themeMenu"));
  // Not Ctrl+Alt+letters: desktops take Ctrl+Alt+L (lock) and Ctrl+Alt+D (show desktop) for themselves.
  const std::tuple<Theme, QString, const char*> choices[] = {{Theme::System, tr("&System"), "Ctrl+Shift+F5"},
                                                             {Theme::Dark, tr("&Dark"), "Ctrl+Shift+F6"},
                                                             {Theme::Light, tr("&Light"), "Ctrl+Shift+F7"}};
  for (const auto& [theme, text, keys] : choices) {
    QAction* action = themes->addAction(text);
    action->setObjectName(QStringLiteral("actionTheme_") + themeName(theme));
    action->setShortcut(QKeySequence(QString::fromLatin1(keys)));
    action->setCheckable(true);
    action->setData(themeName(theme));
    connect(action, &QAction::triggered, this, [this, theme = theme] { set(theme); });
    group_->addAction(action);
  }
}

void ThemeMenu::set(Theme theme) {
  applyTheme(theme);
  checkOnly(group_, themeName(theme));
  QSettings().setValue(QStringLiteral("theme"), themeName(theme));
}

void ThemeMenu::restore() {
  const Theme theme = themeFromName(QSettings().value(QStringLiteral("theme")).toString());
  checkOnly(group_, themeName(theme));
  if (theme != Theme::System) applyTheme(theme);
}

}  // namespace sapiens::studio
