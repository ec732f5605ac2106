// \file Fills 16-byte words with a pattern that repeats every `period` words (1..4), so any
// pattern of 1, 2, 4, 8, 16, 32 or 64 bytes (and others that divide 64 with 16) fills with
// full-width stores. The unaligned ends of a fill are the runtime's business.
#version 460
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require

layout(local_size_x = 256) in;

layout(buffer_reference, std430, buffer_reference_align = 16) writeonly buffer Words {
  uvec4 w[];
};

layout(push_constant, std430) uniform Params {
  uvec2 dst;          // device address, 16-byte aligned
  uint count;         // words to write
  uint period;        // words in one repetition of the pattern
  uvec4 pattern[4];
} p;

void main() {
  Words d = Words(p.dst);
  uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < p.count; i += stride) d.w[i] = p.pattern[i % p.period];
}
