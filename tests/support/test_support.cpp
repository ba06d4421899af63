#include "test_support.h"

#include "sapiens/common/cpu_features.h"

#include <QFile>
#include <QJsonDocument>
#include <QProcess>
#include <QProcessEnvironment>

namespace sapiens::test {

namespace {
// The suites compare with float32 references, so `--dtype auto` (the CPU's default) must not pick bf16
// under them on a CPU with native bf16: SAPIENS_CPU_BF16=0 for every test process and the CLIs they start,
// unless already set. The tests of auto itself set or remove it (runCli's extraEnvironment, qputenv).
[[maybe_unused]] const bool kAutoIsFp32InTests = [] {
  if (!qEnvironmentVariableIsSet("SAPIENS_CPU_BF16")) qputenv("SAPIENS_CPU_BF16", "0");
  return true;
}();
}  // namespace

std::string fixture(const std::string& relative) {
  return std::string(SAPIENS_TEST_FIXTURES) + "/" + relative;
}

std::string resource(const std::string& relative) {
  return std::string(SAPIENS_TEST_RESOURCES) + "/" + relative;
}

ProcessResult runCli(const QStringList& arguments, int timeoutMs, const QStringList& extraEnvironment) {
  QProcess process;
  QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
  env.insert("OMP_WAIT_POLICY", "PASSIVE");
  env.insert("OPENBLAS_THREAD_TIMEOUT", "4");
  for (const QString& entry : extraEnvironment) {
    const auto split = entry.indexOf('=');
    if (split < 0)
      env.remove(entry);
    else
      env.insert(entry.left(split), entry.mid(split + 1));
  }
  process.setProcessEnvironment(env);
  process.start(QString::fromUtf8(SAPIENS_CLI_PATH), arguments);
  ProcessResult result;
  if (!process.waitForFinished(timeoutMs)) {
    process.kill();
    process.waitForFinished();
    result.crashed = true;
  }
  result.crashed = result.crashed || process.exitStatus() == QProcess::CrashExit;
  result.exitCode = process.exitCode();
  result.out = QString::fromUtf8(process.readAllStandardOutput());
  result.err = QString::fromUtf8(process.readAllStandardError());
  return result;
}

QString describe(const ProcessResult& r) {
  return QString("exit %1\nstdout:\n%2\nstderr:\n%3").arg(r.exitCode).arg(r.out, r.err);
}

QJsonObject readJson(const QString& path) {
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly)) return {};
  return QJsonDocument::fromJson(file.readAll()).object();
}

QString forcedBf16Unsupported() {
  if (qgetenv("SAPIENS_CPU_BF16") != "1" || cpu::hasAvx512Bf16()) return {};
  return QStringLiteral("SAPIENS_CPU_BF16=1 on a CPU without native bf16: auto never runs bf16 here");
}

}  // namespace sapiens::test
