#include "theme.h"

#include <QApplication>
#include <QPalette>
#include <QStyle>
#include <QStyleFactory>

namespace sapiens::studio {
namespace {

QPalette darkPalette() {
  QPalette p;
  const QColor window(45, 45, 48), base(30, 30, 32), text(220, 220, 220), disabled(120, 120, 120);
  const QColor highlight(42, 130, 218);
  p.setColor(QPalette::Window, window);
  p.setColor(QPalette::WindowText, text);
  p.setColor(QPalette::Base, base);
  p.setColor(QPalette::AlternateBase, window);
  p.setColor(QPalette::ToolTipBase, base);
  p.setColor(QPalette::ToolTipText, text);
  p.setColor(QPalette::PlaceholderText, disabled);
  p.setColor(QPalette::Text, text);
  p.setColor(QPalette::Button, window);
  p.setColor(QPalette::ButtonText, text);
  p.setColor(QPalette::BrightText, Qt::red);
  p.setColor(QPalette::Link, highlight);
  p.setColor(QPalette::Highlight, highlight);
  p.setColor(QPalette::HighlightedText, Qt::white);
  p.setColor(QPalette::Light, QColor(70, 70, 74));
  p.setColor(QPalette::Midlight, QColor(60, 60, 64));
  p.setColor(QPalette::Mid, QColor(40, 40, 42));
  p.setColor(QPalette::Dark, QColor(25, 25, 27));
  p.setColor(QPalette::Shadow, Qt::black);
  for (auto role : {QPalette::WindowText, QPalette::Text, QPalette::ButtonText}) {
    p.setColor(QPalette::Disabled, role, disabled);
  }
  p.setColor(QPalette::Disabled, QPalette::Highlight, QColor(80, 80, 80));
  return p;
}

// The style the platform chose at start-up, remembered before any theme replaces it.
QString systemStyleName() {
  static const QString name = QApplication::style()->name();
  return name;
}

}  // namespace

void applyTheme(Theme theme) {
  const QString systemStyle = systemStyleName();
  if (theme == Theme::System) {
    QApplication::setStyle(QStyleFactory::create(systemStyle));
    QApplication::setPalette(QApplication::style()->standardPalette());
    return;
  }
  QApplication::setStyle(QStyleFactory::create(QStringLiteral("Fusion")));
  QApplication::setPalette(theme == Theme::Dark ? darkPalette() : QApplication::style()->standardPalette());
}

QString themeName(Theme theme) {
  switch (theme) {
    case Theme::Dark:
      return QStringLiteral("dark");
    case Theme::Light:
      return QStringLiteral("light");
    case Theme::System:
      break;
  }
  return QStringLiteral("system");
}

Theme themeFromName(const QString& name) {
  if (name == QLatin1String("dark")) return Theme::Dark;
  if (name == QLatin1String("light")) return Theme::Light;
  return Theme::System;
}

}  // namespace sapiens::studio
