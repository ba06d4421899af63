#pragma once
// Shared helpers for the Qt Test suites: fixture paths, temporary folders, running the CLI.
// Linking them sets SAPIENS_CPU_BF16=0 (unless set): `--dtype auto` runs fp32 in the tests, whose
// references are float32, also on CPUs with native bf16 (see test_cpu_bf16 and doctor's test for auto).

#include <QJsonObject>
#include <QString>
#include <QStringList>

#include <string>

namespace sapiens::test {

/// tests/fixtures/<relative>
std::string fixture(const std::string& relative);
/// resources/<relative>
std::string resource(const std::string& relative);

struct ProcessResult {
  int exitCode = -1;
  bool crashed = false;
  QString out;
  QString err;
};
/// Runs the real sapiens-cli binary with `arguments`, waiting at most `timeoutMs`.
/// `extraEnvironment` holds NAME=VALUE entries added to the current environment, and NAME entries (no
/// "=") removed from it.
ProcessResult runCli(const QStringList& arguments, int timeoutMs = 300000,
                     const QStringList& extraEnvironment = {});
/// Exit code, stdout and stderr of a run, for a failing check's message.
QString describe(const ProcessResult& r);
/// The JSON object in `path`; empty when the file is missing or not a JSON object.
QJsonObject readJson(const QString& path);

/// Why this process cannot test what --dtype auto does with bf16 ("" when it can): the suite's bf16 runs
/// set SAPIENS_CPU_BF16=1, and on a CPU without native bf16 its convolutions would be LibTorch's
/// emulation, which auto never picks.
QString forcedBf16Unsupported();

}  // namespace sapiens::test
