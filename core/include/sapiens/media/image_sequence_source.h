#pragma once
// Still images as a frame source: one file, or every image of a folder (media/image_io.h's listImages
// order). Pictures are read one by one when pulled.

#include "sapiens/media/frame_source.h"

#include <string>
#include <vector>

namespace sapiens {

class ImageSequenceSource : public FrameSource {
 public:
  /// `paths` in the order to hand them out; `name` is the file or folder they came from. Frame i gets the
  /// timestamp i / fps (fps only matters when the pictures are written as a video).
  ImageSequenceSource(std::vector<std::string> paths, std::string name, double fps = 25);

  /// One image, decoded at once so that a bad file fails here. Throws MediaError naming it.
  static std::unique_ptr<ImageSequenceSource> fromFile(const std::string& path);
  /// The images in `folder` (its sub-folders too when `recursive`). Throws MediaError naming the folder
  /// when it is missing or holds no image.
  static std::unique_ptr<ImageSequenceSource> fromFolder(const std::string& folder, bool recursive = false);

  const SourceInfo& info() const override { return info_; }
  /// A picture that cannot be read throws MediaError naming it; the source has then moved past it, so
  /// the caller may report it and call next() again for the rest.
  std::optional<Frame> next() override;
  bool seekable() const override { return true; }
  void seek(std::int64_t frameIndex) override;
  void close() override;

  const std::vector<std::string>& paths() const { return paths_; }

 private:
  std::vector<std::string> paths_;
  SourceInfo info_;
  std::size_t position_ = 0;
  cv::Mat preloaded_;  // fromFile's picture, handed out by the first next()
};

}  // namespace sapiens
