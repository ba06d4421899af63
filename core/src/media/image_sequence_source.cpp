#include "sapiens/media/image_sequence_source.h"

#include "sapiens/media/image_io.h"

#include <utility>

namespace sapiens {

ImageSequenceSource::ImageSequenceSource(std::vector<std::string> paths, std::string name, double fps)
    : paths_(std::move(paths)) {
  if (!(fps > 0)) throw MediaError(name, "fps must be positive");
  info_.name = std::move(name);
  info_.fps = fps;
  info_.timeBase = {1, 1};
  // Whole-number rates get an exact time base; others a millisecond-exact one.
  if (fps == static_cast<int>(fps))
    info_.timeBase = {1, static_cast<int>(fps)};
  else
    info_.timeBase = {1, 1000};
  info_.frameCount = static_cast<std::int64_t>(paths_.size());
  info_.durationSeconds = static_cast<double>(paths_.size()) / fps;
  info_.codec = "image";
}

std::unique_ptr<ImageSequenceSource> ImageSequenceSource::fromFile(const std::string& path) {
  cv::Mat picture = readImageBgr(path);
  auto source = std::make_unique<ImageSequenceSource>(std::vector<std::string>{path}, path);
  source->info_.width = picture.cols;
  source->info_.height = picture.rows;
  source->preloaded_ = std::move(picture);
  return source;
}

std::unique_ptr<ImageSequenceSource> ImageSequenceSource::fromFolder(const std::string& folder,
                                                                     bool recursive) {
  std::vector<std::string> paths = listImages(folder, recursive);
  if (paths.empty()) throw MediaError(folder, "no images in the folder");
  return std::make_unique<ImageSequenceSource>(std::move(paths), folder);
}

std::optional<Frame> ImageSequenceSource::next() {
  if (position_ >= paths_.size()) return std::nullopt;
  Frame frame;
  frame.index = static_cast<std::int64_t>(position_);
  frame.timestampSeconds = static_cast<double>(position_) / info_.fps;
  const std::string& path = paths_[position_++];
  if (!preloaded_.empty()) {
    frame.bgr = std::move(preloaded_);
    preloaded_ = cv::Mat();
  } else {
    frame.bgr = readImageBgr(path);
  }
  return frame;
}

void ImageSequenceSource::seek(std::int64_t frameIndex) {
  if (frameIndex < 0 || frameIndex >= static_cast<std::int64_t>(paths_.size()))
    throw MediaError(info_.name, "cannot seek to picture " + std::to_string(frameIndex) + " of " +
                                     std::to_string(paths_.size()));
  position_ = static_cast<std::size_t>(frameIndex);
}

void ImageSequenceSource::close() {
  position_ = paths_.size();
  preloaded_ = cv::Mat();
}

}  // namespace sapiens
