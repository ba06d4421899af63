#pragma once
// Cameras through V4L2 directly (memory-mapped buffers, poll with a timeout): an unplugged or stalled
// camera ends with a MediaError instead of a hang. Latest frame wins: each next() drains the driver's
// queue and returns the newest picture; the older ones are counted as dropped.

#include "sapiens/media/frame_source.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace sapiens {

struct CameraDevice {
  std::string path;     ///< /dev/videoN
  std::string name;     ///< VIDIOC_QUERYCAP's card name, e.g. "HD Pro Webcam C920"
  std::string driver;   ///< e.g. "uvcvideo"
  std::string busInfo;  ///< e.g. "usb-0000:00:14.0-1"; tells apart two cameras of the same model
};

/// The /dev/video* nodes that capture video (metadata-only and output nodes are left out), sorted by
/// number. Empty when there is none.
std::vector<CameraDevice> listCameras();

struct CameraOptions {
  int width = 0;  ///< requested size; 0: the driver's current one. The driver picks the nearest.
  int height = 0;
  double fps = 0;            ///< requested rate; 0: the driver's current one
  int readTimeoutMs = 3000;  ///< next() throws MediaError when no frame comes for this long
};

class CameraSource : public FrameSource {
 public:
  /// Opens and starts streaming. Throws MediaError naming the device: missing, busy, not a capture
  /// device, or no pixel format this class converts (YUYV, UYVY, MJPG, RGB3, BGR3, GREY, NV12, YU12).
  explicit CameraSource(const std::string& device, const CameraOptions& options = {});
  ~CameraSource() override;

  /// width, height, fps as the driver granted them; live = true.
  const SourceInfo& info() const override;
  /// The newest frame; timestamps from the driver's capture clock, 0 at the first frame. Throws
  /// MediaError when the device disappears or sends nothing for readTimeoutMs.
  std::optional<Frame> next() override;
  void close() override;

  /// Frames the driver captured and next() skipped (from the buffers' sequence numbers).
  std::int64_t droppedFrames() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace sapiens
