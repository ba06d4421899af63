// The heap policy: large blocks freed by one pass stay resident for the next (no page faults again),
// and releaseFreeMemory gives them back when a program goes idle.

#include "sapiens/common/allocator.h"

#include <QtTest>

#include <sys/resource.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>

namespace {

long long residentBytes() {
  std::ifstream statm("/proc/self/statm");
  long long pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * sysconf(_SC_PAGESIZE);
}

long minorFaults() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt;
}

constexpr std::size_t kBlock = std::size_t{1200} << 20;  // above glibc's old 1 GiB trim threshold

void touchAndFree() {
  auto* block = static_cast<char*>(std::malloc(kBlock));
  QVERIFY(block);
  std::memset(block, 1, kBlock);
  asm volatile("" : : "r"(block) : "memory");  // the compiler may not drop the pass
  std::free(block);
}

}  // namespace

class AllocatorTest : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void initTestCase() {
#if defined(__SANITIZE_ADDRESS__)
    QSKIP("AddressSanitizer replaces malloc: glibc's heap policy does not apply");
#endif
    sapiens::memory::keepLargeBlocksInHeap();
  }

  void aFreedPassStaysResidentForTheNext() {
    touchAndFree();
    const long long resident = residentBytes();
    QVERIFY2(resident > static_cast<long long>(kBlock), qPrintable(QString::number(resident >> 20)));
    const long faults = minorFaults();
    touchAndFree();
    // The second pass reuses the resident pages: a few faults at most, not the 300k of 1.2 GB.
    QVERIFY2(minorFaults() - faults < 1000, qPrintable(QString::number(minorFaults() - faults)));
  }

  void idleReleaseGivesItBack() {
    touchAndFree();
    const long long released = sapiens::memory::releaseFreeMemory();
    QVERIFY2(released > static_cast<long long>(kBlock) * 9 / 10, qPrintable(QString::number(released >> 20)));
    QVERIFY(residentBytes() < static_cast<long long>(kBlock) / 2);
  }
};

QTEST_APPLESS_MAIN(AllocatorTest)
#include "test_allocator.moc"
