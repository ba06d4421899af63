// Joint angles and the whole track analysis on synthetic motion with known truth: a Goliath-308 stick
// figure built from sinusoidal joint angles (knees, hips, ankles, trunk, shoulders, elbows, wrists, neck),
// walking back and forth and turning 180 degrees mid-clip, seen by a level camera (x right, y down,
// z forward) at a jittered 30 fps, with 2 mm Gaussian noise, two spikes, two short gaps, two rows left
// out and one long gap. Every filtered angle must stay within 2 degrees RMS of the truth (also through
// the turn), continuous, and split at the long gap. Then every bad input gets its message.

#include "sapiens/motion/derived_points.h"
#include "sapiens/motion/joint_angle_table.h"
#include "sapiens/motion/keypoint_names.h"
#include "sapiens/motion/motion_error.h"
#include "sapiens/motion/track_motion.h"
#include "test_support.h"

#include <QTemporaryDir>
#include <QtTest>

#include <cmath>
#include <fstream>
#include <map>
#include <random>

using namespace sapiens::motion;

namespace {

using Truth = std::map<std::string, double>;  // angle name -> degrees

constexpr double kRad = M_PI / 180.0;
constexpr double kFps = 30.0;
constexpr int kRows = 180;
constexpr int kLongGapFirst = 120;  // rows 120..139 missing: longer than the 10 frames filled
constexpr int kLongGapLast = 139;
constexpr double kTurnStart = 2.0;  // seconds: the heading turns 180 degrees over one second
constexpr double kTurnEnd = 3.0;

Point3 add(const Point3& a, const Point3& b) {
  return {a[0] + b[0], a[1] + b[1], a[2] + b[2]};
}
Point3 mul(const Point3& a, double s) {
  return {a[0] * s, a[1] * s, a[2] * s};
}
double dot(const Point3& a, const Point3& b) {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}
Point3 cross(const Point3& a, const Point3& b) {
  return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}
Point3 unit(const Point3& a) {
  return mul(a, 1.0 / std::sqrt(dot(a, a)));
}
Point3 perpendicular(const Point3& a, const Point3& u) {
  return unit(add(a, mul(u, -dot(a, u))));
}
// v (perpendicular to unit axis k) turned by `degrees` about k.
Point3 turn(const Point3& v, const Point3& k, double degrees) {
  return add(mul(v, std::cos(degrees * kRad)), mul(cross(k, v), std::sin(degrees * kRad)));
}
double wave(double t, double mean, double amplitude, double hz, double phase = 0.0) {
  return mean + amplitude * std::sin(2.0 * M_PI * hz * t + phase);
}

// The world: Y up, the camera at (0, 1, 5) looking along -Z.
Point3 toCamera(const Point3& w) {
  return {w[0], -(w[1] - 1.0), -(w[2] - 5.0)};
}

double headingDegrees(double t) {
  const double s = std::clamp((t - kTurnStart) / (kTurnEnd - kTurnStart), 0.0, 1.0);
  return 90.0 + 180.0 * s * s * (3.0 - 2.0 * s);
}

struct Body {
  Point3 forward, up, left;  // the trunk frame
};

struct Pose {
  std::map<std::string, Point3> world;
  Truth truth;
};

// Thigh or upper arm direction: flexion from down towards forward, then abduction towards `side`.
Point3 limb(const Body& b, double flexion, double abduction, const Point3& side) {
  const Point3 sagittal = add(mul(b.up, -std::cos(flexion * kRad)), mul(b.forward, std::sin(flexion * kRad)));
  return add(mul(sagittal, std::cos(abduction * kRad)), mul(side, std::sin(abduction * kRad)));
}

void addLeg(Pose& pose, const Body& b, const std::string& s, double t, double phase) {
  const Point3 side = s == "left" ? b.left : mul(b.left, -1.0);
  const double hipFlexion = wave(t, 10.0, 25.0, 1.0, phase + 0.5);
  const double abduction = wave(t, 5.0, 4.0, 0.5, phase);
  const double knee = wave(t, 35.0, 25.0, 1.0, phase);
  const double ankle = wave(t, 5.0, 10.0, 1.0, phase + 1.0);
  const Point3 thigh = limb(b, hipFlexion, abduction, side);
  const Point3 shank = turn(thigh, perpendicular(b.left, thigh), knee);
  const Point3 shankUp = mul(shank, -1.0);
  const Point3 foot = turn(shankUp, perpendicular(b.left, shankUp), 90.0 - ankle);
  const Point3 hip = pose.world[s + "_hip"];
  const Point3 kneePoint = add(hip, mul(thigh, 0.42));
  const Point3 anklePoint = add(kneePoint, mul(shank, 0.40));
  const Point3 heel = add(anklePoint, add(mul(shankUp, -0.05), mul(foot, -0.05)));
  pose.world[s + "_knee"] = kneePoint;
  pose.world[s + "_ankle"] = anklePoint;
  pose.world[s + "_heel"] = heel;
  pose.world[s + "_big_toe"] = add(heel, mul(foot, 0.22));
  pose.world[s + "_small_toe"] = add(add(heel, mul(foot, 0.19)), mul(side, 0.04));
  pose.truth[s + "_hip.flexion"] = hipFlexion;
  pose.truth[s + "_hip.abduction"] = abduction;
  pose.truth[s + "_knee.flexion"] = knee;
  pose.truth[s + "_ankle.dorsiflexion"] = ankle;
}

void addArm(Pose& pose, const Body& b, const Point3& trunkDown, const std::string& s, double t,
            double phase) {
  const Point3 side = s == "left" ? b.left : mul(b.left, -1.0);
  const double flexion = wave(t, 0.0, 20.0, 1.0, phase + M_PI);
  const double abduction = wave(t, 12.0, 6.0, 0.5, phase);
  const double elbow = wave(t, 45.0, 30.0, 0.8, phase);
  const double wrist = wave(t, 10.0, 20.0, 0.6, phase);
  const Point3 upper = limb(b, flexion, abduction, side);
  const Point3 forearm = turn(upper, perpendicular(mul(b.left, -1.0), upper), elbow);
  const Point3 knuckleAxis = perpendicular(mul(b.left, -1.0), forearm);  // the table's axis direction
  const Point3 hand = turn(forearm, knuckleAxis, wrist);
  const Point3 elbowPoint = add(pose.world[s + "_shoulder"], mul(upper, 0.30));
  const Point3 wristPoint = add(elbowPoint, mul(forearm, 0.27));
  const Point3 middle = add(wristPoint, mul(hand, 0.09));
  // right: forefinger - pinky along the axis; left: pinky - forefinger (joint_angles.json).
  const double towardsForefinger = s == "right" ? 0.025 : -0.025;
  pose.world[s + "_elbow"] = elbowPoint;
  pose.world[s + "_wrist"] = wristPoint;
  pose.world[s + "_middle_finger_third_joint"] = middle;
  pose.world[s + "_forefinger_third_joint"] = add(middle, mul(knuckleAxis, towardsForefinger));
  pose.world[s + "_pinky_finger_third_joint"] = add(middle, mul(knuckleAxis, -towardsForefinger));
  pose.truth[s + "_shoulder.flexion"] = flexion;
  pose.truth[s + "_shoulder.abduction"] = abduction;
  pose.truth[s + "_shoulder.elevation"] = std::acos(dot(upper, trunkDown)) / kRad;
  pose.truth[s + "_elbow.flexion"] = elbow;
  pose.truth[s + "_wrist.flexion"] = wrist;
}

Pose poseAt(double t) {
  Pose pose;
  const double heading = headingDegrees(t) * kRad;
  const Point3 up{0, 1, 0};
  const Point3 forward{std::sin(heading), 0, std::cos(heading)};
  const Point3 left{std::cos(heading), 0, -std::sin(heading)};
  const Point3 pelvis{1.2 * std::sin(M_PI * (t - 2.5) / 5.0), 0.95 + 0.02 * std::sin(4 * M_PI * t),
                      0.3 * std::sin(0.5 * t)};
  const double trunkFlexion = wave(t, 8.0, 5.0, 0.5);
  const double lean = wave(t, 0.0, 3.0, 0.7);
  const Point3 trunk =
      add(mul(add(mul(up, std::cos(trunkFlexion * kRad)), mul(forward, std::sin(trunkFlexion * kRad))),
              std::cos(lean * kRad)),
          mul(left, -std::sin(lean * kRad)));
  Body b;
  b.left = left;
  b.up = perpendicular(trunk, left);
  b.forward = cross(b.left, b.up);
  const Point3 thorax = add(pelvis, mul(trunk, 0.5));
  pose.world["left_hip"] = add(pelvis, mul(left, 0.1));
  pose.world["right_hip"] = add(pelvis, mul(left, -0.1));
  pose.world["neck"] = thorax;
  pose.world["left_shoulder"] = add(thorax, add(mul(b.up, -0.05), mul(left, 0.18)));
  pose.world["right_shoulder"] = add(thorax, add(mul(b.up, -0.05), mul(left, -0.18)));
  const double neck = wave(t, 10.0, 8.0, 0.4);
  const Point3 head = add(thorax, mul(turn(b.up, b.left, neck), 0.22));  // towards forward
  pose.world["left_ear"] = add(head, mul(left, 0.08));
  pose.world["right_ear"] = add(head, mul(left, -0.08));
  pose.world["nose"] = add(head, mul(b.forward, 0.1));
  pose.world["center_of_glabella"] = add(head, add(mul(b.forward, 0.09), mul(b.up, 0.04)));
  addLeg(pose, b, "left", t, 0.0);
  addLeg(pose, b, "right", t, M_PI);
  addArm(pose, b, mul(trunk, -1.0), "left", t, 0.0);
  addArm(pose, b, mul(trunk, -1.0), "right", t, M_PI);
  pose.truth["trunk.flexion"] = trunkFlexion;
  pose.truth["trunk.lateral_lean"] = lean;
  pose.truth["neck.flexion"] = neck;
  return pose;
}

std::vector<Point3> cameraKeypoints(const Pose& pose) {
  std::vector<Point3> row(goliathKeypointNames().size(), Point3{NAN, NAN, NAN});
  for (const auto& [name, point] : pose.world) row[std::size_t(goliathKeypointIndex(name))] = toCamera(point);
  return row;
}

struct Clip {
  KeypointTrack track;
  std::vector<Truth> truth;  // per row
};

bool inShortGap(int frame) {
  return (frame >= 30 && frame <= 32) || (frame >= 70 && frame <= 74);
}
bool inLongGap(int frame) {
  return frame >= kLongGapFirst && frame <= kLongGapLast;
}

// The walking, turning figure with noise, spikes and gaps; frames 50 and 51 left out of the table.
Clip syntheticClip() {
  std::mt19937 random(20240522);
  std::normal_distribution<double> noise(0.0, 0.002);
  std::uniform_real_distribution<double> jitter(-0.003, 0.003);
  Clip clip;
  clip.track.trackId = 7;
  for (int frame = 0; frame < kRows; ++frame) {
    if (frame == 50 || frame == 51) continue;
    const double t = frame / kFps + jitter(random);
    const Pose pose = poseAt(t);
    std::vector<Point3> row = cameraKeypoints(pose);
    for (Point3& p : row)
      for (double& c : p) c = inShortGap(frame) || inLongGap(frame) ? NAN : c + noise(random);
    if (frame == 40) row[std::size_t(goliathKeypointIndex("left_knee"))][1] += 0.25;
    if (frame == 100) row[std::size_t(goliathKeypointIndex("right_wrist"))][0] += 0.2;
    clip.track.times.seconds.push_back(t);
    clip.track.times.frames.push_back(frame);
    clip.track.points.push_back(row);
    clip.truth.push_back(pose.truth);
  }
  return clip;
}

struct AngleErrors {
  double rms = 0.0;
  double turnRms = 0.0;     // within the turn
  double worstStep = 0.0;   // largest |filtered step - true step| between consecutive rows
  int misplacedValues = 0;  // NaN outside the long gap, or a value inside it
};

AngleErrors errorsOf(const Clip& clip, const TrackMotion& motion, std::size_t column) {
  AngleErrors e;
  const std::string& name = motion.filteredAngles.names[column];
  double sum = 0.0, turnSum = 0.0;
  int count = 0, turnCount = 0;
  for (std::size_t r = 0; r < motion.filteredAngles.rows.size(); ++r) {
    const double value = motion.filteredAngles.rows[r][column];
    const double t = clip.track.times.seconds[r];
    if (inLongGap(int(clip.track.times.frames[r])) == std::isfinite(value)) ++e.misplacedValues;
    if (!std::isfinite(value)) continue;
    const double error = value - clip.truth[r].at(name);
    sum += error * error;
    ++count;
    if (t >= kTurnStart && t <= kTurnEnd) {
      turnSum += error * error;
      ++turnCount;
    }
    const double previous = r > 0 ? motion.filteredAngles.rows[r - 1][column] : NAN;
    if (std::isfinite(previous)) {
      const double trueStep = clip.truth[r].at(name) - clip.truth[r - 1].at(name);
      e.worstStep = std::max(e.worstStep, std::abs(value - previous - trueStep));
    }
  }
  e.rms = std::sqrt(sum / std::max(count, 1));
  e.turnRms = std::sqrt(turnSum / std::max(turnCount, 1));
  return e;
}

std::size_t rowOfFrame(const Clip& clip, int frame) {
  const auto& frames = clip.track.times.frames;
  return std::size_t(std::find(frames.begin(), frames.end(), frame) - frames.begin());
}

// `call` must throw MotionError whose message contains every one of `parts`.
template <typename Call>
void expectMotionError(Call call, const QStringList& parts) {
  try {
    call();
    QFAIL(qPrintable("no error; expected one saying " + parts.join(" ... ")));
  } catch (const MotionError& e) {
    for (const QString& part : parts)
      QVERIFY2(QString(e.what()).contains(part), qPrintable(QString(e.what()) + "\n  lacks: " + part));
  }
}

KeypointTrack cleanTrack(int rows, double fps = kFps) {
  KeypointTrack track;
  track.trackId = 3;
  for (int r = 0; r < rows; ++r) {
    track.times.seconds.push_back(r / fps);
    track.times.frames.push_back(r);
    track.points.push_back(cameraKeypoints(poseAt(r / fps)));
  }
  return track;
}

}  // namespace

class TestMotionAngles : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void tableCoversTheJointsPerSide() {
    QStringList names;
    for (const AngleDefinition& d : jointAngleTable()) names << QString::fromStdString(d.name);
    for (const QString side : {"left", "right"})
      for (const QString joint : {"ankle.dorsiflexion", "knee.flexion", "hip.flexion", "hip.abduction",
                                  "shoulder.elevation", "elbow.flexion", "wrist.flexion"})
        QVERIFY2(names.contains(side + "_" + joint), qPrintable(side + "_" + joint));
    for (const QString name : {"trunk.flexion", "trunk.lateral_lean", "neck.flexion"})
      QVERIFY2(names.contains(name), qPrintable(name));
    const auto knee = selectAngles(jointAngleTable(), {"right_knee.flexion"});
    QCOMPARE(knee.front().opensimCoordinate, std::string("knee_angle_r"));
  }

  void derivedPointsFallBack() {
    std::vector<Point3> row = cameraKeypoints(poseAt(0.0));
    const auto at = [&](const std::string& name) { return row[std::size_t(goliathKeypointIndex(name))]; };
    const auto withNeck = derivePoints(row);
    QCOMPARE(withNeck[1], at("neck"));
    row[std::size_t(goliathKeypointIndex("neck"))] = {NAN, NAN, NAN};
    row[std::size_t(goliathKeypointIndex("left_ear"))] = {NAN, NAN, NAN};
    const auto fallback = derivePoints(row);
    for (std::size_t c = 0; c < 3; ++c) {
      QCOMPARE(fallback[0][c], 0.5 * (at("left_hip")[c] + at("right_hip")[c]));
      QCOMPARE(fallback[1][c], 0.5 * (at("left_shoulder")[c] + at("right_shoulder")[c]));
      QCOMPARE(fallback[2][c], 0.5 * (fallback[0][c] + fallback[1][c]));
      QCOMPARE(fallback[3][c], at("center_of_glabella")[c]);
    }
  }

  void syntheticWalkWithinTwoDegreesOfTruth() {
    const Clip clip = syntheticClip();
    const TrackMotion motion = analyseTrack(clip.track, MotionSettings{});
    QCOMPARE(motion.trackId, 7);
    QVERIFY2(std::abs(motion.frameRateHz - kFps) < 0.2, qPrintable(QString::number(motion.frameRateHz)));
    QCOMPARE(motion.filteredAngles.names.size(), jointAngleTable().size());
    // Split at the long gap only: the short gaps and the two left-out rows are bridged.
    QCOMPARE(motion.segments.size(), std::size_t(2));
    QCOMPARE(motion.segments[0].first, std::size_t(0));
    QCOMPARE(motion.segments[0].last, rowOfFrame(clip, kLongGapFirst - 1));
    QCOMPARE(motion.segments[1].first, rowOfFrame(clip, kLongGapLast + 1));
    QCOMPARE(motion.segments[1].last, clip.track.points.size() - 1);
    QCOMPARE(motion.segmentStatistics.count, std::size_t(2));
    QCOMPARE(motion.segmentStatistics.minFrames, std::size_t(kRows - 1 - kLongGapLast));
    QVERIFY(!motion.warnings.empty());

    for (std::size_t a = 0; a < motion.filteredAngles.names.size(); ++a) {
      const std::string& name = motion.filteredAngles.names[a];
      const AngleErrors e = errorsOf(clip, motion, a);
      qInfo("%-26s RMS %.2f deg, in the turn %.2f, worst step error %.2f deg", name.c_str(), e.rms, e.turnRms,
            e.worstStep);
      QVERIFY2(e.misplacedValues == 0,
               qPrintable(QString::fromStdString(name) + ": values where the gap is or "
                                                         "NaN where it is not"));
      QVERIFY2(e.rms < 2.0, qPrintable(QString::fromStdString(name) + " RMS " + QString::number(e.rms)));
      QVERIFY2(e.turnRms < 2.0,
               qPrintable(QString::fromStdString(name) + " turn RMS " + QString::number(e.turnRms)));
      QVERIFY2(e.worstStep < 5.0,
               qPrintable(QString::fromStdString(name) + " jumps " + QString::number(e.worstStep)));
    }
  }

  void segmentTooShortToFilterStaysEmpty() {
    KeypointTrack track = cleanTrack(60);
    for (std::size_t r = 30; r < 60; ++r)
      if (r < 45 || r > 52)
        for (Point3& p : track.points[r]) p = {NAN, NAN, NAN};
    const TrackMotion motion = analyseTrack(track, MotionSettings{});
    QCOMPARE(motion.segments.size(), std::size_t(2));
    for (std::size_t r = 45; r <= 52; ++r) {
      QVERIFY(std::isfinite(motion.rawAngles.rows[r][0]));
      QVERIFY2(std::isnan(motion.filteredAngles.rows[r][0]), "an 8-row segment came out as filtered");
    }
    QVERIFY(std::isfinite(motion.filteredAngles.rows[10][0]));
    bool warned = false;
    for (const std::string& w : motion.warnings)
      warned |= w.find("shorter than the filter's 16 samples") != std::string::npos;
    QVERIFY2(warned, "no warning about the segment left unfiltered");
  }

  void badInputIsRefusedWithItsReason() {
    expectMotionError([] { analyseTrack(cleanTrack(1), MotionSettings{}); },
                      {"track 3", "1 sample", "single frame"});
    expectMotionError([] { analyseTrack(cleanTrack(15), MotionSettings{}); },
                      {"track 3 has 15 samples", "needs at least 16"});
    KeypointTrack empty = cleanTrack(40);
    for (auto& row : empty.points)
      for (Point3& p : row) p = {NAN, NAN, NAN};
    expectMotionError([&] { analyseTrack(empty, MotionSettings{}); },
                      {"no keypoint has a 3-D position", "40 samples"});
    MotionSettings fast;
    fast.cutoffHz = 20.0;
    expectMotionError([&] { analyseTrack(cleanTrack(40), fast); },
                      {"cutoff 20 Hz", "Nyquist frequency 15 Hz", "30 fps"});
    KeypointTrack backwards = cleanTrack(40);
    backwards.times.seconds[5] = backwards.times.seconds[4];
    expectMotionError([&] { analyseTrack(backwards, MotionSettings{}); }, {"track 3", "row 5", "not later"});
    MotionSettings unknown;
    unknown.angles = {"left_knee.flexion", "left_knee.bend"};
    expectMotionError([&] { analyseTrack(cleanTrack(40), unknown); },
                      {"unknown angle 'left_knee.bend'", "right_elbow.flexion", "trunk.lateral_lean"});
  }

  void malformedAngleTableNamesFileAndKey() {
    QTemporaryDir dir;
    const std::string path = dir.filePath("angles.json").toStdString();
    std::ofstream(path) << R"({"angles": [{"name": "x.flexion", "convention": "vector_angle",
        "points": ["left_hip", "left_knee", "left_knee", "left_kneecap"], "sign": 1, "unit": "deg",
        "description": "d"}]})";
    expectMotionError([&] { loadAngleTable(path); }, {QString::fromStdString(path), "angles[0].points[3]"});
    std::ofstream(path) << R"({"angles": [{"name": "x.flexion", "convention": "curvature"}]})";
    expectMotionError([&] { loadAngleTable(path); }, {"angles[0].convention", "'curvature' is not one of"});
  }
};

QTEST_APPLESS_MAIN(TestMotionAngles)
#include "test_motion_angles.moc"
