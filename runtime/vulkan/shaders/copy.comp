// \file Copies words between two device addresses: 16-byte words (uvec4) when built with -DVEC4,
// else 4-byte words. A grid-stride loop, so any size runs in a bounded number of workgroups.
#version 460
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require

#ifdef VEC4
#define WORD uvec4
#define ALIGN 16
#else
#define WORD uint
#define ALIGN 4
#endif

layout(local_size_x = 256) in;

layout(buffer_reference, std430, buffer_reference_align = ALIGN) readonly buffer Src {
  WORD w[];
};
layout(buffer_reference, std430, buffer_reference_align = ALIGN) writeonly buffer Dst {
  WORD w[];
};

layout(push_constant, std430) uniform Params {
  uvec2 src;  // device addresses, aligned to the word size
  uvec2 dst;
  uint count;  // words to copy
} p;

void main() {
  Src s = Src(p.src);
  Dst d = Dst(p.dst);
  uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < p.count; i += stride) d.w[i] = s.w[i];
}
