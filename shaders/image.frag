#version 150 core
// The image, then the overlay layers composited over it in a fixed order. A layer is off until the
// C++ side enables it; each one samples its own texture unit (set once at link time).

in vec2 vTexCoord;
out vec4 fragColor;

uniform sampler2D uImage;  // unit 0

// Comparison: layers are drawn only on fragments at or right of this framebuffer column. Blend: 0
// (everywhere); split slider: the divider's column; side by side: 0 in the layers pane and beyond the
// framebuffer in the plain image's pane.
uniform float uLayersFromX;

// Dense RGB(A) map at any resolution (surface normals, albedo): mixed by opacity x alpha.
uniform bool uColorMapEnabled;
uniform sampler2D uColorMap;  // unit 1
uniform float uColorMapOpacity;

// Class-index mask (one unsigned byte per pixel, nearest) coloured through a 256 x 1 RGBA palette;
// palette alpha 0 leaves a class undrawn (background).
uniform bool uMaskEnabled;
uniform usampler2D uMask;     // unit 2
uniform sampler2D uPalette;   // unit 3
uniform float uMaskOpacity;

void main() {
  vec3 color = texture(uImage, vTexCoord).rgb;
  bool layersHere = gl_FragCoord.x >= uLayersFromX;
  if (layersHere && uColorMapEnabled) {
    vec4 mapped = texture(uColorMap, vTexCoord);
    color = mix(color, mapped.rgb, uColorMapOpacity * mapped.a);
  }
  if (layersHere && uMaskEnabled) {
    ivec2 size = textureSize(uMask, 0);
    ivec2 texel = clamp(ivec2(vTexCoord * vec2(size)), ivec2(0), size - 1);
    uint classIndex = texelFetch(uMask, texel, 0).r;
    vec4 classColor = texelFetch(uPalette, ivec2(int(classIndex), 0), 0);
    color = mix(color, classColor.rgb, uMaskOpacity * classColor.a);
  }
  fragColor = vec4(color, 1.0);
}
