#pragma once
// Help > About Sapiens2 Studio (the versions of every component) and Help > Open Log Folder.

class QMainWindow;

namespace sapiens::studio {

void addHelpMenu(QMainWindow* window);

}  // namespace sapiens::studio
