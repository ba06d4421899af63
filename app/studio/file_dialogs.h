#pragma once
// What the studio's file dialogs share: where they open (the folder of the last file chosen in any of
// them, remembered between runs, else the home folder) and the filters of pictures and videos.

#include <QString>

namespace sapiens::studio {

inline constexpr const char* kImageFilter =
    "Images (*.png *.jpg *.jpeg *.bmp *.tif *.tiff *.webp *.exr);;All files (*)";
inline constexpr const char* kVideoFilter =
    "Videos (*.mp4 *.m4v *.mov *.mkv *.webm *.avi *.mpg *.mpeg *.ts *.mts *.wmv *.flv *.gif);;All files (*)";

QString dialogDirectory();
/// Remembers the folder of `path` (a file), or `path` itself when it is a folder.
void rememberDialogDirectory(const QString& path);

}  // namespace sapiens::studio
