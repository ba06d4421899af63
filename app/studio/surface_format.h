#pragma once
// The OpenGL set-up every GL widget of the studio relies on. Call before QApplication is created.

namespace sapiens::studio {

/// Default QSurfaceFormat: OpenGL 3.2 core, RGBA8, 24-bit depth, no stencil, no multisampling (VTK
/// draws into Qt's framebuffer object), double-buffered; and contexts shared between GL widgets.
void prepareOpenGl();

}  // namespace sapiens::studio
