#pragma once
// Where things live on disk.

#include <string>

namespace sapiens::paths {

/// $HOME, or the password database's home folder.
std::string home();
/// $SAPIENS_CHECKPOINT_ROOT when set (it wins), else `chosen` (the studio's setting) when not empty, else
/// ~/sapiens2_host. The official layout: pose/ seg/ normal/ pointmap/ ... under it.
std::string checkpointRoot(const std::string& chosen = "");
/// Whether $SAPIENS_CHECKPOINT_ROOT decides the root (a chosen one is then ignored).
bool checkpointRootFromEnvironment();
/// Folder with keypoints308.json, seg29.json and the bundled samples: $SAPIENS_RESOURCE_DIR, the
/// installed share/sapiens2-studio, or the source tree's resources/ (in that order of existence).
std::string resourceDir();
/// $XDG_DATA_HOME/sapiens2-studio or ~/.local/share/sapiens2-studio (created on demand).
std::string userDataDir();

}  // namespace sapiens::paths
