// The motion files of one track (angles and 3-D keypoints CSV, OpenSim TRC and MOT): exact round trips,
// Y up, the strict OpenSim-rules checker (tests/motion/opensim_file_check.py) accepting them and failing a
// copy broken in each rule, and clear errors naming the file for tables that cannot be written.

#include "sapiens/io/export_error.h"
#include "sapiens/motion/complete_rows.h"
#include "sapiens/motion/mot_file.h"
#include "sapiens/motion/motion_csv.h"
#include "sapiens/motion/trc_file.h"
#include "sapiens/motion/y_up.h"
#include "test_support.h"

#include <QFileInfo>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <sstream>

using namespace sapiens::motion;

namespace {

const double kMissing = std::numeric_limits<double>::quiet_NaN();

std::string readText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream contents;
  contents << in.rdbuf();
  return contents.str();
}

void writeText(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t end = text.find(separator, start);
    parts.push_back(text.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) return parts;
    start = end + 1;
  }
}

std::vector<std::string> lines(const std::string& text) {
  auto all = split(text, '\n');
  if (!all.empty() && all.back().empty()) all.pop_back();
  return all;
}

/// Uneven times (a variable frame rate): median interval 1/30 s.
SampleTimes sampleTimes() {
  return {{0.0, 1.0 / 30, 2.0 / 30, 0.1 + 1e-3, 4.0 / 30, 5.0 / 30 + 0.02}, {0, 1, 2, 3, 4, 6}};
}

MarkerTable sampleMarkers() {
  MarkerTable table;
  table.times = sampleTimes();
  table.names = {"left_hip", "right_knee", "pelvis"};
  for (std::size_t r = 0; r < table.times.size(); ++r) {
    std::vector<Point3> row;
    for (std::size_t m = 0; m < table.names.size(); ++m)
      row.push_back({0.1 * static_cast<double>(m) + std::sin(static_cast<double>(r)) / 7,
                     0.9 - 0.3 * static_cast<double>(m) + 1.0 / 3,
                     2.5 + std::cos(static_cast<double>(r)) / 11});
    table.rows.push_back(row);
  }
  return table;
}

AngleTable sampleAngles() {
  AngleTable table;
  table.times = sampleTimes();
  table.names = {"left_knee.flexion", "right_knee.flexion", "left_elbow.flexion"};
  for (std::size_t r = 0; r < table.times.size(); ++r)
    table.rows.push_back({10.0 + static_cast<double>(r) / 3, -5.0 / 7 * static_cast<double>(r), 200.0 + 0.1});
  return table;
}

struct CheckerResult {
  bool passed = false;
  QString output;
};

QString checkerPath() {
  return QFileInfo(QString(SAPIENS_TEST_FIXTURES) + "/../motion/opensim_file_check.py").absoluteFilePath();
}

CheckerResult runChecker(const QString& format, const std::string& path) {
  const QString python = "/usr/bin/python3";
  if (!QFileInfo::exists(python)) return {false, "no /usr/bin/python3: scripts/install-deps installs it"};
  QProcess process;
  process.start(python, {checkerPath(), format, QString::fromStdString(path)});
  if (!process.waitForFinished(60000)) return {false, "the checker did not finish"};
  const QString output = QString::fromUtf8(process.readAllStandardOutput() + process.readAllStandardError());
  return {process.exitStatus() == QProcess::NormalExit && process.exitCode() == 0, output.trimmed()};
}

}  // namespace

class MotionFilesTest : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir dir_;
  std::string path(const std::string& name) const {
    return dir_.filePath(QString::fromStdString(name)).toStdString();
  }

 private Q_SLOTS:
  void angleCsvRoundTripsWithEmptyFieldsForMissing();
  void markerCsvIsYUpMetres();
  void trcPassesTheStrictCheckerAndReadsBackYUp();
  void trcRefusesAMissingValueNamingMarkerAndTime();
  void completeRowsMakeAWritableTrcAndMot();
  void motPassesTheStrictCheckerWithOpenSimNames();
  void motRefusesAMissingValueNamingAngleAndTime();
  void checkerFailsACopyBrokenInEachRule_data();
  void checkerFailsACopyBrokenInEachRule();
  void badTablesAreRefusedNamingFileAndProblem_data();
  void badTablesAreRefusedNamingFileAndProblem();
  void unwritableFolderNamesThePath();
};

void MotionFilesTest::angleCsvRoundTripsWithEmptyFieldsForMissing() {
  AngleTable angles = sampleAngles();
  angles.rows[2][1] = kMissing;
  const std::string file = path("clip.track1.angles.csv");
  writeAngleCsv(file, angles);
  const auto rows = lines(readText(file));
  QCOMPARE(rows.size(), angles.rows.size() + 1);
  QCOMPARE(rows[0], std::string("time,frame,left_knee.flexion,right_knee.flexion,left_elbow.flexion"));
  for (std::size_t r = 0; r < angles.rows.size(); ++r) {
    const auto fields = split(rows[r + 1], ',');
    QCOMPARE(fields.size(), std::size_t{5});
    QCOMPARE(std::stod(fields[0]), angles.times.seconds[r]);
    QCOMPARE(std::stoll(fields[1]), static_cast<long long>(angles.times.frames[r]));
    for (std::size_t a = 0; a < 3; ++a) {
      if (std::isnan(angles.rows[r][a]))
        QVERIFY2(fields[a + 2].empty(), rows[r + 1].c_str());
      else
        QCOMPARE(std::stod(fields[a + 2]), angles.rows[r][a]);  // exact: shortest round-trip text
    }
  }
}

void MotionFilesTest::markerCsvIsYUpMetres() {
  MarkerTable markers = sampleMarkers();
  markers.rows[1][0] = {kMissing, kMissing, kMissing};
  const std::string file = path("clip.track1.keypoints3d.csv");
  writeMarkerCsv(file, markers);
  const auto rows = lines(readText(file));
  QCOMPARE(rows[0], std::string("time,frame,left_hip.x,left_hip.y,left_hip.z,right_knee.x,right_knee.y,"
                                "right_knee.z,pelvis.x,pelvis.y,pelvis.z"));
  for (std::size_t r = 0; r < markers.rows.size(); ++r) {
    const auto fields = split(rows[r + 1], ',');
    QCOMPARE(fields.size(), std::size_t{11});
    for (std::size_t m = 0; m < 3; ++m) {
      if (r == 1 && m == 0) {  // a missing point: three empty fields
        QVERIFY2(fields[2].empty() && fields[3].empty() && fields[4].empty(), rows[2].c_str());
        continue;
      }
      const Point3& camera = markers.rows[r][m];
      QCOMPARE(std::stod(fields[2 + 3 * m]), camera[0]);
      QCOMPARE(std::stod(fields[3 + 3 * m]), -camera[1]);  // y down in the camera -> Y up
      QCOMPARE(std::stod(fields[4 + 3 * m]), -camera[2]);  // turned about X: right-handed
    }
  }
}

void MotionFilesTest::trcPassesTheStrictCheckerAndReadsBackYUp() {
  const MarkerTable markers = sampleMarkers();
  const std::string file = path("clip.track1.trc");
  writeTrc(file, markers);
  const CheckerResult check = runChecker("trc", file);
  QVERIFY2(check.passed, qPrintable(check.output));
  const auto rows = lines(readText(file));
  QCOMPARE(rows[0], std::string("PathFileType\t4\t(X/Y/Z)\tclip.track1.trc"));
  QCOMPARE(rows[1], std::string("DataRate\tCameraRate\tNumFrames\tNumMarkers\tUnits\tOrigDataRate\t"
                                "OrigDataStartFrame\tOrigNumFrames"));
  const auto values = split(rows[2], '\t');
  QCOMPARE(values.size(), std::size_t{8});
  QVERIFY2(std::abs(std::stod(values[0]) - 30.0) < 1e-9, rows[2].c_str());  // 1 / the median interval
  QCOMPARE(values[2], std::string("6"));
  QCOMPARE(values[3], std::string("3"));
  QCOMPARE(values[4], std::string("m"));
  QCOMPARE(rows[3], std::string("Frame#\tTime\tleft_hip\t\t\tright_knee\t\t\tpelvis\t\t"));
  QCOMPARE(rows[4], std::string("\t\tX1\tY1\tZ1\tX2\tY2\tZ2\tX3\tY3\tZ3"));
  QCOMPARE(rows.size(), std::size_t{6 + 6});
  for (std::size_t r = 0; r < markers.rows.size(); ++r) {
    const auto fields = split(rows[6 + r], '\t');
    QCOMPARE(fields.size(), std::size_t{3 * 3 + 2});
    QCOMPARE(fields[0], std::to_string(r + 1));
    QCOMPARE(std::stod(fields[1]), markers.times.seconds[r]);
    for (std::size_t m = 0; m < 3; ++m)
      for (std::size_t axis = 0; axis < 3; ++axis)
        QCOMPARE(std::stod(fields[2 + 3 * m + axis]), toYUp(markers.rows[r][m])[axis]);
  }
}

void MotionFilesTest::trcRefusesAMissingValueNamingMarkerAndTime() {
  MarkerTable markers = sampleMarkers();
  markers.rows[3][1][2] = kMissing;
  const std::string file = path("gap.trc");
  try {
    writeTrc(file, markers);
    QFAIL("a TRC with a missing value was written");
  } catch (const sapiens::ExportError& e) {
    QCOMPARE(e.path(), file);
    const QString message = e.what();
    QVERIFY2(message.contains("right_knee") && message.contains("0.101") && message.contains("gap"),
             e.what());
  }
  QVERIFY(!QFileInfo::exists(QString::fromStdString(file)));
}

void MotionFilesTest::completeRowsMakeAWritableTrcAndMot() {
  MarkerTable markers = sampleMarkers();
  markers.rows[2][0][1] = kMissing;
  AngleTable angles = sampleAngles();
  angles.rows[4][2] = kMissing;
  const MarkerTable completeMarkers = keepCompleteRows(markers);
  const AngleTable completeAngles = keepCompleteRows(angles);
  QCOMPARE(completeMarkers.rows.size(), std::size_t{5});
  QCOMPARE(completeMarkers.times.frames, (std::vector<std::int64_t>{0, 1, 3, 4, 6}));
  QCOMPARE(completeAngles.times.seconds.size(), std::size_t{5});
  writeTrc(path("complete.trc"), completeMarkers);
  writeMot(path("complete.mot"), completeAngles);
  const CheckerResult trc = runChecker("trc", path("complete.trc"));
  QVERIFY2(trc.passed, qPrintable(trc.output));
  const CheckerResult mot = runChecker("mot", path("complete.mot"));
  QVERIFY2(mot.passed, qPrintable(mot.output));
}

void MotionFilesTest::motPassesTheStrictCheckerWithOpenSimNames() {
  const AngleTable angles = sampleAngles();
  const std::string file = path("clip.track1.mot");
  writeMot(file, angles, {{"right_knee.flexion", "knee_angle_r"}, {"left_knee.flexion", "knee_angle_l"}});
  const CheckerResult check = runChecker("mot", file);
  QVERIFY2(check.passed, qPrintable(check.output));
  const auto rows = lines(readText(file));
  const std::vector<std::string> header{"clip.track1.mot",
                                        "version=1",
                                        "nRows=6",
                                        "nColumns=4",
                                        "inDegrees=yes",
                                        "endheader",
                                        "time\tknee_angle_l\tknee_angle_r\tleft_elbow.flexion"};
  QCOMPARE(std::vector<std::string>(rows.begin(), rows.begin() + 7), header);
  QCOMPARE(rows.size(), std::size_t{7 + 6});
  for (std::size_t r = 0; r < angles.rows.size(); ++r) {
    const auto fields = split(rows[7 + r], '\t');
    QCOMPARE(fields.size(), std::size_t{4});
    QCOMPARE(std::stod(fields[0]), angles.times.seconds[r]);
    for (std::size_t a = 0; a < 3; ++a) QCOMPARE(std::stod(fields[1 + a]), angles.rows[r][a]);
  }
  // Two angles renamed to the same coordinate would make two columns with one label.
  QVERIFY_THROWS_EXCEPTION(
      sapiens::ExportError,
      writeMot(path("twice.mot"), angles, {{"right_knee.flexion", "knee"}, {"left_knee.flexion", "knee"}}));
}

void MotionFilesTest::motRefusesAMissingValueNamingAngleAndTime() {
  AngleTable angles = sampleAngles();
  angles.rows[0][2] = kMissing;
  const std::string file = path("gap.mot");
  try {
    writeMot(file, angles);
    QFAIL("a MOT with a missing value was written");
  } catch (const sapiens::ExportError& e) {
    QCOMPARE(e.path(), file);
    QVERIFY2(QString(e.what()).contains("left_elbow.flexion") && QString(e.what()).contains("0.000000 s"),
             e.what());
  }
  QVERIFY(!QFileInfo::exists(QString::fromStdString(file)));
}

namespace {

using Mutation = std::function<std::string(std::vector<std::string>&)>;

std::string joined(const std::vector<std::string>& rows) {
  std::string text;
  for (const auto& row : rows) text += row + '\n';
  return text;
}

void replaceField(std::string& row, std::size_t field, const std::string& value) {
  auto fields = split(row, '\t');
  fields[field] = value;
  row.clear();
  for (std::size_t i = 0; i < fields.size(); ++i) row += (i ? "\t" : "") + fields[i];
}

/// A broken copy of a good file per rule: the file's lines in, the broken text out. TRC data starts at
/// line 7 (index 6), MOT data at index 7.
std::map<QString, Mutation> trcMutations() {
  return {
      {"trc first line",
       [](auto& l) {
         l[0] = "FileType\t4";
         return joined(l);
       }},
      {"trc keys",
       [](auto& l) {
         replaceField(l[1], 6, "StartFrame");
         return joined(l);
       }},
      {"trc values",
       [](auto& l) {
         l[2] = l[2].substr(0, l[2].rfind('\t'));
         return joined(l);
       }},
      {"trc units",
       [](auto& l) {
         replaceField(l[2], 4, "inches");
         return joined(l);
       }},
      {"trc marker labels",
       [](auto& l) {
         l[3] = l[3].substr(0, l[3].rfind("\tpelvis"));
         return joined(l);
       }},
      {"trc empty fields after a name",
       [](auto& l) {
         l[3] += "\t";
         return joined(l);
       }},
      {"trc xyz labels",
       [](auto& l) {
         replaceField(l[4], 6, "Y3");
         return joined(l);
       }},
      {"trc row length",
       [](auto& l) {
         l[8] = l[8].substr(0, l[8].rfind('\t'));
         return joined(l);
       }},
      {"trc empty field",
       [](auto& l) {
         replaceField(l[7], 5, "");
         return joined(l);
       }},
      {"trc nan",
       [](auto& l) {
         replaceField(l[9], 3, "NaN");
         return joined(l);
       }},
      {"trc time order",
       [](auto& l) {
         replaceField(l[10], 1, "0.05");
         return joined(l);
       }},
      {"trc blank line",
       [](auto& l) {
         l.insert(l.begin() + 9, "");
         return joined(l);
       }},
      {"trc frame count",
       [](auto& l) {
         l.pop_back();
         return joined(l);
       }},
  };
}

std::map<QString, Mutation> motMutations() {
  return {
      {"mot endheader",
       [](auto& l) {
         l[5] = "end header";
         return joined(l);
       }},
      {"mot nRows",
       [](auto& l) {
         l[2] = "nRows=7";
         return joined(l);
       }},
      {"mot nColumns",
       [](auto& l) {
         l.erase(l.begin() + 3);
         return joined(l);
       }},
      {"mot inDegrees",
       [](auto& l) {
         l.erase(l.begin() + 4);
         return joined(l);
       }},
      {"mot time first",
       [](auto& l) {
         replaceField(l[6], 0, "Time");
         return joined(l);
       }},
      {"mot row length",
       [](auto& l) {
         l[8] += "\t1.5";
         return joined(l);
       }},
      {"mot nan",
       [](auto& l) {
         replaceField(l[9], 2, "nan");
         return joined(l);
       }},
      {"mot empty field",
       [](auto& l) {
         replaceField(l[9], 2, "");
         return joined(l);
       }},
      {"mot time order",
       [](auto& l) {
         replaceField(l[10], 0, "0");
         return joined(l);
       }},
  };
}

const std::map<QString, Mutation>& mutations() {
  static const std::map<QString, Mutation> all = [] {
    auto both = trcMutations();
    both.merge(motMutations());
    return both;
  }();
  return all;
}

}  // namespace

void MotionFilesTest::checkerFailsACopyBrokenInEachRule_data() {
  QTest::addColumn<QString>("mutation");
  QTest::addColumn<QString>("expected");
  QTest::newRow("PathFileType first") << "trc first line"
                                      << "PathFileType";
  QTest::newRow("the 8 header keys") << "trc keys"
                                     << "header keys";
  QTest::newRow("8 header values") << "trc values"
                                   << "header values";
  QTest::newRow("units m or mm") << "trc units"
                                 << "Units";
  QTest::newRow("NumMarkers + 2 labels") << "trc marker labels"
                                         << "NumMarkers + 2";
  QTest::newRow("two empty fields per name") << "trc empty fields after a name"
                                             << "two empty fields";
  QTest::newRow("X1 Y1 Z1 labels") << "trc xyz labels"
                                   << "coordinate labels";
  QTest::newRow("3N + 2 fields") << "trc row length"
                                 << "fields where";
  QTest::newRow("trc empty field") << "trc empty field"
                                   << "empty";
  QTest::newRow("trc NaN") << "trc nan"
                           << "not finite";
  QTest::newRow("trc increasing time") << "trc time order"
                                       << "does not increase";
  QTest::newRow("trc blank line ends the data") << "trc blank line"
                                                << "blank line";
  QTest::newRow("trc NumFrames") << "trc frame count"
                                 << "NumFrames";
  QTest::newRow("endheader") << "mot endheader"
                             << "endheader";
  QTest::newRow("nRows") << "mot nRows"
                         << "nRows";
  QTest::newRow("nColumns") << "mot nColumns"
                            << "nColumns";
  QTest::newRow("inDegrees") << "mot inDegrees"
                             << "inDegrees";
  QTest::newRow("time first") << "mot time first"
                              << "not 'time'";
  QTest::newRow("rows as long as labels") << "mot row length"
                                          << "fields where";
  QTest::newRow("mot NaN") << "mot nan"
                           << "not finite";
  QTest::newRow("mot empty field") << "mot empty field"
                                   << "empty";
  QTest::newRow("mot increasing time") << "mot time order"
                                       << "does not increase";
}

void MotionFilesTest::checkerFailsACopyBrokenInEachRule() {
  QFETCH(QString, mutation);
  QFETCH(QString, expected);
  const bool trc = mutation.startsWith("trc");
  const std::string good = path(trc ? "good.trc" : "good.mot");
  if (trc)
    writeTrc(good, sampleMarkers());
  else
    writeMot(good, sampleAngles());
  const CheckerResult goodCheck = runChecker(trc ? "trc" : "mot", good);
  QVERIFY2(goodCheck.passed, qPrintable(goodCheck.output));

  auto fileLines = lines(readText(good));
  const std::string broken = path(trc ? "broken.trc" : "broken.mot");
  writeText(broken, mutations().at(mutation)(fileLines));
  const CheckerResult check = runChecker(trc ? "trc" : "mot", broken);
  QVERIFY2(!check.passed, qPrintable("the checker accepted: " + QString::fromStdString(readText(broken))));
  QVERIFY2(check.output.contains(expected), qPrintable(check.output));
}

namespace {

template <class Table>
Table broken(Table table, const QString& problem) {
  if (problem == "empty") {
    table.rows.clear();
    table.times = {};
  } else if (problem == "single sample") {
    table.rows.resize(1);
    table.times = {{0.5}, {12}};
  } else if (problem == "row length") {
    table.rows[3].pop_back();
  } else if (problem == "time order") {
    table.times.seconds[4] = table.times.seconds[2];
  } else if (problem == "rows and times") {
    table.rows.pop_back();
  } else if (problem == "no names") {
    table.names.clear();
    for (auto& row : table.rows) row.clear();
  } else if (problem == "name with space") {
    table.names[1] = "right knee";
  } else if (problem == "name twice") {
    table.names[2] = table.names[0];
  }
  return table;
}

void writeAs(const QString& format, const std::string& file, const QString& problem) {
  if (format == "angles.csv") writeAngleCsv(file, broken(sampleAngles(), problem));
  if (format == "keypoints3d.csv") writeMarkerCsv(file, broken(sampleMarkers(), problem));
  if (format == "trc") writeTrc(file, broken(sampleMarkers(), problem));
  if (format == "mot") writeMot(file, broken(sampleAngles(), problem));
}

}  // namespace

void MotionFilesTest::badTablesAreRefusedNamingFileAndProblem_data() {
  QTest::addColumn<QString>("format");
  QTest::addColumn<QString>("problem");
  QTest::addColumn<QString>("expected");
  const std::vector<std::pair<QString, QString>> problems{
      {"empty", "no samples"},           {"single sample", "single sample"}, {"row length", "row 3"},
      {"time order", "not later"},       {"rows and times", "5 rows for 6"}, {"no names", "no columns"},
      {"name with space", "right knee"}, {"name twice", "appears twice"}};
  for (const QString format : {"angles.csv", "keypoints3d.csv", "trc", "mot"})
    for (const auto& [problem, expected] : problems)
      QTest::newRow(qPrintable(format + ": " + problem)) << format << problem << expected;
}

void MotionFilesTest::badTablesAreRefusedNamingFileAndProblem() {
  QFETCH(QString, format);
  QFETCH(QString, problem);
  QFETCH(QString, expected);
  const std::string file = path("bad." + format.toStdString());
  writeText(file, "the previous file");
  try {
    writeAs(format, file, problem);
    QFAIL("the table was written");
  } catch (const sapiens::ExportError& e) {
    QCOMPARE(e.path(), file);
    QVERIFY2(QString(e.what()).startsWith(QString::fromStdString(file) + ": "), e.what());
    QVERIFY2(QString(e.what()).contains(expected), e.what());
  }
  QCOMPARE(readText(file), std::string("the previous file"));  // nothing replaced it
}

void MotionFilesTest::unwritableFolderNamesThePath() {
  const std::string file = path("no/such/folder/clip.track1.trc");
  try {
    writeTrc(file, sampleMarkers());
    QFAIL("a file was written into a missing folder");
  } catch (const sapiens::IoError& e) {
    QVERIFY2(QString(e.what()).contains(QString::fromStdString(file)), e.what());
  }
}

QTEST_GUILESS_MAIN(MotionFilesTest)
#include "test_motion_files.moc"
