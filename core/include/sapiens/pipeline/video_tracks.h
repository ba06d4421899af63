#pragma once
// The people of a video's frames as a viewer meets them, with their tracks: frames come in whatever order
// the user plays, steps and scrubs. Frames that follow the last one within a few frames continue its
// tracks (PersonTracker); a jump starts tracking afresh from the recorded frames just before the new one;
// a frame recorded before keeps the ids it had (its people are paired with the recorded ones by box
// overlap), a track found to be a recorded person takes that person's id, and a filled gap joins the
// tracks on its two sides. Ids are never given to two people.

#include "sapiens/pipeline/person_tracker.h"

#include <cstdint>
#include <map>
#include <vector>

namespace sapiens {

/// Frames first..last (inclusive) in a row in which a track was seen.
struct TrackSpan {
  std::int64_t first = 0;
  std::int64_t last = 0;
  bool operator==(const TrackSpan& other) const { return first == other.first && last == other.last; }
};

class VideoTracks {
 public:
  explicit VideoTracks(const TrackingOptions& options = {});
  ~VideoTracks();
  VideoTracks(VideoTracks&&) noexcept;
  VideoTracks& operator=(VideoTracks&&) noexcept;

  /// Sets the trackId of each of `people`, the poses of frame `index`, and records them (replacing what
  /// frame `index` had).
  void record(std::int64_t index, std::vector<PoseInstance>& people);
  /// Forgets every frame (another video).
  void clear();

  std::size_t framesRecorded() const { return frames_.size(); }
  bool hasFrame(std::int64_t index) const { return frames_.count(index) != 0; }
  /// The ids seen in any recorded frame, ascending.
  std::vector<int> trackIds() const;
  /// The runs of consecutive frames in which track `id` was seen, in order (a frame not recorded, or
  /// recorded without the person, ends a run).
  std::vector<TrackSpan> spansOf(int id) const;
  /// The box of track `id` in each recorded frame it was seen in, in frame order.
  std::vector<std::pair<std::int64_t, BoundingBox>> boxesOf(int id) const;

 private:
  struct Person {
    BoundingBox box;
    int id = -1;
  };
  /// The recorded people as poses with only their boxes, for the tracker.
  static std::vector<PoseInstance> asPoses(const std::vector<Person>& people);
  /// Tells the tracker `count` frames went by without anyone.
  void missFrames(std::int64_t count);
  void startTracking();
  /// Feeds the fresh tracker the recorded frames of the few before `index`, under their recorded ids;
  /// returns the last frame fed (index - 1 when none was).
  std::int64_t warmUp(std::int64_t index);
  /// When frame index + 1 was recorded by another run of tracking (a gap just filled), its people join
  /// the tracks that reached frame `index`.
  void joinNext(std::int64_t index);
  int idFor(int trackerId);
  void relabel(int from, int to);
  bool seenTogether(int a, int b) const;

  TrackingOptions options_;
  PersonTracker tracker_;
  std::map<int, int> idOfTrackerId_;  // the current tracker's ids -> ours
  std::int64_t lastIndex_ = -1;
  bool tracking_ = false;
  int nextId_ = 0;
  std::map<std::int64_t, std::vector<Person>> frames_;
};

}  // namespace sapiens
