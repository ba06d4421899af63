#pragma once
// Colour themes: the platform's own look, or Fusion with a dark or a light palette.

#include <QString>

namespace sapiens::studio {

enum class Theme { System, Dark, Light };

/// Applies `theme` to the whole application. Call after QApplication exists.
void applyTheme(Theme theme);
QString themeName(Theme theme);
/// Theme::System for unknown names.
Theme themeFromName(const QString& name);

}  // namespace sapiens::studio
