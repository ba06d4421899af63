#pragma once
// The studio's icon at run time (window, dialogs, task switcher): the desktop theme's sapiens-studio icon
// when installed, else the packaged PNGs built into the program.

#include <QIcon>

namespace sapiens::studio {

QIcon studioIcon();

}  // namespace sapiens::studio
