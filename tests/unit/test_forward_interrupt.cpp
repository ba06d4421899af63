// A forward pass stops between the backbone's layers once its thread's interrupt flag is set (what lets
// the studio close without waiting for a long pass): at once when set before, part-way when set from
// another thread during the pass, and not at all when clear.

#include "sapiens/model/forward_interrupt.h"
#include "sapiens/model/model.h"
#include "test_support.h"

#include <ATen/ATen.h>

#include <QtTest>

#include <atomic>
#include <chrono>
#include <thread>

using namespace sapiens;

class TestForwardInterrupt : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void aSetFlagStopsThePassAndAClearOneDoesNot() {
    const Model model = Model::load(test::fixture("golden/seg/model.safetensors"), {});
    const at::Tensor input = at::rand({1, 3, 128, 96});
    std::atomic<bool> flag{false};
    setForwardInterruptFlag(&flag);
    QVERIFY(model.forward(input).get("seg_logits").defined());
    flag = true;
    QVERIFY_THROWS_EXCEPTION(ForwardInterrupted, model.forward(input));
    setForwardInterruptFlag(nullptr);
    QVERIFY(model.forward(input).get("seg_logits").defined());  // no flag: nothing to stop it
  }

  void aFlagSetFromAnotherThreadEndsALongPassEarly() {
    const Model model = Model::load(test::fixture("golden/seg/model.safetensors"), {});
    const at::Tensor input = at::rand({2, 3, 1024, 768});  // a pass of seconds here
    std::atomic<bool> flag{false};
    setForwardInterruptFlag(&flag);
    const auto start = std::chrono::steady_clock::now();
    model.forward(input);
    const double whole = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

    std::thread closer([&] {
      std::this_thread::sleep_for(std::chrono::duration<double>(whole / 4));
      flag = true;
    });
    const auto again = std::chrono::steady_clock::now();
    bool interrupted = false;
    try {
      model.forward(input);
    } catch (const ForwardInterrupted&) {
      interrupted = true;
    }
    const double part = std::chrono::duration<double>(std::chrono::steady_clock::now() - again).count();
    closer.join();
    setForwardInterruptFlag(nullptr);
    QVERIFY(interrupted);
    qInfo("whole pass %.2f s, interrupted after %.2f s", whole, part);
    QVERIFY2(part < 0.8 * whole, qPrintable(QString("%1 s of %2 s").arg(part).arg(whole)));
  }
};

QTEST_GUILESS_MAIN(TestForwardInterrupt)
#include "test_forward_interrupt.moc"
