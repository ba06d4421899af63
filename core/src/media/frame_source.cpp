#include "sapiens/media/frame_source.h"

#include "sapiens/media/camera_source.h"
#include "sapiens/media/image_io.h"
#include "sapiens/media/image_sequence_source.h"
#include "sapiens/media/synthetic_live_source.h"
#include "sapiens/media/video_file_source.h"

#include <filesystem>

namespace sapiens {

void FrameSource::seek(std::int64_t frameIndex) {
  throw MediaError(info().name, "cannot seek in a live source (frame " + std::to_string(frameIndex) + ")");
}

std::unique_ptr<FrameSource> openFrameSource(const std::string& pathOrDevice) {
  if (pathOrDevice.rfind("/dev/video", 0) == 0) return std::make_unique<CameraSource>(pathOrDevice);
  if (const auto synthetic = parseSyntheticSourceName(pathOrDevice))
    return std::make_unique<SyntheticLiveSource>(*synthetic);
  std::error_code ec;
  if (std::filesystem::is_directory(pathOrDevice, ec)) return ImageSequenceSource::fromFolder(pathOrDevice);
  if (hasImageExtension(pathOrDevice)) return ImageSequenceSource::fromFile(pathOrDevice);
  return std::make_unique<VideoFileSource>(pathOrDevice);
}

}  // namespace sapiens
