#include "sapiens/pipeline/video_tracks.h"

#include <algorithm>
#include <set>

namespace sapiens {

VideoTracks::VideoTracks(const TrackingOptions& options) : options_(options), tracker_(options) {}
VideoTracks::~VideoTracks() = default;
VideoTracks::VideoTracks(VideoTracks&&) noexcept = default;
VideoTracks& VideoTracks::operator=(VideoTracks&&) noexcept = default;

std::vector<PoseInstance> VideoTracks::asPoses(const std::vector<Person>& people) {
  std::vector<PoseInstance> poses(people.size());
  for (std::size_t i = 0; i < poses.size(); ++i) poses[i].bbox = people[i].box;
  return poses;
}

void VideoTracks::missFrames(std::int64_t count) {
  std::vector<PoseInstance> nobody;
  for (std::int64_t i = 0; i < count; ++i) tracker_.assign(nobody);
}

void VideoTracks::clear() {
  frames_.clear();
  idOfTrackerId_.clear();
  tracking_ = false;
  lastIndex_ = -1;
  nextId_ = 0;
}

void VideoTracks::startTracking() {
  tracker_ = PersonTracker(options_);
  idOfTrackerId_.clear();
  tracking_ = true;
}

int VideoTracks::idFor(int trackerId) {
  const auto found = idOfTrackerId_.find(trackerId);
  if (found != idOfTrackerId_.end()) return found->second;
  return idOfTrackerId_[trackerId] = nextId_++;
}

void VideoTracks::relabel(int from, int to) {
  for (auto& [index, people] : frames_)
    for (Person& person : people)
      if (person.id == from) person.id = to;
  for (auto& [trackerId, id] : idOfTrackerId_)
    if (id == from) id = to;
}

bool VideoTracks::seenTogether(int a, int b) const {
  for (const auto& [index, people] : frames_) {
    const auto has = [&](int id) {
      return std::any_of(people.begin(), people.end(), [id](const Person& p) { return p.id == id; });
    };
    if (has(a) && has(b)) return true;
  }
  return false;
}

std::int64_t VideoTracks::warmUp(std::int64_t index) {
  std::int64_t previous = index - 1;
  auto frame = frames_.lower_bound(index - options_.maxMissedFrames - 1);
  if (frame == frames_.end() || frame->first >= index) return previous;
  previous = frame->first - 1;
  for (; frame != frames_.end() && frame->first < index; ++frame) {
    missFrames(frame->first - previous - 1);
    std::vector<PoseInstance> recorded = asPoses(frame->second);
    tracker_.assign(recorded);
    for (std::size_t i = 0; i < recorded.size(); ++i)
      if (recorded[i].trackId >= 0) idOfTrackerId_[recorded[i].trackId] = frame->second[i].id;
    previous = frame->first;
  }
  return previous;
}

void VideoTracks::record(std::int64_t index, std::vector<PoseInstance>& people) {
  // A frame shortly after the last one continues its tracks, the frames in between counting as misses.
  // Anything else (a step back, a jump, the same frame again) starts afresh from the recorded frames just
  // before it, so that stale predictions never decide.
  const bool continues =
      tracking_ && index > lastIndex_ && index - lastIndex_ - 1 <= options_.maxMissedFrames;
  if (!continues) {
    startTracking();
    lastIndex_ = warmUp(index);
  }
  missFrames(index - lastIndex_ - 1);
  for (PoseInstance& person : people) person.trackId = -1;
  tracker_.assign(people);
  lastIndex_ = index;

  // Who this frame had before: the same boxes, or nearly, are the same people.
  std::vector<int> recordedIdOf(people.size(), -1);
  const auto before = frames_.find(index);
  if (before != frames_.end() && !before->second.empty() && !people.empty()) {
    const std::vector<PoseInstance> recorded = asPoses(before->second);
    TrackingOptions byBox = options_;
    byBox.keypointWeight = 0;
    const std::vector<int> pairs = pairPeople(recorded, people, byBox);
    for (std::size_t r = 0; r < pairs.size(); ++r)
      if (pairs[r] >= 0) recordedIdOf[static_cast<std::size_t>(pairs[r])] = before->second[r].id;
  }

  std::vector<Person> kept;
  std::set<int> used;
  for (std::size_t i = 0; i < people.size(); ++i) {
    PoseInstance& person = people[i];
    if (person.trackId < 0) continue;  // an empty box: nobody to track
    const int trackerId = person.trackId;
    int id = idFor(trackerId);
    const int recordedId = recordedIdOf[i];
    if (recordedId >= 0 && recordedId != id && !used.count(recordedId)) {
      // The track is a person recorded before: it goes on under their id, and so does what it recorded
      // under its own one, unless the two were ever seen side by side.
      if (!seenTogether(id, recordedId)) relabel(id, recordedId);
      idOfTrackerId_[trackerId] = recordedId;
      id = recordedId;
    }
    used.insert(id);
    person.trackId = id;
    kept.push_back({person.bbox, id});
  }
  frames_[index] = std::move(kept);
  joinNext(index);
}

void VideoTracks::joinNext(std::int64_t index) {
  const auto next = frames_.find(index + 1);
  if (next == frames_.end()) return;
  std::set<int> known;
  for (const auto& [trackerId, id] : idOfTrackerId_) known.insert(id);
  const bool strangers = std::any_of(next->second.begin(), next->second.end(),
                                     [&](const Person& person) { return !known.count(person.id); });
  if (!strangers) return;
  std::vector<PoseInstance> recorded = asPoses(next->second);
  tracker_.assign(recorded);
  for (std::size_t i = 0; i < recorded.size(); ++i) {
    if (recorded[i].trackId < 0) continue;
    const int theirs = next->second[i].id;
    const auto ours = idOfTrackerId_.find(recorded[i].trackId);
    if (ours == idOfTrackerId_.end()) {
      idOfTrackerId_[recorded[i].trackId] = theirs;
    } else if (ours->second != theirs && !seenTogether(ours->second, theirs)) {
      relabel(theirs, ours->second);
    }
  }
  // The tracker has now seen a frame past the one the user is on: the next frame starts afresh.
  tracking_ = false;
}

std::vector<int> VideoTracks::trackIds() const {
  std::set<int> ids;
  for (const auto& [index, people] : frames_)
    for (const Person& person : people) ids.insert(person.id);
  return {ids.begin(), ids.end()};
}

std::vector<std::pair<std::int64_t, BoundingBox>> VideoTracks::boxesOf(int id) const {
  std::vector<std::pair<std::int64_t, BoundingBox>> boxes;
  for (const auto& [index, people] : frames_)
    for (const Person& person : people)
      if (person.id == id) boxes.emplace_back(index, person.box);
  return boxes;
}

std::vector<TrackSpan> VideoTracks::spansOf(int id) const {
  std::vector<TrackSpan> spans;
  for (const auto& [index, box] : boxesOf(id)) {
    if (!spans.empty() && spans.back().last + 1 == index)
      spans.back().last = index;
    else
      spans.push_back({index, index});
  }
  return spans;
}

}  // namespace sapiens
