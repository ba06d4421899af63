// People keep their identity across frames: crossing paths, an occlusion of a few frames, someone
// leaving and someone new entering. The poses are synthetic people walking (308 keypoints spread over
// each box), so who is who is known.

#include "pipeline/optimal_assignment.h"
#include "sapiens/pipeline/person_tracker.h"
#include "sapiens/pipeline/video_tracks.h"

#include <QtTest>

#include <chrono>
#include <limits>
#include <map>
#include <optional>

using namespace sapiens;

namespace {

// A person of 100 x 200 px centred at (cx, cy); `facing` mirrors the keypoint layout (left/right).
PoseInstance walker(double cx, double cy, int facing) {
  PoseInstance pose;
  pose.bbox = {static_cast<float>(cx - 50), static_cast<float>(cy - 100), static_cast<float>(cx + 50),
               static_cast<float>(cy + 100)};
  for (int k = 0; k < 308; ++k) {
    const double u = ((k * 37) % 100) / 100.0 - 0.5, v = ((k * 61) % 100) / 100.0 - 0.5;
    pose.keypoints.push_back({cx + facing * u * 90, cy + v * 190});
    pose.scores.push_back(0.9f);
  }
  return pose;
}

struct Scene {
  // Per frame, the people in view: (who, pose).
  std::vector<std::vector<std::pair<int, PoseInstance>>> frames;
};

// Runs the tracker over `scene`; per person, the track ids they got frame by frame.
std::map<int, std::vector<int>> trackIds(const Scene& scene, PersonTracker& tracker) {
  std::map<int, std::vector<int>> ids;
  for (const auto& people : scene.frames) {
    FrameResult frame;
    frame.width = 1280, frame.height = 720;
    for (const auto& [who, pose] : people) frame.poses.push_back(pose);
    tracker.assign(frame);
    for (std::size_t i = 0; i < people.size(); ++i) ids[people[i].first].push_back(frame.poses[i].trackId);
  }
  return ids;
}

// Two people walking towards each other and crossing; the one behind (1) is hidden for frames 34-38.
Scene crossingWithOcclusion() {
  Scene scene;
  for (int f = 0; f < 60; ++f) {
    std::vector<std::pair<int, PoseInstance>> people;
    people.emplace_back(0, walker(200 + 12.0 * f, 360, 1));
    if (f < 34 || f >= 39) people.emplace_back(1, walker(1080 - 12.0 * f, 380, -1));
    scene.frames.push_back(std::move(people));
  }
  return scene;
}

// Records `frames` of `scene` into `tracks` in the order given; per person, the ids they got.
void play(const Scene& scene, const std::vector<int>& frames, VideoTracks& tracks,
          std::map<int, std::vector<int>>& ids) {
  for (int f : frames) {
    std::vector<PoseInstance> people;
    for (const auto& entry : scene.frames[static_cast<std::size_t>(f)]) people.push_back(entry.second);
    tracks.record(f, people);
    for (std::size_t i = 0; i < people.size(); ++i)
      ids[scene.frames[static_cast<std::size_t>(f)][i].first].push_back(people[i].trackId);
  }
}

std::vector<int> range(int first, int last) {
  std::vector<int> frames;
  for (int f = first; f <= last; ++f) frames.push_back(f);
  return frames;
}

QString spansText(const std::vector<TrackSpan>& spans) {
  QStringList parts;
  for (const TrackSpan& span : spans) parts << QStringLiteral("%1-%2").arg(span.first).arg(span.last);
  return parts.join(QLatin1Char(','));
}

int distinct(const std::vector<int>& ids) {
  std::vector<int> sorted = ids;
  std::sort(sorted.begin(), sorted.end());
  return static_cast<int>(std::unique(sorted.begin(), sorted.end()) - sorted.begin());
}

}  // namespace

class TestPersonTracker : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void crossingPeopleKeepTheirIdsThroughAnOcclusion() {
    // Two people walk towards each other at 12 px a frame and cross; while they overlap, the one behind
    // is hidden for 5 frames (no pose at all).
    Scene scene;
    for (int f = 0; f < 60; ++f) {
      std::vector<std::pair<int, PoseInstance>> people;
      const double a = 200 + 12.0 * f, b = 1080 - 12.0 * f;
      people.emplace_back(0, walker(a, 360, 1));
      const bool hidden = f >= 34 && f < 39;  // around where they cross (frame 36.7)
      if (!hidden) people.emplace_back(1, walker(b, 380, -1));
      scene.frames.push_back(std::move(people));
    }
    PersonTracker tracker;
    const std::map<int, std::vector<int>> ids = trackIds(scene, tracker);
    QCOMPARE(distinct(ids.at(0)), 1);
    QCOMPARE(distinct(ids.at(1)), 1);  // the same id before and after the occlusion
    QVERIFY(ids.at(0).front() != ids.at(1).front());
    QVERIFY(ids.at(0).front() >= 0 && ids.at(1).front() >= 0);
    QCOMPARE(tracker.tracksStarted(), 2);
  }

  void crossingInFullViewSwapsNothing() {
    Scene scene;
    for (int f = 0; f < 50; ++f) {
      const double a = 300 + 15.0 * f, b = 1000 - 15.0 * f;
      scene.frames.push_back({{0, walker(a, 350, 1)}, {1, walker(b, 370, -1)}});
    }
    PersonTracker tracker;
    const std::map<int, std::vector<int>> ids = trackIds(scene, tracker);
    QCOMPARE(distinct(ids.at(0)), 1);
    QCOMPARE(distinct(ids.at(1)), 1);
    QVERIFY(ids.at(0).front() != ids.at(1).front());
  }

  void someoneNewGetsANewIdNotTheOneWhoLeft() {
    // Person 0 walks out of the picture at frame 20; 30 frames later person 1 enters where 0 was.
    Scene scene;
    for (int f = 0; f < 80; ++f) {
      std::vector<std::pair<int, PoseInstance>> people;
      people.emplace_back(2, walker(200, 400, 1));  // someone standing all along
      if (f < 20) people.emplace_back(0, walker(900 + 10.0 * f, 360, 1));
      if (f >= 50) people.emplace_back(1, walker(1000, 360, -1));
      scene.frames.push_back(std::move(people));
    }
    PersonTracker tracker;
    const std::map<int, std::vector<int>> ids = trackIds(scene, tracker);
    QCOMPARE(distinct(ids.at(0)), 1);
    QCOMPARE(distinct(ids.at(1)), 1);
    QCOMPARE(distinct(ids.at(2)), 1);
    QVERIFY(ids.at(1).front() != ids.at(0).front());
    QVERIFY(ids.at(1).front() > ids.at(0).front());  // ids are never reused
    QCOMPARE(tracker.tracksStarted(), 3);
    QCOMPARE(tracker.tracksAlive(), 2);  // the one who left has ended
  }

  void aTrackSurvivesShortMissesAndEndsAfterLongOnes() {
    TrackingOptions options;
    options.maxMissedFrames = 4;
    PersonTracker tracker(options);
    FrameResult seen;
    seen.poses = {walker(500, 300, 1)};
    tracker.assign(seen);
    const int id = seen.poses[0].trackId;
    for (int f = 0; f < 4; ++f) {
      FrameResult empty;
      tracker.assign(empty);
    }
    FrameResult back;
    back.poses = {walker(500, 300, 1)};
    tracker.assign(back);
    QCOMPARE(back.poses[0].trackId, id);
    for (int f = 0; f < 5; ++f) {
      FrameResult empty;
      tracker.assign(empty);
    }
    QCOMPARE(tracker.tracksAlive(), 0);
    FrameResult later;
    later.poses = {walker(500, 300, 1)};
    tracker.assign(later);
    QVERIFY(later.poses[0].trackId != id);
  }

  // A video split in two parts (shards) tracked on their own, then joined as `merge` does: the same ids as
  // one tracker, for a person hidden across the boundary too.
  void partsTrackedApartJoinAsOneRun() {
    Scene scene;
    for (int f = 0; f < 60; ++f) {
      std::vector<std::pair<int, PoseInstance>> people;
      const PoseInstance a = walker(200 + 12.0 * f, 360, 1), b = walker(1080 - 12.0 * f, 380, -1);
      const bool bInView = f < 27 || f > 32;  // b is hidden for 6 frames around the boundary
      // From frame 30 on the poses come in another order, so that the second part numbers them otherwise.
      if (f >= 30 && bInView) people.emplace_back(1, b);
      people.emplace_back(0, a);
      if (f < 30 && bInView) people.emplace_back(1, b);
      if (f >= 40) people.emplace_back(2, walker(640, 500, 1));  // enters in the second part
      scene.frames.push_back(std::move(people));
    }
    const auto track = [](const Scene& part) {
      PersonTracker tracker;
      std::vector<std::vector<PoseInstance>> frames;
      for (const auto& people : part.frames) {
        FrameResult frame;
        for (const auto& entry : people) frame.poses.push_back(entry.second);
        tracker.assign(frame);
        frames.push_back(frame.poses);
      }
      return frames;
    };
    const std::vector<std::vector<PoseInstance>> whole = track(scene);
    Scene first, second;
    first.frames.assign(scene.frames.begin(), scene.frames.begin() + 30);
    second.frames.assign(scene.frames.begin() + 30, scene.frames.end());
    std::vector<std::vector<PoseInstance>> joined = track(first);
    const std::vector<std::vector<PoseInstance>> rest = track(second);
    QCOMPARE(rest[0][0].trackId, 0);  // the second part numbered its own from 0
    QCOMPARE(joined[0][1].trackId, 1);
    joined.insert(joined.end(), rest.begin(), rest.end());
    std::vector<std::vector<PoseInstance>*> frames;
    for (auto& people : joined) frames.push_back(&people);
    QCOMPARE(trackPeople(frames), 3);
    QCOMPARE(joined.size(), whole.size());
    for (std::size_t f = 0; f < whole.size(); ++f) {
      QCOMPARE(joined[f].size(), whole[f].size());
      for (std::size_t i = 0; i < whole[f].size(); ++i) QCOMPARE(joined[f][i].trackId, whole[f][i].trackId);
    }
    // The hidden walker came back under the id it had before the boundary; the newcomer got a new one.
    QCOMPARE(whole[26][1].trackId, 1);
    QCOMPARE(whole[33][0].trackId, 1);
    QCOMPARE(whole.back()[2].trackId, 2);
  }

  // The studio's record of what the user played: in order, it gives what one tracker gives, and its spans
  // say where each person is seen.
  void aViewerPlayingInOrderSeesEachPersonsTrack() {
    const Scene scene = crossingWithOcclusion();
    VideoTracks tracks;
    std::map<int, std::vector<int>> ids;
    play(scene, range(0, 59), tracks, ids);
    QCOMPARE(distinct(ids.at(0)), 1);
    QCOMPARE(distinct(ids.at(1)), 1);
    QVERIFY(ids.at(0).front() != ids.at(1).front());
    QCOMPARE(tracks.framesRecorded(), std::size_t(60));
    QCOMPARE(tracks.trackIds().size(), std::size_t(2));
    QCOMPARE(spansText(tracks.spansOf(ids.at(0).front())), QStringLiteral("0-59"));
    QCOMPARE(spansText(tracks.spansOf(ids.at(1).front())), QStringLiteral("0-33,39-59"));
    const auto boxes = tracks.boxesOf(ids.at(1).front());
    QCOMPARE(boxes.size(), std::size_t(55));
    QCOMPARE(boxes.front().first, std::int64_t(0));
    QCOMPARE(boxes.front().second.x1, scene.frames[0][1].second.bbox.x1);
    QVERIFY(tracks.spansOf(99).empty());
  }

  // Scrubbing: a jump ahead, filling the gap afterwards, going back over frames seen and running one frame
  // twice; each person still ends up with one id over the whole video.
  void scrubbingKeepsEveryonesId() {
    const Scene scene = crossingWithOcclusion();
    VideoTracks tracks;
    std::map<int, std::vector<int>> ids;
    play(scene, range(0, 20), tracks, ids);
    play(scene, range(40, 59), tracks, ids);  // a jump: at first new ids
    play(scene, range(21, 39), tracks, ids);  // the gap joins the two
    play(scene, range(10, 15), tracks, ids);
    play(scene, {50, 50, 3}, tracks, ids);
    QCOMPARE(tracks.framesRecorded(), std::size_t(60));
    const std::vector<int> seen = tracks.trackIds();
    QCOMPARE(seen.size(), std::size_t(2));
    const auto idAt = [&](int frame, int who) {
      std::vector<PoseInstance> people;
      for (const auto& entry : scene.frames[static_cast<std::size_t>(frame)]) people.push_back(entry.second);
      tracks.record(frame, people);
      for (std::size_t i = 0; i < people.size(); ++i)
        if (scene.frames[static_cast<std::size_t>(frame)][i].first == who) return people[i].trackId;
      return -1;
    };
    const int a = idAt(0, 0), b = idAt(0, 1);
    QVERIFY(a != b);
    QCOMPARE(spansText(tracks.spansOf(a)), QStringLiteral("0-59"));
    QCOMPARE(spansText(tracks.spansOf(b)), QStringLiteral("0-33,39-59"));
    for (int f : {5, 25, 45, 59}) {
      QCOMPARE(idAt(f, 0), a);
      QCOMPARE(idAt(f, 1), b);
    }
  }

  void someoneNewAfterAJumpGetsANewId() {
    VideoTracks tracks;
    std::vector<PoseInstance> first = {walker(300, 300, 1)};
    tracks.record(0, first);
    std::vector<PoseInstance> later = {walker(900, 300, -1)};  // somewhere else, someone else
    tracks.record(200, later);
    QVERIFY(later[0].trackId > first[0].trackId);
    std::vector<PoseInstance> nobody;
    tracks.record(201, nobody);
    QCOMPARE(tracks.framesRecorded(), std::size_t(3));
    QCOMPARE(spansText(tracks.spansOf(later[0].trackId)), QStringLiteral("200-200"));
    tracks.clear();
    QCOMPARE(tracks.framesRecorded(), std::size_t(0));
    QVERIFY(tracks.trackIds().empty());
  }

  // A cost matrix of NaN and infinities once left the assignment's inner loop without a column to go to,
  // forever. Every such matrix returns, and finite entries still win over non-finite ones.
  void theAssignmentReturnsOnNonFiniteCosts() {
    const double nan = std::numeric_limits<double>::quiet_NaN(),
                 inf = std::numeric_limits<double>::infinity();
    const auto started = std::chrono::steady_clock::now();
    for (const std::vector<double>& cost :
         {std::vector<double>(9, nan), std::vector<double>(9, inf), std::vector<double>(9, -inf),
          std::vector<double>{nan, inf, -inf, 1, nan, 0.5, inf, 2, nan},
          std::vector<double>{1e308, -1e308, 1e308, 1e308, 1e308, -1e308, nan, 1e308, 1e308}}) {
      for (auto [rows, columns] : {std::pair{3, 3}, std::pair{1, 9}, std::pair{9, 1}}) {
        const std::vector<int> pairs = detail::optimalAssignment(cost, rows, columns);
        QCOMPARE(pairs.size(), std::size_t(rows));
        for (int p : pairs) QVERIFY(p >= -1 && p < columns);
      }
    }
    QVERIFY(std::chrono::steady_clock::now() - started < std::chrono::seconds(5));
    // One finite pair per row beside NaN and +inf: the finite one is chosen.
    const std::vector<int> pairs =
        detail::optimalAssignment({nan, 0.2, inf, inf, nan, 0.7, 0.1, inf, nan}, 3, 3);
    QCOMPARE(pairs, (std::vector<int>{1, 2, 0}));
  }

  // A model whose outputs overflow gives NaN keypoints with high scores and, through them, NaN boxes: the
  // tracker returns, tracks the people it can, and counts the ones it cannot, none with a NaN filter.
  void peopleWithNonFiniteNumbersNeitherHangNorPoisonTracks() {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    PersonTracker tracker;
    for (int f = 0; f < 20; ++f) {
      std::vector<PoseInstance> people = {walker(200 + 10.0 * f, 300, 1), walker(900, 300, -1),
                                          walker(500, 500, 1)};
      for (auto& point : people[1].keypoints) point[0] = nan;  // scores stay 0.9
      if (f % 3 == 0) people[2].bbox.x2 = nan;
      tracker.assign(people);
      QCOMPARE(people[0].trackId, 0);
      QCOMPARE(people[1].trackId, 1);  // tracked by its box alone
      if (f % 3 == 0) QCOMPARE(people[2].trackId, -1);
    }
    QCOMPARE(tracker.peopleNotTracked(), 7);
    // The track of the third person (box NaN every third frame) carried on from its finite frames.
    std::vector<PoseInstance> last = {walker(400, 300, 1), walker(900, 300, -1), walker(500, 500, 1)};
    tracker.assign(last);
    QCOMPARE(last[1].trackId, 1);
    QCOMPARE(last[2].trackId, 2);
    QCOMPARE(tracker.tracksStarted(), 3);
  }

  void similarityMeasures() {
    const PoseInstance a = walker(100, 100, 1);
    QCOMPARE(boxIou(a.bbox, a.bbox), 1.0);
    QCOMPARE(boxIou(a.bbox, walker(300, 100, 1).bbox), 0.0);
    QVERIFY(std::abs(boxIou(a.bbox, walker(150, 100, 1).bbox) - 1.0 / 3.0) < 1e-6);
    QCOMPARE(keypointSimilarity(a, a, 0.3), 1.0);
    QVERIFY(keypointSimilarity(a, walker(100, 100, -1), 0.3) < 0.5);  // mirrored: other keypoints
    PoseInstance unsure = a;
    std::fill(unsure.scores.begin(), unsure.scores.end(), 0.1f);
    QCOMPARE(keypointSimilarity(a, unsure, 0.3), 0.0);
  }
};

QTEST_APPLESS_MAIN(TestPersonTracker)
#include "test_person_tracker.moc"
