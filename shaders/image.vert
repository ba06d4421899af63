#version 150 core
// One quad covering the image, generated from gl_VertexID (draw 4 vertices as a triangle strip, no
// vertex buffer). The C++ side places it with uImageToClip: image pixels -> clip space.

uniform mat3 uImageToClip;
uniform vec2 uImageSize;  // pixels

out vec2 vTexCoord;  // (0, 0) = top-left of the image, texture row 0 = image row 0

void main() {
  vec2 corner = vec2(float(gl_VertexID & 1), float(gl_VertexID >> 1));
  vTexCoord = corner;
  vec3 clip = uImageToClip * vec3(corner * uImageSize, 1.0);
  gl_Position = vec4(clip.xy, 0.0, 1.0);
}
