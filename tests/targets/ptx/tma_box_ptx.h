/// \file A hand-written PTX kernel with the TMA instruction forms the ring is to emit, shared by
/// the ptxas test (tests/targets/ptx/tma_test.cpp) and the CUDA device test
/// (tests/runtime/cuda/tma_test.cpp).
#pragma once

namespace tma_test {

/// Copies the 128 x 64 f16 box at (row0, col0) of the tensor map into shared memory by TMA and
/// the shared memory, as it lies (swizzled), to `out`.
inline constexpr const char* kTmaBoxPtx = R"(.version 8.0
.target sm_90a
.address_size 64

.visible .entry tma_box(
    .param .u64 out,
    .param .u32 row0,
    .param .u32 col0,
    .param .align 64 .b8 tmap[128]
)
{
    .reg .pred %p<4>;
    .reg .b32 %r<16>;
    .reg .b64 %rd<8>;
    .shared .align 1024 .b8 smem[16384];
    .shared .align 8 .b64 bar;

    mov.u32 %r1, %tid.x;
    setp.ne.u32 %p1, %r1, 0;
    mov.u32 %r2, bar;
    @%p1 bra SYNC;
    mbarrier.init.shared::cta.b64 [%r2], 1;
    fence.proxy.async.shared::cta;
SYNC:
    bar.sync 0;
    @%p1 bra WAIT;
    ld.param.u32 %r3, [row0];
    ld.param.u32 %r4, [col0];
    mov.u32 %r5, smem;
    mov.u64 %rd1, tmap;
    cvta.param.u64 %rd2, %rd1;
    mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r2], 16384;
    cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r5], [%rd2, {%r4, %r3}], [%r2];
WAIT:
    mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r2], 0;
    @!%p2 bra WAIT;
    ld.param.u64 %rd3, [out];
    cvta.to.global.u64 %rd3, %rd3;
    mov.u32 %r6, smem;
    mov.u32 %r7, %r1;
COPY:
    setp.ge.u32 %p3, %r7, 1024;
    @%p3 bra DONE;
    shl.b32 %r8, %r7, 4;
    add.u32 %r9, %r6, %r8;
    ld.shared.v4.u32 {%r10, %r11, %r12, %r13}, [%r9];
    cvt.u64.u32 %rd4, %r8;
    add.u64 %rd5, %rd3, %rd4;
    st.global.v4.u32 [%rd5], {%r10, %r11, %r12, %r13};
    add.u32 %r7, %r7, 128;
    bra COPY;
DONE:
    ret;
}
)";

}  // namespace tma_test
