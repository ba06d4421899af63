#pragma once
// Background work (inference, decoding, point clouds, exports) runs below the GUI thread in the
// scheduler: on a busy machine the GUI thread, and the renderer threads that draw for it, get the CPU
// first, so a repaint never queues behind a forward pass. Idle cores still all go to the background.

namespace sapiens::studio {

/// Lowers the calling thread's scheduling priority (Linux: nice 5, inherited by the threads it starts
/// from now on, such as OpenMP's and OpenBLAS's). Cheap when already done; a no-op elsewhere.
void runInBackgroundPriority();

}  // namespace sapiens::studio
