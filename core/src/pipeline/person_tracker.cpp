#include "sapiens/pipeline/person_tracker.h"

#include "optimal_assignment.h"

#include <opencv2/video/tracking.hpp>

#include <algorithm>
#include <cmath>

namespace sapiens {

namespace {

// OKS's falloff per keypoint relative to the person's scale: COCO's sigmas span 0.025 (eyes) to 0.107
// (hips); Goliath's 308 have none published, and most are face and hand points.
constexpr double kKeypointSigma = 0.05;

// State (cx, cy, w, h, vx, vy, vw, vh), measured (cx, cy, w, h), one frame per step.
cv::KalmanFilter boxFilter(const BoundingBox& box) {
  cv::KalmanFilter filter(8, 4, 0, CV_32F);
  cv::setIdentity(filter.transitionMatrix);
  for (int i = 0; i < 4; ++i) filter.transitionMatrix.at<float>(i, i + 4) = 1.0f;
  filter.measurementMatrix = cv::Mat::zeros(4, 8, CV_32F);
  for (int i = 0; i < 4; ++i) filter.measurementMatrix.at<float>(i, i) = 1.0f;
  // Noise scaled by the box: a person's size sets how far they move between frames.
  const float scale = std::max(1.0f, std::max(box.width(), box.height()));
  cv::setIdentity(filter.processNoiseCov, cv::Scalar::all(std::pow(0.02f * scale, 2.0f)));
  for (int i = 4; i < 8; ++i) filter.processNoiseCov.at<float>(i, i) = std::pow(0.01f * scale, 2.0f);
  cv::setIdentity(filter.measurementNoiseCov, cv::Scalar::all(std::pow(0.03f * scale, 2.0f)));
  cv::setIdentity(filter.errorCovPost, cv::Scalar::all(std::pow(0.1f * scale, 2.0f)));
  for (int i = 4; i < 8; ++i) filter.errorCovPost.at<float>(i, i) = std::pow(0.1f * scale, 2.0f);
  filter.statePost = cv::Mat::zeros(8, 1, CV_32F);
  filter.statePost.at<float>(0) = (box.x1 + box.x2) / 2;
  filter.statePost.at<float>(1) = (box.y1 + box.y2) / 2;
  filter.statePost.at<float>(2) = box.width();
  filter.statePost.at<float>(3) = box.height();
  return filter;
}

cv::Mat measurement(const BoundingBox& box) {
  return (cv::Mat_<float>(4, 1) << (box.x1 + box.x2) / 2, (box.y1 + box.y2) / 2, box.width(), box.height());
}

BoundingBox boxOfState(const cv::Mat& state) {
  const float cx = state.at<float>(0), cy = state.at<float>(1);
  const float w = std::max(1.0f, state.at<float>(2)), h = std::max(1.0f, state.at<float>(3));
  return {cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2};
}

}  // namespace

double boxIou(const BoundingBox& a, const BoundingBox& b) {
  if (!a.isFinite() || !b.isFinite()) return 0.0;
  const double w = std::min(a.x2, b.x2) - std::max(a.x1, b.x1);
  const double h = std::min(a.y2, b.y2) - std::max(a.y1, b.y1);
  if (w <= 0 || h <= 0) return 0.0;
  const double overlap = w * h;
  const double areas =
      static_cast<double>(a.width()) * a.height() + static_cast<double>(b.width()) * b.height();
  return areas > overlap ? overlap / (areas - overlap) : 0.0;
}

double keypointSimilarity(const PoseInstance& reference, const PoseInstance& other, double scoreThreshold) {
  const std::size_t count = std::min(reference.keypoints.size(), other.keypoints.size());
  const double area = std::max(1.0, static_cast<double>(reference.bbox.width()) * reference.bbox.height());
  const double falloff = 2.0 * area * kKeypointSigma * kKeypointSigma;
  double sum = 0;
  int used = 0;
  for (std::size_t k = 0; k < count; ++k) {
    const bool scored = k < reference.scores.size() && k < other.scores.size() &&
                        reference.scores[k] >= scoreThreshold && other.scores[k] >= scoreThreshold;
    if (!scored) continue;
    const double dx = reference.keypoints[k][0] - other.keypoints[k][0];
    const double dy = reference.keypoints[k][1] - other.keypoints[k][1];
    if (!std::isfinite(dx) || !std::isfinite(dy)) continue;  // a keypoint decoded from NaN is no evidence
    sum += std::exp(-(dx * dx + dy * dy) / falloff);
    ++used;
  }
  return used ? sum / used : 0.0;
}

std::vector<int> pairPeople(const std::vector<PoseInstance>& expected, const std::vector<PoseInstance>& seen,
                            const TrackingOptions& o) {
  const int rows = static_cast<int>(expected.size()), columns = static_cast<int>(seen.size());
  std::vector<double> similarity(static_cast<std::size_t>(rows) * columns, 0.0);
  std::vector<double> cost(similarity.size(), 1.0);
  for (int t = 0; t < rows; ++t) {
    for (int p = 0; p < columns; ++p) {
      const PoseInstance& a = expected[static_cast<std::size_t>(t)];
      const PoseInstance& b = seen[static_cast<std::size_t>(p)];
      const double value = (1 - o.keypointWeight) * boxIou(a.bbox, b.bbox) +
                           o.keypointWeight * keypointSimilarity(a, b, o.keypointScoreThreshold);
      similarity[static_cast<std::size_t>(t) * columns + p] = value;
      cost[static_cast<std::size_t>(t) * columns + p] = 1.0 - value;
    }
  }
  std::vector<int> pairs = detail::optimalAssignment(cost, rows, columns);
  for (int t = 0; t < rows; ++t) {
    int& p = pairs[static_cast<std::size_t>(t)];
    if (p >= 0 && similarity[static_cast<std::size_t>(t) * columns + p] < o.minimumSimilarity) p = -1;
  }
  return pairs;
}

struct PersonTracker::State {
  struct Track {
    int id = 0;
    cv::KalmanFilter filter;
    PoseInstance last;  // the person as last seen
    int missed = 0;
  };
  TrackingOptions options;
  std::vector<Track> tracks;
  int nextId = 0;
  int untracked = 0;
};

PersonTracker::PersonTracker(const TrackingOptions& options) : state_(std::make_unique<State>()) {
  state_->options = options;
}
PersonTracker::~PersonTracker() = default;
PersonTracker::PersonTracker(PersonTracker&&) noexcept = default;
PersonTracker& PersonTracker::operator=(PersonTracker&&) noexcept = default;

int PersonTracker::tracksStarted() const {
  return state_->nextId;
}

int PersonTracker::peopleNotTracked() const {
  return state_->untracked;
}

int PersonTracker::tracksAlive() const {
  return static_cast<int>(state_->tracks.size());
}

void PersonTracker::assign(FrameResult& frame) {
  assign(frame.poses);
}

void PersonTracker::assign(std::vector<PoseInstance>& people) {
  State& s = *state_;
  const TrackingOptions& o = s.options;
  // Where each track's person should be now, and their keypoints moved along with the box.
  std::vector<PoseInstance> predicted;
  for (State::Track& track : s.tracks) {
    const BoundingBox box = boxOfState(track.filter.predict());
    PoseInstance expected = track.last;
    const double dx = (box.x1 + box.x2 - track.last.bbox.x1 - track.last.bbox.x2) / 2.0;
    const double dy = (box.y1 + box.y2 - track.last.bbox.y1 - track.last.bbox.y2) / 2.0;
    for (auto& point : expected.keypoints) point[0] += dx, point[1] += dy;
    expected.bbox = box;
    predicted.push_back(std::move(expected));
  }
  const int rows = static_cast<int>(s.tracks.size()), columns = static_cast<int>(people.size());
  std::vector<int> pairs = pairPeople(predicted, people, o);
  for (int& p : pairs)
    if (p >= 0 && !people[static_cast<std::size_t>(p)].bbox.isFinite()) p = -1;
  std::vector<bool> taken(static_cast<std::size_t>(columns), false);
  std::vector<State::Track> kept;
  for (int t = 0; t < rows; ++t) {
    State::Track& track = s.tracks[static_cast<std::size_t>(t)];
    const int p = pairs[static_cast<std::size_t>(t)];
    if (p >= 0) {
      PoseInstance& person = people[static_cast<std::size_t>(p)];
      taken[static_cast<std::size_t>(p)] = true;
      person.trackId = track.id;
      track.filter.correct(measurement(person.bbox));
      track.last = person;
      track.missed = 0;
    } else if (++track.missed > o.maxMissedFrames) {
      continue;  // ended
    } else {
      // Unseen: the prediction stands in for the person, so the next frame predicts on from there.
      track.filter.statePost = track.filter.statePre.clone();
      track.filter.errorCovPost = track.filter.errorCovPre.clone();
      track.last = predicted[static_cast<std::size_t>(t)];
    }
    kept.push_back(std::move(track));
  }
  for (int p = 0; p < columns; ++p) {
    if (taken[static_cast<std::size_t>(p)]) continue;
    PoseInstance& person = people[static_cast<std::size_t>(p)];
    if (!person.bbox.isFinite()) ++s.untracked;  // a box the filter would turn into NaN for good
    if (!person.bbox.isProper()) continue;
    person.trackId = s.nextId++;
    kept.push_back({person.trackId, boxFilter(person.bbox), person, 0});
  }
  s.tracks = std::move(kept);
}

int trackPeople(const std::vector<std::vector<PoseInstance>*>& frames, const TrackingOptions& options) {
  PersonTracker tracker(options);
  for (std::vector<PoseInstance>* people : frames) {
    for (PoseInstance& person : *people) person.trackId = -1;
    tracker.assign(*people);
  }
  return tracker.tracksStarted();
}

}  // namespace sapiens
