// The BVH file of one track, read back by three independent means: forward kinematics computed here from
// the written numbers (the input joints within 1 cm after bone-length normalisation, on a synthetic walking
// figure turning 270 degrees), SciPy's from_euler('ZXY') for the Euler convention, and the third-party
// readers assimp (`assimp info`, `assimp export ... .assjson`) and three.js's BVHLoader under Node.

#include "sapiens/io/export_error.h"
#include "sapiens/motion/bvh_file.h"
#include "test_support.h"

#include <QDir>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

using namespace sapiens::motion;

namespace {

using Matrix = std::array<Point3, 3>;
constexpr double kPi = 3.14159265358979323846;
constexpr double kRadians = kPi / 180;

Point3 plus(const Point3& a, const Point3& b) {
  return {a[0] + b[0], a[1] + b[1], a[2] + b[2]};
}
Point3 minus(const Point3& a, const Point3& b) {
  return {a[0] - b[0], a[1] - b[1], a[2] - b[2]};
}
Point3 times(double s, const Point3& a) {
  return {s * a[0], s * a[1], s * a[2]};
}
double norm(const Point3& a) {
  return std::sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
}

Matrix product(const Matrix& a, const Matrix& b) {
  Matrix m{};
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c)
      for (int k = 0; k < 3; ++k) m[r][c] += a[r][k] * b[k][c];
  return m;
}
Point3 turned(const Matrix& m, const Point3& v) {
  Point3 out{};
  for (int r = 0; r < 3; ++r) out[r] = m[r][0] * v[0] + m[r][1] * v[1] + m[r][2] * v[2];
  return out;
}
Matrix aboutX(double degrees) {
  const double c = std::cos(degrees * kRadians), s = std::sin(degrees * kRadians);
  return {{{1, 0, 0}, {0, c, -s}, {0, s, c}}};
}
Matrix aboutY(double degrees) {
  const double c = std::cos(degrees * kRadians), s = std::sin(degrees * kRadians);
  return {{{c, 0, s}, {0, 1, 0}, {-s, 0, c}}};
}
Matrix aboutZ(double degrees) {
  const double c = std::cos(degrees * kRadians), s = std::sin(degrees * kRadians);
  return {{{c, -s, 0}, {s, c, 0}, {0, 0, 1}}};
}
/// BVH channels Zrotation Xrotation Yrotation, intrinsic: Rz * Rx * Ry.
Matrix fromChannels(const Point3& zxy) {
  return product(product(aboutZ(zxy[0]), aboutX(zxy[1])), aboutY(zxy[2]));
}

Matrix fromQuaternion(double x, double y, double z, double w) {
  return {{{1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)},
           {2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)},
           {2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)}}};
}
double largestDifference(const Matrix& a, const Matrix& b) {
  double largest = 0;
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) largest = std::max(largest, std::abs(a[r][c] - b[r][c]));
  return largest;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

/// Y-up world points of a walking, turning figure at time t: bones of lengths that wobble by 2 %, knees
/// bending from 5 (nearly straight) to 65 degrees, elbows 10 to 90, the heading turning 270 degrees.
std::map<std::string, Point3> walkingPose(double t, double duration) {
  const double phase = 2 * kPi * 1.1 * t;  // 1.1 steps per second per leg
  auto wobble = [&](double offset) { return 1 + 0.02 * std::sin(7.3 * t + offset); };
  const double heading = 270 * t / duration;
  const Matrix body =
      product(product(aboutY(heading), aboutX(6 + 3 * std::sin(2 * phase))), aboutZ(4 * std::sin(phase)));
  const Point3 left = turned(body, {1, 0, 0});
  std::map<std::string, Point3> p;
  p["pelvis"] = plus({2 * std::sin(heading * kRadians), -0.45 + 0.03 * std::sin(2 * phase),
                      -5 + 2 * std::cos(heading * kRadians)},
                     {0, 0, 0});
  p["left_hip"] = plus(p["pelvis"], times(0.1 * wobble(0), left));
  p["right_hip"] = minus(p["pelvis"], times(0.1 * wobble(0), left));
  const Point3 trunkUp = turned(product(body, aboutX(-8 * std::sin(phase))), {0, 1, 0});
  p["spine"] = plus(p["pelvis"], times(0.25 * wobble(1), trunkUp));
  p["thorax"] = plus(p["spine"], times(0.25 * wobble(1), trunkUp));
  const Matrix chest = product(body, aboutY(12 * std::sin(phase)));
  p["left_shoulder"] = plus(p["thorax"], turned(chest, {0.18 * wobble(2), -0.03, 0}));
  p["right_shoulder"] = plus(p["thorax"], turned(chest, {-0.18 * wobble(2), -0.03, 0}));
  const Matrix headTurn =
      product(body, product(aboutY(20 * std::sin(0.5 * phase)), aboutX(10 * std::sin(phase))));
  p["head"] = plus(p["thorax"], times(0.22 * wobble(3), turned(headTurn, {0, 1, 0.1})));
  p["left_ear"] = plus(p["head"], turned(headTurn, {0.08, 0, 0}));
  p["right_ear"] = plus(p["head"], turned(headTurn, {-0.08, 0, 0}));
  p["nose"] = plus(p["head"], times(0.1 * wobble(4), turned(headTurn, {0, -0.2, 1})));
  for (const int side : {1, -1}) {
    const std::string s = side > 0 ? "left_" : "right_";
    const double swing = std::sin(phase + (side > 0 ? 0 : kPi));
    const double hipFlexion = 25 * swing,
                 kneeFlexion = 35 + 30 * std::sin(phase + (side > 0 ? 0.8 : 0.8 + kPi));
    const Matrix thigh = product(body, product(aboutX(-hipFlexion), aboutZ(side * (4 + 3 * swing))));
    p[s + "knee"] = plus(p[s + "hip"], times(0.42 * wobble(5), turned(thigh, {0, -1, 0})));
    const Matrix shank = product(thigh, aboutX(kneeFlexion));
    p[s + "ankle"] = plus(p[s + "knee"], times(0.4 * wobble(6), turned(shank, {0, -1, 0})));
    p[s + "big_toe"] =
        plus(p[s + "ankle"], times(0.15 * wobble(7), turned(product(shank, aboutX(-kneeFlexion + 10 * swing)),
                                                            {side * 0.1, -0.3, 1})));
    const Matrix arm = product(chest, product(aboutZ(side * (12 + 8 * swing)), aboutX(30 * swing)));
    p[s + "elbow"] = plus(p[s + "shoulder"], times(0.3 * wobble(8), turned(arm, {0, -1, 0})));
    const double elbowFlexion = 50 + 40 * std::sin(phase + (side > 0 ? 0.3 : 0.3 + kPi));
    p[s + "wrist"] = plus(p[s + "elbow"],
                          times(0.26 * wobble(9), turned(product(arm, aboutX(-elbowFlexion)), {0, -1, 0})));
  }
  return p;
}

/// The figure as analysis hands it over: camera frame (y down, z forward), on uneven times, with an extra
/// column the skeleton does not use.
MarkerTable walkingTable(std::size_t frames = 120) {
  MarkerTable table;
  table.names = bvhMarkerNames();
  table.names.push_back("left_heel");
  const double duration = static_cast<double>(frames) / 30;
  for (std::size_t f = 0; f < frames; ++f) {
    const double t = static_cast<double>(f) / 30 + (f % 7 == 3 ? 0.004 : 0.0);
    const auto pose = walkingPose(t, duration);
    std::vector<Point3> row;
    for (const auto& name : table.names) {
      const Point3& world = name == "left_heel" ? pose.at("left_ankle") : pose.at(name);
      row.push_back({world[0], -world[1], -world[2]});
    }
    table.rows.push_back(row);
    table.times.seconds.push_back(t);
    table.times.frames.push_back(static_cast<std::int64_t>(f));
  }
  return table;
}

std::string readText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream contents;
  contents << in.rdbuf();
  return contents.str();
}

}  // namespace

namespace {

/// A BVH file as read back here: the hierarchy (end sites as joints without channels) and the frames.
struct ParsedBvh {
  struct Node {
    std::string name;  // "End Site" children are named "<parent>/end"
    int parent = -1;
    Point3 offset{};
    int channels = 0;
  };
  std::vector<Node> nodes;
  std::size_t frameCount = 0;
  double frameTime = 0;
  std::vector<std::vector<double>> frames;
  QString error;
};

bool parseNode(std::istringstream& in, ParsedBvh& bvh, int parent, const std::string& name) {
  ParsedBvh::Node node;
  node.name = name;
  node.parent = parent;
  const int index = static_cast<int>(bvh.nodes.size());
  bvh.nodes.push_back(node);
  std::string token;
  in >> token;
  if (token != "{") return false;
  while (in >> token) {
    if (token == "}") return true;
    if (token == "OFFSET") {
      Point3 offset;
      in >> offset[0] >> offset[1] >> offset[2];
      bvh.nodes[static_cast<std::size_t>(index)].offset = offset;
    } else if (token == "CHANNELS") {
      int count = 0;
      in >> count;
      bvh.nodes[static_cast<std::size_t>(index)].channels = count;
      for (int c = 0; c < count; ++c) in >> token;
    } else if (token == "JOINT") {
      std::string child;
      in >> child;
      if (!parseNode(in, bvh, index, child)) return false;
    } else if (token == "End") {
      in >> token;  // "Site"
      if (!parseNode(in, bvh, index, name + "/end")) return false;
    } else {
      return false;
    }
  }
  return false;
}

ParsedBvh parseBvh(const std::string& text) {
  ParsedBvh bvh;
  std::istringstream in(text);
  std::string token, name;
  in >> token;
  if (token != "HIERARCHY") return bvh.error = "no HIERARCHY", bvh;
  in >> token >> name;
  if (token != "ROOT" || !parseNode(in, bvh, -1, name)) return bvh.error = "bad hierarchy", bvh;
  std::string frames, frameWord, timeWord;
  in >> token >> frames >> bvh.frameCount >> frameWord >> timeWord >> bvh.frameTime;
  if (token != "MOTION" || frames != "Frames:" || frameWord != "Frame" || timeWord != "Time:")
    return bvh.error = "bad MOTION header", bvh;
  int channelCount = 0;
  for (const auto& node : bvh.nodes) channelCount += node.channels;
  for (std::size_t f = 0; f < bvh.frameCount; ++f) {
    std::vector<double> values(static_cast<std::size_t>(channelCount));
    for (double& v : values) in >> v;
    if (!in) return bvh.error = "short frame " + QString::number(f), bvh;
    bvh.frames.push_back(values);
  }
  if (in >> token) bvh.error = "text after the last frame";
  return bvh;
}

/// Every node's world position and rotation in one frame: position = parent's + parent's rotation x offset,
/// rotation = parent's x Rz Rx Ry of the node's channels (the root also translates).
struct Posed {
  std::vector<Point3> positions;
  std::vector<Matrix> rotations;
};

Posed forwardKinematics(const ParsedBvh& bvh, std::size_t frame) {
  Posed posed;
  std::size_t channel = 0;
  const auto& values = bvh.frames[frame];
  for (const auto& node : bvh.nodes) {
    Point3 position = node.offset;
    Matrix parentRotation{{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}};
    if (node.parent >= 0) {
      parentRotation = posed.rotations[static_cast<std::size_t>(node.parent)];
      position =
          plus(posed.positions[static_cast<std::size_t>(node.parent)], turned(parentRotation, node.offset));
    }
    if (node.channels == 6) {
      position = plus(position, {values[channel], values[channel + 1], values[channel + 2]});
      channel += 3;
    }
    Matrix rotation = parentRotation;
    if (node.channels >= 3) {
      rotation =
          product(parentRotation, fromChannels({values[channel], values[channel + 1], values[channel + 2]}));
      channel += 3;
    }
    posed.positions.push_back(position);
    posed.rotations.push_back(rotation);
  }
  return posed;
}

int nodeIndex(const ParsedBvh& bvh, const std::string& name) {
  for (std::size_t i = 0; i < bvh.nodes.size(); ++i)
    if (bvh.nodes[i].name == name) return static_cast<int>(i);
  return -1;
}

/// The BVH node that sits on each marker, and the marker its bone hangs from (the skeleton's links).
struct Link {
  const char* node;
  const char* marker;
  const char* from;  // nullptr for the root
};
const std::vector<Link>& links() {
  static const std::vector<Link> all{
      {"Hips", "pelvis", nullptr},
      {"Chest", "spine", "pelvis"},
      {"Neck", "thorax", "spine"},
      {"Head", "head", "thorax"},
      {"Head/end", "nose", "head"},
      {"LeftArm", "left_shoulder", "thorax"},
      {"LeftForeArm", "left_elbow", "left_shoulder"},
      {"LeftForeArm/end", "left_wrist", "left_elbow"},
      {"RightArm", "right_shoulder", "thorax"},
      {"RightForeArm", "right_elbow", "right_shoulder"},
      {"RightForeArm/end", "right_wrist", "right_elbow"},
      {"LeftUpLeg", "left_hip", "pelvis"},
      {"LeftLeg", "left_knee", "left_hip"},
      {"LeftFoot", "left_ankle", "left_knee"},
      {"LeftFoot/end", "left_big_toe", "left_ankle"},
      {"RightUpLeg", "right_hip", "pelvis"},
      {"RightLeg", "right_knee", "right_hip"},
      {"RightFoot", "right_ankle", "right_knee"},
      {"RightFoot/end", "right_big_toe", "right_ankle"},
  };
  return all;
}

/// The input joints (Y up) with every link rescaled to its median length over the clip, built outwards
/// from the pelvis along the links' directions.
std::vector<std::map<std::string, Point3>> normalisedJoints(const MarkerTable& table) {
  std::vector<std::map<std::string, Point3>> input;
  for (const auto& row : table.rows) {
    std::map<std::string, Point3> pose;
    for (std::size_t m = 0; m < table.names.size(); ++m)
      pose[table.names[m]] = {row[m][0], -row[m][1], -row[m][2]};
    input.push_back(pose);
  }
  std::map<std::string, double> lengths;
  for (const auto& link : links()) {
    if (!link.from) continue;
    std::vector<double> values;
    for (const auto& pose : input) values.push_back(norm(minus(pose.at(link.marker), pose.at(link.from))));
    lengths[link.marker] = median(values);
  }
  std::vector<std::map<std::string, Point3>> normalised;
  for (const auto& pose : input) {
    std::map<std::string, Point3> out{{"pelvis", pose.at("pelvis")}};
    for (const auto& link : links()) {
      if (!link.from) continue;
      const Point3 bone = minus(pose.at(link.marker), pose.at(link.from));
      out[link.marker] = plus(out.at(link.from), times(lengths.at(link.marker) / norm(bone), bone));
    }
    normalised.push_back(out);
  }
  return normalised;
}

struct ProcessOutput {
  int exitCode = -1;
  QString out;
  QString err;
};

ProcessOutput runProcess(const QString& program, const QStringList& arguments, const QByteArray& input = {}) {
  QProcess process;
  process.start(program, arguments);
  if (!input.isEmpty()) process.write(input);
  process.closeWriteChannel();
  if (!process.waitForFinished(120000)) return {-1, {}, "did not finish"};
  return {process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1,
          QString::fromUtf8(process.readAllStandardOutput()),
          QString::fromUtf8(process.readAllStandardError())};
}

QString testsFolder() {
  return QFileInfo(QString(SAPIENS_TEST_FIXTURES) + "/..").absoluteFilePath();
}

}  // namespace

class BvhTest : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir dir_;
  std::string path(const std::string& name) const {
    return dir_.filePath(QString::fromStdString(name)).toStdString();
  }
  /// The walking figure written once; its path.
  std::string walkingFile() {
    const std::string file = path("walk.track1.bvh");
    if (!QFileInfo::exists(QString::fromStdString(file))) writeBvh(file, walkingTable());
    return file;
  }

 private Q_SLOTS:
  void hierarchyAndFramesAreAsWritten();
  void forwardKinematicsReproducesTheJointsWithinOneCentimetre();
  void anglesAreContinuousThroughTheTurn();
  void eulerConventionMatchesScipy();
  void assimpReadsTheAnimation();
  void threeJsBvhLoaderReadsTheAnimation();
  void missingMarkersHoldThePreviousPose();
  void badInputIsRefusedNamingFileAndProblem_data();
  void badInputIsRefusedNamingFileAndProblem();
};

void BvhTest::hierarchyAndFramesAreAsWritten() {
  const MarkerTable table = walkingTable();
  const BvhMotion motion = buildBvhMotion(table);
  const ParsedBvh bvh = parseBvh(readText(walkingFile()));
  QVERIFY2(bvh.error.isEmpty(), qPrintable(bvh.error));
  std::vector<std::string> names;
  for (const auto& node : bvh.nodes)
    if (node.channels) names.push_back(node.name);
  QCOMPARE(names,
           (std::vector<std::string>{"Hips", "Spine", "Chest", "Neck", "Head", "LeftShoulder", "LeftArm",
                                     "LeftForeArm", "RightShoulder", "RightArm", "RightForeArm", "LeftUpLeg",
                                     "LeftLeg", "LeftFoot", "RightUpLeg", "RightLeg", "RightFoot"}));
  QCOMPARE(bvh.nodes.size(), names.size() + 5);  // head, wrists, toes
  QCOMPARE(bvh.nodes[0].channels, 6);
  QCOMPARE(bvh.frameCount, table.rows.size());
  QCOMPARE(bvh.frameTime, 1.0 / 30);  // the median interval, exactly as computed
  QCOMPARE(motion.frameTime, 1.0 / 30);
  // Rest pose: a T-pose, Y up, the character's left on +X.
  QVERIFY(bvh.nodes[static_cast<std::size_t>(nodeIndex(bvh, "LeftArm"))].offset[0] > 0.1);
  QVERIFY(bvh.nodes[static_cast<std::size_t>(nodeIndex(bvh, "RightArm"))].offset[0] < -0.1);
  QVERIFY(bvh.nodes[static_cast<std::size_t>(nodeIndex(bvh, "LeftLeg"))].offset[1] < -0.3);
  QVERIFY(bvh.nodes[static_cast<std::size_t>(nodeIndex(bvh, "Head/end"))].offset[2] > 0.05);
}

void BvhTest::forwardKinematicsReproducesTheJointsWithinOneCentimetre() {
  const MarkerTable table = walkingTable();
  const ParsedBvh bvh = parseBvh(readText(walkingFile()));
  QVERIFY2(bvh.error.isEmpty(), qPrintable(bvh.error));
  const auto expected = normalisedJoints(table);
  std::vector<std::pair<std::string, std::string>> checks;
  for (const auto& link : links()) checks.emplace_back(link.node, link.marker);
  checks.insert(checks.end(), {{"Spine", "pelvis"}, {"LeftShoulder", "thorax"}, {"RightShoulder", "thorax"}});
  double largest = 0, largestRaw = 0;
  for (std::size_t f = 0; f < bvh.frameCount; ++f) {
    const Posed posed = forwardKinematics(bvh, f);
    for (const auto& [node, marker] : checks) {
      const int index = nodeIndex(bvh, node);
      QVERIFY2(index >= 0, node.c_str());
      const Point3& at = posed.positions[static_cast<std::size_t>(index)];
      largest = std::max(largest, norm(minus(at, expected[f].at(marker))));
      const Point3& raw = table.rows[f][static_cast<std::size_t>(
          std::find(table.names.begin(), table.names.end(), marker) - table.names.begin())];
      largestRaw = std::max(largestRaw, norm(minus(at, {raw[0], -raw[1], -raw[2]})));
    }
  }
  qInfo(
      "FK vs the input joints rescaled to the median bone lengths: max %.3g cm over %zu frames x %zu joints; "
      "vs the raw input (bones wobbling 2 %%): max %.3g cm",
      100 * largest, bvh.frameCount, checks.size(), 100 * largestRaw);
  QVERIFY2(largest < 0.01, qPrintable(QString::number(100 * largest) + " cm"));
  QVERIFY2(largestRaw > 0.005, "the figure's bone lengths should wobble, or the normalisation is untested");
}

void BvhTest::anglesAreContinuousThroughTheTurn() {
  const ParsedBvh bvh = parseBvh(readText(walkingFile()));
  QVERIFY2(bvh.error.isEmpty(), qPrintable(bvh.error));
  double largestStep = 0, largestHeading = 0;
  for (std::size_t f = 1; f < bvh.frameCount; ++f) {
    for (std::size_t c = 3; c < bvh.frames[f].size(); ++c)
      largestStep = std::max(largestStep, std::abs(bvh.frames[f][c] - bvh.frames[f - 1][c]));
    largestHeading = std::max(largestHeading, std::abs(bvh.frames[f][5]));  // the root's Yrotation
  }
  qInfo("largest change of any angle between frames: %.2f degrees; root heading reaches %.1f degrees",
        largestStep, largestHeading);
  QVERIFY2(largestStep < 20, qPrintable(QString::number(largestStep)));
  // The figure turns 270 degrees: a continuous heading leaves +-180 instead of jumping by 360.
  QVERIFY2(largestHeading > 240, qPrintable(QString::number(largestHeading)));
}

void BvhTest::eulerConventionMatchesScipy() {
  const QString python = "/usr/bin/python3";
  if (!QFileInfo::exists(python))
    QFAIL("no /usr/bin/python3 (with python3-scipy): scripts/install-deps installs it");
  const MarkerTable table = walkingTable();
  const ParsedBvh bvh = parseBvh(readText(walkingFile()));
  const auto input = normalisedJoints(table);
  struct Chain {
    std::vector<std::string> joints;
    Point3 rest;
    const char *from, *to;
  };
  const std::vector<Chain> chains{{{"Hips"}, {1, 0, 0}, "right_hip", "left_hip"},
                                  {{"Hips", "Spine", "Chest"}, {0, 1, 0}, "spine", "thorax"},
                                  {{"Hips", "Spine", "Chest", "Neck", "Head"}, {0, 0, 1}, "head", "nose"},
                                  {{"Hips", "LeftUpLeg", "LeftLeg"}, {0, -1, 0}, "left_knee", "left_ankle"},
                                  {{"Hips", "Spine", "Chest", "RightShoulder", "RightArm", "RightForeArm"},
                                   {-1, 0, 0},
                                   "right_elbow",
                                   "right_wrist"}};
  QJsonArray cases;
  for (const std::size_t f : {0, 29, 61, 97, 119}) {
    for (const auto& chain : chains) {
      QJsonArray angles;
      for (const auto& joint : chain.joints) {
        std::size_t channel = 3;
        for (int n = 0; n < nodeIndex(bvh, joint); ++n)
          channel += bvh.nodes[static_cast<std::size_t>(n)].channels == 0 ? 0 : 3;
        angles.append(
            QJsonArray{bvh.frames[f][channel], bvh.frames[f][channel + 1], bvh.frames[f][channel + 2]});
      }
      const Point3 bone = minus(input[f].at(chain.to), input[f].at(chain.from));
      cases.append(QJsonObject{{"chain", angles},
                               {"rest", QJsonArray{chain.rest[0], chain.rest[1], chain.rest[2]}},
                               {"expected", QJsonArray{bone[0], bone[1], bone[2]}}});
    }
  }
  const ProcessOutput result = runProcess(python, {testsFolder() + "/motion/scipy_euler_check.py"},
                                          QJsonDocument(cases).toJson(QJsonDocument::Compact));
  QVERIFY2(result.exitCode == 0, qPrintable(result.err));
  const QJsonObject summary = QJsonDocument::fromJson(result.out.toUtf8()).object();
  qInfo("scipy from_euler('ZXY') on %d bones: largest angle to the input bone %.3g degrees",
        summary["cases"].toInt(), summary["max_degrees"].toDouble());
  QCOMPARE(summary["cases"].toInt(), 25);
  QVERIFY2(summary["max_degrees"].toDouble() < 1e-3, qPrintable(result.out));
}

void BvhTest::assimpReadsTheAnimation() {
  const QString assimp = QStandardPaths::findExecutable("assimp");
  if (assimp.isEmpty()) QFAIL("assimp not found: scripts/install-deps installs it (Debian assimp-utils)");
  const std::string file = walkingFile();
  const ParsedBvh bvh = parseBvh(readText(file));
  const ProcessOutput info = runProcess(assimp, {"info", QString::fromStdString(file)});
  QVERIFY2(info.exitCode == 0, qPrintable(info.out + info.err));
  auto fact = [&](const QString& label) {
    const auto match = QRegularExpression("^" + QRegularExpression::escape(label) + ":\\s+(\\d+)",
                                          QRegularExpression::MultilineOption)
                           .match(info.out);
    return match.hasMatch() ? match.captured(1).toInt() : -1;
  };
  QCOMPARE(fact("Animations"), 1);
  QCOMPARE(fact("Animation Channels"), 17);
  QCOMPARE(fact("Nodes"), static_cast<int>(bvh.nodes.size()));
  const QString tree = info.out.mid(info.out.indexOf("Node hierarchy:"));
  QStringList treeNames;
  for (const QString& line : tree.split('\n').mid(1)) {
    const QString trimmed = line.trimmed().remove(QRegularExpression("^[^\\w]+")).section(' ', 0, 0);
    if (!trimmed.isEmpty() && !trimmed.startsWith("T:")) treeNames << trimmed;
  }
  QStringList expectedNames;
  for (const auto& node : bvh.nodes) {
    const QString name = QString::fromStdString(node.name);
    expectedNames << (name.endsWith("/end") ? "EndSite_" + name.chopped(4) : name);
  }
  QCOMPARE(treeNames, expectedNames);

  // The frames: assimp's own Euler-to-quaternion reading of every channel, frame count and rate.
  const QString json = dir_.filePath("walk.assjson");
  const ProcessOutput exported =
      runProcess(assimp, {"export", QString::fromStdString(file), json, "-fassjson"});
  QVERIFY2(exported.exitCode == 0, qPrintable(exported.out + exported.err));
  QFile jsonFile(json);
  QVERIFY(jsonFile.open(QIODevice::ReadOnly));
  const QJsonObject animation =
      QJsonDocument::fromJson(jsonFile.readAll()).object()["animations"].toArray()[0].toObject();
  QVERIFY2(std::abs(animation["tickspersecond"].toDouble() - 1 / bvh.frameTime) < 1e-3,
           qPrintable(QString::number(animation["tickspersecond"].toDouble())));
  QCOMPARE(animation["duration"].toDouble(), static_cast<double>(bvh.frameCount - 1));
  const QJsonArray channels = animation["channels"].toArray();
  QCOMPARE(channels.size(), 17);
  double largest = 0;
  for (const auto& channelValue : channels) {
    const QJsonObject channel = channelValue.toObject();
    const QJsonArray keys = channel["rotationkeys"].toArray();
    QCOMPARE(static_cast<std::size_t>(keys.size()), bvh.frameCount);
    const int node = nodeIndex(bvh, channel["name"].toString().toStdString());
    QVERIFY2(node >= 0, qPrintable(channel["name"].toString()));
    std::size_t first = 3;
    for (int n = 0; n < node; ++n) first += bvh.nodes[static_cast<std::size_t>(n)].channels ? 3 : 0;
    for (std::size_t f = 0; f < bvh.frameCount; f += 13) {
      const QJsonArray q = keys[static_cast<int>(f)].toArray()[1].toArray();  // [w, x, y, z]
      const auto& v = bvh.frames[f];
      largest = std::max(largest, largestDifference(fromQuaternion(q[1].toDouble(), q[2].toDouble(),
                                                                   q[3].toDouble(), q[0].toDouble()),
                                                    fromChannels({v[first], v[first + 1], v[first + 2]})));
    }
  }
  qInfo(
      "assimp: %d channels x %zu keys; its rotations differ from Rz*Rx*Ry of the written angles by at most "
      "%.2g",
      static_cast<int>(channels.size()), bvh.frameCount, largest);
  QVERIFY2(largest < 1e-4, qPrintable(QString::number(largest)));
}

void BvhTest::threeJsBvhLoaderReadsTheAnimation() {
  const QString node = QStandardPaths::findExecutable("node");
  if (node.isEmpty()) QFAIL("node not found: scripts/install-deps installs it (Debian nodejs npm)");
  if (!QFileInfo::exists(testsFolder() + "/readers/node_modules/three/package.json"))
    QFAIL(
        "three.js is not installed in tests/readers: scripts/install-deps runs npm ci --prefix "
        "tests/readers");
  const std::string file = walkingFile();
  const ParsedBvh bvh = parseBvh(readText(file));
  const ProcessOutput result =
      runProcess(node, {testsFolder() + "/readers/bvh_summary.mjs", QString::fromStdString(file)});
  QVERIFY2(result.exitCode == 0, qPrintable(result.err));
  const QJsonObject summary = QJsonDocument::fromJson(result.out.toUtf8()).object();
  QStringList expectedBones;
  for (const auto& n : bvh.nodes)
    if (n.channels) expectedBones << QString::fromStdString(n.name);
  QStringList bones;
  for (const auto& bone : summary["bones"].toArray()) bones << bone.toString();
  QCOMPARE(bones, expectedBones);
  QCOMPARE(summary["endSites"].toInt(), 5);
  QCOMPARE(static_cast<std::size_t>(summary["frames"].toInt()), bvh.frameCount);
  QVERIFY2(std::abs(summary["frameTime"].toDouble() - bvh.frameTime) < 1e-6,
           qPrintable(result.out.left(300)));
  double largestOffset = 0, largestRotation = 0;
  const QJsonObject offsets = summary["offsets"].toObject();
  const QJsonObject rotations = summary["rotations"].toObject();
  std::size_t first = 3;
  for (const auto& n : bvh.nodes) {
    if (!n.channels) continue;
    const QJsonArray offset = offsets[QString::fromStdString(n.name)].toArray();
    for (int i = 0; i < 3; ++i)
      largestOffset =
          std::max(largestOffset, std::abs(offset[i].toDouble() - n.offset[static_cast<std::size_t>(i)]));
    const QJsonArray track = rotations[QString::fromStdString(n.name)].toArray();
    QCOMPARE(static_cast<std::size_t>(track.size()), bvh.frameCount);
    for (std::size_t f = 0; f < bvh.frameCount; f += 11) {
      const QJsonArray q = track[static_cast<int>(f)].toArray();  // [x, y, z, w]
      const auto& v = bvh.frames[f];
      largestRotation =
          std::max(largestRotation, largestDifference(fromQuaternion(q[0].toDouble(), q[1].toDouble(),
                                                                     q[2].toDouble(), q[3].toDouble()),
                                                      fromChannels({v[first], v[first + 1], v[first + 2]})));
    }
    first += 3;
  }
  qInfo(
      "three.js BVHLoader: %d bones, %d frames, frame time %.6f s; offsets within %.2g m, rotations within "
      "%.2g",
      static_cast<int>(bones.size()), summary["frames"].toInt(), summary["frameTime"].toDouble(),
      largestOffset, largestRotation);
  QVERIFY(largestOffset < 1e-9);
  QVERIFY2(largestRotation < 1e-5, qPrintable(QString::number(largestRotation)));  // float32 quaternions
}

void BvhTest::missingMarkersHoldThePreviousPose() {
  MarkerTable table = walkingTable(40);
  const auto column = [&](const std::string& name) {
    return static_cast<std::size_t>(std::find(table.names.begin(), table.names.end(), name) -
                                    table.names.begin());
  };
  const double nan = std::numeric_limits<double>::quiet_NaN();
  table.rows[0][column("left_wrist")] = {nan, nan, nan};  // before the first complete row
  table.rows[1][column("nose")][2] = nan;
  table.rows[20][column("right_knee")] = {nan, nan, nan};
  table.rows[21][column("left_heel")] = {nan, nan, nan};  // not a skeleton marker: the row is complete
  const BvhMotion motion = buildBvhMotion(table);
  QCOMPARE(motion.rotations.size(), std::size_t{40});
  const std::vector<bool> held = motion.heldFrames;
  QVERIFY(held[0] && held[1] && held[20] && !held[2] && !held[19] && !held[21]);
  QCOMPARE(std::count(held.begin(), held.end(), true), 3);
  QCOMPARE(motion.rotations[0], motion.rotations[2]);
  QCOMPARE(motion.rootPositions[1], motion.rootPositions[2]);
  QCOMPARE(motion.rotations[20], motion.rotations[19]);
  QCOMPARE(motion.rootPositions[20], motion.rootPositions[19]);
  QVERIFY(motion.rotations[21] != motion.rotations[20]);
}

void BvhTest::badInputIsRefusedNamingFileAndProblem_data() {
  QTest::addColumn<QString>("problem");
  QTest::addColumn<QString>("expected");
  QTest::newRow("empty table") << "empty"
                               << "at least two rows";
  QTest::newRow("a single frame") << "single"
                                  << "at least two rows";
  QTest::newRow("row length") << "row length"
                              << "row 4 has";
  QTest::newRow("time order") << "time order"
                              << "not later";
  QTest::newRow("missing marker columns") << "no nose"
                                          << "no nose";
  QTest::newRow("no complete row") << "all missing"
                                   << "no row has every marker";
}

void BvhTest::badInputIsRefusedNamingFileAndProblem() {
  QFETCH(QString, problem);
  QFETCH(QString, expected);
  MarkerTable table = walkingTable(10);
  if (problem == "empty") table = {};
  if (problem == "single") {
    table.rows.resize(1);
    table.times = {{0.0}, {0}};
  }
  if (problem == "row length") table.rows[4].pop_back();
  if (problem == "time order") table.times.seconds[6] = table.times.seconds[5];
  if (problem == "no nose") {
    const auto nose = std::find(table.names.begin(), table.names.end(), "nose") - table.names.begin();
    table.names.erase(table.names.begin() + nose);
    for (auto& row : table.rows) row.erase(row.begin() + nose);
  }
  if (problem == "all missing")
    for (std::size_t r = 0; r < table.rows.size(); ++r)
      table.rows[r][r % 5][0] = std::numeric_limits<double>::quiet_NaN();
  const std::string file = path("bad.bvh");
  {
    std::ofstream previous(file, std::ios::trunc);
    previous << "the previous file";
  }
  try {
    writeBvh(file, table);
    QFAIL("the table was written");
  } catch (const sapiens::ExportError& e) {
    QCOMPARE(e.path(), file);
    QVERIFY2(QString(e.what()).startsWith(QString::fromStdString(file) + ": "), e.what());
    QVERIFY2(QString(e.what()).contains(expected), e.what());
  }
  QCOMPARE(readText(file), std::string("the previous file"));
}

QTEST_GUILESS_MAIN(BvhTest)
#include "test_bvh.moc"
