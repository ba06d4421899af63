#include "sapiens/media/camera_source.h"

#include "sapiens/common/log.h"

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include <fcntl.h>
#include <linux/videodev2.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <string>

namespace sapiens {
namespace {

int ioctlRetry(int fd, unsigned long request, void* argument) {
  int result = 0;
  do {
    result = ::ioctl(fd, request, argument);
  } while (result < 0 && errno == EINTR);
  return result;
}

std::string fourcc(std::uint32_t code) {
  std::string text(4, ' ');
  for (int i = 0; i < 4; ++i) text[static_cast<std::size_t>(i)] = static_cast<char>((code >> (8 * i)) & 0xFF);
  return text;
}

std::string cString(const unsigned char* text, std::size_t size) {
  return std::string(reinterpret_cast<const char*>(text), strnlen(reinterpret_cast<const char*>(text), size));
}

// Capture capability of the node itself (device_caps), not of the whole device.
bool capturesVideo(const v4l2_capability& capability) {
  const std::uint32_t caps =
      (capability.capabilities & V4L2_CAP_DEVICE_CAPS) ? capability.device_caps : capability.capabilities;
  return (caps & V4L2_CAP_VIDEO_CAPTURE) && (caps & V4L2_CAP_STREAMING);
}

// Formats we convert, best first: uncompressed ones cost no decoding; MJPG goes first for large sizes,
// where USB 2 cameras deliver uncompressed pictures only at a few frames per second.
std::vector<std::uint32_t> preferredFormats(int width, int height) {
  std::vector<std::uint32_t> formats = {V4L2_PIX_FMT_YUYV,  V4L2_PIX_FMT_UYVY, V4L2_PIX_FMT_BGR24,
                                        V4L2_PIX_FMT_RGB24, V4L2_PIX_FMT_NV12, V4L2_PIX_FMT_YUV420,
                                        V4L2_PIX_FMT_GREY,  V4L2_PIX_FMT_MJPEG};
  if (static_cast<long>(width) * height > 640L * 480) {
    formats.pop_back();
    formats.insert(formats.begin(), V4L2_PIX_FMT_MJPEG);
  }
  return formats;
}

struct MappedBuffer {
  void* start = MAP_FAILED;
  std::size_t length = 0;
};

}  // namespace

std::vector<CameraDevice> listCameras() {
  std::vector<std::pair<int, CameraDevice>> found;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/dev", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("video", 0) != 0 || name.size() == 5) continue;
    const std::string number = name.substr(5);
    if (!std::all_of(number.begin(), number.end(), [](char c) { return c >= '0' && c <= '9'; })) continue;
    const int fd = ::open(entry.path().c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
      logger().debug("{}: cannot open ({})", entry.path().string(), std::strerror(errno));
      continue;
    }
    v4l2_capability capability{};
    const bool ok = ioctlRetry(fd, VIDIOC_QUERYCAP, &capability) == 0 && capturesVideo(capability);
    ::close(fd);
    if (!ok) continue;
    CameraDevice device;
    device.path = entry.path().string();
    device.name = cString(capability.card, sizeof capability.card);
    device.driver = cString(capability.driver, sizeof capability.driver);
    device.busInfo = cString(capability.bus_info, sizeof capability.bus_info);
    found.emplace_back(std::stoi(number), device);
  }
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<CameraDevice> cameras;
  for (auto& [number, device] : found) cameras.push_back(std::move(device));
  return cameras;
}

struct CameraSource::State {
  std::string path;
  CameraOptions options;
  SourceInfo info;
  int fd = -1;
  std::uint32_t pixelFormat = 0;
  std::uint32_t bytesPerLine = 0;
  std::vector<MappedBuffer> buffers;
  bool streaming = false;
  std::int64_t firstSequence = -1;
  std::int64_t lastSequence = -1;
  std::int64_t dropped = 0;
  double firstTimestamp = 0;

  MediaError failure(const std::string& what) const {
    return MediaError(path, what + ": " + std::strerror(errno));
  }

  void release() {
    if (fd < 0) return;
    if (streaming) {
      v4l2_buf_type type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
      ioctlRetry(fd, VIDIOC_STREAMOFF, &type);
      streaming = false;
    }
    for (auto& buffer : buffers)
      if (buffer.start != MAP_FAILED) ::munmap(buffer.start, buffer.length);
    buffers.clear();
    ::close(fd);
    fd = -1;
  }

  void chooseFormat() {
    std::vector<std::uint32_t> offered;
    v4l2_fmtdesc description{};
    description.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    for (description.index = 0; ioctlRetry(fd, VIDIOC_ENUM_FMT, &description) == 0; ++description.index)
      offered.push_back(description.pixelformat);

    v4l2_format format{};
    format.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    if (ioctlRetry(fd, VIDIOC_G_FMT, &format) < 0) throw failure("cannot read the capture format");
    const int width = options.width > 0 ? options.width : static_cast<int>(format.fmt.pix.width);
    const int height = options.height > 0 ? options.height : static_cast<int>(format.fmt.pix.height);
    std::uint32_t chosen = 0;
    for (std::uint32_t candidate : preferredFormats(width, height))
      if (std::find(offered.begin(), offered.end(), candidate) != offered.end()) {
        chosen = candidate;
        break;
      }
    if (chosen == 0) {
      std::string list;
      for (std::uint32_t code : offered) list += " " + fourcc(code);
      throw MediaError(path, "offers no pixel format this program converts (it offers:" + list + ")");
    }
    format.fmt.pix.width = static_cast<std::uint32_t>(width);
    format.fmt.pix.height = static_cast<std::uint32_t>(height);
    format.fmt.pix.pixelformat = chosen;
    format.fmt.pix.field = V4L2_FIELD_ANY;
    if (ioctlRetry(fd, VIDIOC_S_FMT, &format) < 0) throw failure("cannot set the capture format");
    pixelFormat = format.fmt.pix.pixelformat;
    bytesPerLine = format.fmt.pix.bytesperline;
    info.width = static_cast<int>(format.fmt.pix.width);
    info.height = static_cast<int>(format.fmt.pix.height);
    info.codec = "v4l2 " + fourcc(pixelFormat);
  }

  void chooseRate() {
    v4l2_streamparm parameters{};
    parameters.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    if (ioctlRetry(fd, VIDIOC_G_PARM, &parameters) < 0) return;
    if (options.fps > 0 && (parameters.parm.capture.capability & V4L2_CAP_TIMEPERFRAME)) {
      parameters.parm.capture.timeperframe.numerator = 1000;
      parameters.parm.capture.timeperframe.denominator =
          static_cast<std::uint32_t>(std::lround(options.fps * 1000));
      if (ioctlRetry(fd, VIDIOC_S_PARM, &parameters) < 0)
        logger().warn("{}: cannot set {} fps: {}", path, options.fps, std::strerror(errno));
    }
    const v4l2_fract period = parameters.parm.capture.timeperframe;
    if (period.numerator > 0 && period.denominator > 0) {
      info.fps = static_cast<double>(period.denominator) / period.numerator;
      info.timeBase = {static_cast<int>(period.numerator), static_cast<int>(period.denominator)};
    }
  }

  void startStreaming() {
    v4l2_requestbuffers request{};
    request.count = 4;
    request.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    request.memory = V4L2_MEMORY_MMAP;
    if (ioctlRetry(fd, VIDIOC_REQBUFS, &request) < 0) throw failure("cannot allocate capture buffers");
    if (request.count < 2) throw MediaError(path, "the driver granted fewer than 2 capture buffers");
    buffers.resize(request.count);
    for (std::uint32_t i = 0; i < request.count; ++i) {
      v4l2_buffer buffer{};
      buffer.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
      buffer.memory = V4L2_MEMORY_MMAP;
      buffer.index = i;
      if (ioctlRetry(fd, VIDIOC_QUERYBUF, &buffer) < 0) throw failure("cannot query capture buffer");
      buffers[i].length = buffer.length;
      buffers[i].start =
          ::mmap(nullptr, buffer.length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, buffer.m.offset);
      if (buffers[i].start == MAP_FAILED) throw failure("cannot map capture buffer");
      if (ioctlRetry(fd, VIDIOC_QBUF, &buffer) < 0) throw failure("cannot queue capture buffer");
    }
    v4l2_buf_type type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    if (ioctlRetry(fd, VIDIOC_STREAMON, &type) < 0) throw failure("cannot start streaming");
    streaming = true;
  }

  cv::Mat toBgr(const unsigned char* data, std::size_t size) const {
    const int w = info.width;
    const int h = info.height;
    const auto stride = static_cast<std::size_t>(bytesPerLine);
    cv::Mat bgr;
    auto need = [&](std::size_t bytes) {
      if (size < bytes) throw MediaError(path, "short frame from the driver");
    };
    auto* bytes = const_cast<unsigned char*>(data);  // wrapped read-only by the cv::Mats below
    switch (pixelFormat) {
      case V4L2_PIX_FMT_YUYV:
      case V4L2_PIX_FMT_UYVY:
        need(stride * static_cast<std::size_t>(h));
        cv::cvtColor(cv::Mat(h, w, CV_8UC2, bytes, stride), bgr,
                     pixelFormat == V4L2_PIX_FMT_YUYV ? cv::COLOR_YUV2BGR_YUYV : cv::COLOR_YUV2BGR_UYVY);
        break;
      case V4L2_PIX_FMT_BGR24:
        need(stride * static_cast<std::size_t>(h));
        bgr = cv::Mat(h, w, CV_8UC3, bytes, stride).clone();
        break;
      case V4L2_PIX_FMT_RGB24:
        need(stride * static_cast<std::size_t>(h));
        cv::cvtColor(cv::Mat(h, w, CV_8UC3, bytes, stride), bgr, cv::COLOR_RGB2BGR);
        break;
      case V4L2_PIX_FMT_GREY:
        need(stride * static_cast<std::size_t>(h));
        cv::cvtColor(cv::Mat(h, w, CV_8UC1, bytes, stride), bgr, cv::COLOR_GRAY2BGR);
        break;
      case V4L2_PIX_FMT_NV12:
      case V4L2_PIX_FMT_YUV420:
        need(static_cast<std::size_t>(w) * static_cast<std::size_t>(h) * 3 / 2);
        cv::cvtColor(cv::Mat(h * 3 / 2, w, CV_8UC1, bytes), bgr,
                     pixelFormat == V4L2_PIX_FMT_NV12 ? cv::COLOR_YUV2BGR_NV12 : cv::COLOR_YUV2BGR_I420);
        break;
      case V4L2_PIX_FMT_MJPEG:
        bgr = cv::imdecode(cv::Mat(1, static_cast<int>(size), CV_8UC1, bytes), cv::IMREAD_COLOR);
        if (bgr.empty()) throw MediaError(path, "undecodable MJPEG frame");
        break;
      default:
        throw MediaError(path, "unsupported pixel format " + fourcc(pixelFormat));
    }
    return bgr;
  }
};

CameraSource::CameraSource(const std::string& device, const CameraOptions& options)
    : state_(std::make_unique<State>()) {
  State& s = *state_;
  s.path = device;
  s.options = options;
  s.info.name = device;
  s.info.live = true;
  s.fd = ::open(device.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC);
  if (s.fd < 0) throw s.failure(errno == ENOENT ? "no such camera" : "cannot open the camera");
  try {
    v4l2_capability capability{};
    if (ioctlRetry(s.fd, VIDIOC_QUERYCAP, &capability) < 0) throw MediaError(device, "is not a V4L2 device");
    if (!capturesVideo(capability))
      throw MediaError(
          device, "is not a video capture device (" + cString(capability.card, sizeof capability.card) + ")");
    s.chooseFormat();
    s.chooseRate();
    s.startStreaming();
  } catch (...) {
    s.release();
    throw;
  }
  logger().info("{}: {}x{} at {:.2f} fps, {}", device, s.info.width, s.info.height, s.info.fps, s.info.codec);
}

CameraSource::~CameraSource() {
  state_->release();
}

const SourceInfo& CameraSource::info() const {
  return state_->info;
}

std::int64_t CameraSource::droppedFrames() const {
  return state_->dropped;
}

std::optional<Frame> CameraSource::next() {
  State& s = *state_;
  if (s.fd < 0) return std::nullopt;
  pollfd waiting{s.fd, POLLIN, 0};
  int ready = 0;
  do {
    ready = ::poll(&waiting, 1, s.options.readTimeoutMs);
  } while (ready < 0 && errno == EINTR);
  if (ready < 0) throw s.failure("camera stopped");
  if (ready == 0)
    throw MediaError(s.path, "no frame for " + std::to_string(s.options.readTimeoutMs) + " ms (unplugged?)");
  if (waiting.revents & (POLLERR | POLLHUP | POLLNVAL)) throw MediaError(s.path, "camera disconnected");

  // Drain the queue: keep the newest buffer, give the others straight back.
  v4l2_buffer newest{};
  bool have = false;
  for (;;) {
    v4l2_buffer buffer{};
    buffer.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    buffer.memory = V4L2_MEMORY_MMAP;
    if (ioctlRetry(s.fd, VIDIOC_DQBUF, &buffer) < 0) {
      if (errno == EAGAIN && have) break;
      if (errno == EAGAIN) return next();  // woken without a buffer; wait again
      throw s.failure(errno == ENODEV ? "camera disconnected" : "cannot dequeue a frame");
    }
    if (have) {  // counted as dropped through the sequence numbers below
      if (ioctlRetry(s.fd, VIDIOC_QBUF, &newest) < 0) throw s.failure("cannot requeue a frame");
    }
    newest = buffer;
    have = true;
  }
  Frame frame;
  const auto sequence = static_cast<std::int64_t>(newest.sequence);
  if (s.firstSequence < 0) {
    s.firstSequence = sequence;
    s.firstTimestamp = static_cast<double>(newest.timestamp.tv_sec) + newest.timestamp.tv_usec * 1e-6;
  } else if (sequence > s.lastSequence + 1) {
    s.dropped += sequence - s.lastSequence - 1;  // lost in the driver, before we could dequeue them
  }
  s.lastSequence = sequence;
  frame.index = sequence - s.firstSequence;
  frame.timestampSeconds =
      static_cast<double>(newest.timestamp.tv_sec) + newest.timestamp.tv_usec * 1e-6 - s.firstTimestamp;
  const bool corrupt = newest.flags & V4L2_BUF_FLAG_ERROR;
  try {
    if (!corrupt)
      frame.bgr = s.toBgr(static_cast<const unsigned char*>(s.buffers[newest.index].start), newest.bytesused);
  } catch (...) {
    ioctlRetry(s.fd, VIDIOC_QBUF, &newest);
    throw;
  }
  if (ioctlRetry(s.fd, VIDIOC_QBUF, &newest) < 0) throw s.failure("cannot requeue a frame");
  if (corrupt) {  // the driver flagged a damaged frame: skip it like a dropped one
    ++s.dropped;
    return next();
  }
  return frame;
}

void CameraSource::close() {
  state_->release();
}

}  // namespace sapiens
