#include "sapiens/pipeline/temporal_smoothing.h"

#include "sapiens/pipeline/keypoint_lifting.h"

#include <opencv2/core.hpp>

#include <cmath>
#include <limits>

namespace sapiens {
namespace {

constexpr double kPi = 3.14159265358979323846;

double smoothingFactor(double cutoffHz, double dtSeconds) {
  const double tau = 1.0 / (2.0 * kPi * cutoffHz);
  return 1.0 / (1.0 + tau / dtSeconds);
}

bool finite3(const cv::Vec3f& v) {
  return std::isfinite(v[0]) && std::isfinite(v[1]) && std::isfinite(v[2]);
}

// Blends `current` towards `state` pixel by pixel where `similar(previous, current)` holds; elsewhere the
// pixel restarts from the current value. `state` becomes the result.
bool finitePixel(const cv::Vec3f& v) {
  return finite3(v);
}

bool finitePixel(float v) {
  return std::isfinite(v);
}

// `Pixel`: cv::Vec3f (CV_32FC3 maps) or float (the alpha matte).
template <class Pixel, class Similar, class Finish>
void blendMap(cv::Mat& current, cv::Mat& state, double blend, Similar similar, Finish finish) {
  if (current.empty()) {
    state.release();
    return;
  }
  if (state.size() != current.size() || state.type() != current.type()) {
    state = current.clone();
    return;
  }
  const float a = static_cast<float>(blend);
  for (int y = 0; y < current.rows; ++y) {
    auto* cur = current.ptr<Pixel>(y);
    auto* prev = state.ptr<Pixel>(y);
    for (int x = 0; x < current.cols; ++x) {
      if (finitePixel(cur[x]) && finitePixel(prev[x]) && similar(prev[x], cur[x])) {
        cur[x] = finish(prev[x] + a * (cur[x] - prev[x]));
      }
      prev[x] = cur[x];
    }
  }
}

}  // namespace

double OneEuroFilter::filter(double x, double timestampSeconds) {
  // A value without a place (a NaN or infinite output, already flagged) passes through and leaves the
  // state alone: once in the state it would make every later frame non-finite too.
  if (!std::isfinite(x) || !std::isfinite(timestampSeconds)) return x;
  if (!started_ || timestampSeconds <= previousTime_) {
    const bool restart = !started_ || timestampSeconds < previousTime_;
    started_ = true;
    if (restart) {
      previous_ = x;
      previousDerivative_ = 0;
    }
    previousTime_ = timestampSeconds;
    return previous_;
  }
  const double dt = timestampSeconds - previousTime_;
  const double derivative = (x - previous_) / dt;
  const double ad = smoothingFactor(parameters_.derivativeCutoff, dt);
  previousDerivative_ = previousDerivative_ + ad * (derivative - previousDerivative_);
  const double cutoff = parameters_.minCutoff + parameters_.beta * std::abs(previousDerivative_);
  const double a = smoothingFactor(cutoff, dt);
  previous_ = previous_ + a * (x - previous_);
  previousTime_ = timestampSeconds;
  return previous_;
}

namespace {
constexpr int kMissedFramesKept = 30;
}  // namespace

void TemporalSmoother::smoothPoses(FrameResult& frame, double timestampSeconds) {
  std::vector<Track> next;
  std::vector<bool> taken(tracks_.size(), false);
  for (PoseInstance& pose : frame.poses) {
    const float cx = (pose.bbox.x1 + pose.bbox.x2) / 2, cy = (pose.bbox.y1 + pose.bbox.y2) / 2;
    const float reach = 0.5f * std::hypot(pose.bbox.width(), pose.bbox.height());
    int best = -1;
    float bestDistance = std::numeric_limits<float>::max();
    for (std::size_t t = 0; t < tracks_.size(); ++t) {
      if (taken[t] || tracks_[t].filters.size() != 2 * pose.keypoints.size()) continue;
      if (pose.trackId >= 0) {  // tracked people keep their own filters, whoever comes near
        if (tracks_[t].id == pose.trackId) best = static_cast<int>(t);
        continue;
      }
      const float d = std::hypot(tracks_[t].centerX - cx, tracks_[t].centerY - cy);
      if (d < reach && d < bestDistance) {
        best = static_cast<int>(t);
        bestDistance = d;
      }
    }
    Track track;
    if (best >= 0) {
      taken[static_cast<std::size_t>(best)] = true;
      track = std::move(tracks_[static_cast<std::size_t>(best)]);
    } else {
      track.filters.assign(2 * pose.keypoints.size(), OneEuroFilter(options_.keypoints));
    }
    track.id = pose.trackId;
    track.centerX = cx;
    track.centerY = cy;
    for (std::size_t k = 0; k < pose.keypoints.size(); ++k) {
      pose.keypoints[k][0] = track.filters[2 * k].filter(pose.keypoints[k][0], timestampSeconds);
      pose.keypoints[k][1] = track.filters[2 * k + 1].filter(pose.keypoints[k][1], timestampSeconds);
    }
    track.missed = 0;
    next.push_back(std::move(track));
  }
  // A tracked person out of sight (occluded, missed) keeps their filters for when they come back.
  for (std::size_t t = 0; t < tracks_.size(); ++t) {
    if (!taken[t] && tracks_[t].id >= 0 && ++tracks_[t].missed <= kMissedFramesKept)
      next.push_back(std::move(tracks_[t]));
  }
  tracks_ = std::move(next);
}

void TemporalSmoother::apply(FrameResult& frame, double timestampSeconds) {
  smoothPoses(frame, timestampSeconds);
  const float depthLimit = static_cast<float>(options_.depthChangeLimit);
  blendMap<cv::Vec3f>(
      frame.pointmap, pointmap_, options_.mapBlend,
      [&](const cv::Vec3f& p, const cv::Vec3f& c) {
        return std::abs(c[2] - p[2]) <= depthLimit * std::abs(p[2]);
      },
      [](const cv::Vec3f& v) { return v; });
  const float cosLimit = static_cast<float>(std::cos(options_.normalChangeDegrees * kPi / 180.0));
  blendMap<cv::Vec3f>(
      frame.normal, normal_, options_.mapBlend,
      [&](const cv::Vec3f& p, const cv::Vec3f& c) { return p.dot(c) >= cosLimit; },
      [](const cv::Vec3f& v) {
        const float n = static_cast<float>(cv::norm(v));
        return n > 1e-8f ? cv::Vec3f(v / n) : v;
      });
  const float albedoLimit = static_cast<float>(options_.albedoChangeLimit);
  blendMap<cv::Vec3f>(
      frame.albedo, albedo_, options_.mapBlend,
      [&](const cv::Vec3f& p, const cv::Vec3f& c) {
        const cv::Vec3f d = c - p;
        return std::abs(d[0]) <= albedoLimit && std::abs(d[1]) <= albedoLimit &&
               std::abs(d[2]) <= albedoLimit;
      },
      [](const cv::Vec3f& v) { return v; });
  smoothMatte(frame);
  liftFrameKeypoints(frame);  // from the smoothed keypoints and pointmap
}

// The alpha matte and its (premultiplied) foreground: a pixel that changes by more than the limit (an edge
// that moved) restarts, so a moving silhouette leaves no ghost.
void TemporalSmoother::smoothMatte(FrameResult& frame) {
  const float alphaLimit = static_cast<float>(options_.alphaChangeLimit);
  blendMap<float>(
      frame.alpha, alpha_, options_.mapBlend, [&](float p, float c) { return std::abs(c - p) <= alphaLimit; },
      [](float v) { return v; });
  blendMap<cv::Vec3f>(
      frame.foreground, foreground_, options_.mapBlend,
      [&](const cv::Vec3f& p, const cv::Vec3f& c) {
        const cv::Vec3f d = c - p;
        return std::abs(d[0]) <= alphaLimit && std::abs(d[1]) <= alphaLimit && std::abs(d[2]) <= alphaLimit;
      },
      [](const cv::Vec3f& v) { return v; });
}

double frameToFrameChange(const cv::Mat& previous, const cv::Mat& current) {
  if (previous.empty() || previous.size() != current.size() || previous.type() != CV_32FC3 ||
      current.type() != CV_32FC3)
    return 0.0;
  double sum = 0;
  std::int64_t count = 0;
  for (int y = 0; y < current.rows; ++y) {
    const auto* p = previous.ptr<cv::Vec3f>(y);
    const auto* c = current.ptr<cv::Vec3f>(y);
    for (int x = 0; x < current.cols; ++x) {
      if (!finite3(p[x]) || !finite3(c[x])) continue;
      sum += std::abs(c[x][0] - p[x][0]) + std::abs(c[x][1] - p[x][1]) + std::abs(c[x][2] - p[x][2]);
      count += 3;
    }
  }
  return count ? sum / static_cast<double>(count) : 0.0;
}

}  // namespace sapiens
