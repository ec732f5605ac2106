/// \file A desc_store stored by TMA (LoweringPlan::tma_store, CompileOptions::tma_store): the
/// block goes from registers into shared memory laid out as the tensor map's boxes (rows of the
/// box dense, 16-byte chunks swizzled as ir::tma_swizzle says; a row over 128 bytes as `copies`
/// boxes side by side: SmemTile::wgmma's layout), then one thread stores the boxes by TMA in one
/// bulk group and waits until they have read shared memory:
///
///   shared_store ...              each owner thread its registers
///   fence_async_shared            the writes visible to TMA (the async proxy)
///   barrier
///   if (tid == 0) { tma_store (one per box); tma_store_commit; tma_store_wait {pending = 0} }
///   barrier                       the buffer free again for the code after it
///
/// TMA writes only the elements inside the tensor, as desc_store does. The buffer is a
/// dedicated one (a released ring's of the dtype taken back, after the loop that read it) of
/// whole KiB, so that it starts at a 1024-byte boundary as a swizzled box must.
#include "core/ir/ops.h"
#include "core/lower/mma_operand.h"

namespace tessera::lower::detail {

using ir::DType;
using ir::OpKind;
using ir::Type;

void Lowerer::lower_tma_store(const ir::Op& op) {
  const ir::DescStoreOp st(&op);
  const ir::TensorMapParam& map = plan().tma_store(op);
  const ir::Value* v = st.value();
  const int elem = ir::dtype_bytes(map.dtype);
  const int64_t rows = v->type.shape[0], cols = v->type.shape[1];
  const int64_t per_kib = 1024 / elem;
  const int buffer = new_buffer(map.dtype, (rows * cols + per_kib - 1) / per_kib * per_kib);
  SmemTile tile;
  if (map.swizzle != 0) {
    tile = SmemTile::wgmma(buffer, 0, rows, cols, elem, map.swizzle);
  } else {  // no swizzle (rows of 16, 48, 80, 96 or 112 bytes): one box, its rows dense
    tile.buffer = buffer;
    tile.rows = rows;
    tile.cols = tile.block = cols;
    tile.vec = 16 / elem;
  }
  const Layout l = homes().layout_for(v);
  store_tile(*this, tile, /*row_dim=*/0, regs(v, l), l);
  b().create(OpKind::FenceAsyncShared, {}, {});
  barrier();
  const int64_t index = tensor_map(map);
  auto coord = [&](const ir::Value* offset) {
    ir::Value* c = scalar(offset);
    return c->type.dtype == DType::i32 ? c : emit(OpKind::Cast, {c}, Type::scalar(DType::i32));
  };
  ir::Value* row = coord(st.desc().offset(0));
  ir::Value* col = coord(st.desc().offset(1));
  ir::Value* first =
      emit(OpKind::CmpEq, {tid(), const_int(DType::i32, 0)}, Type::scalar(DType::i1));
  guarded(first, [&] {
    const int64_t box_cols = map.box[1];
    for (int c = 0; c < map.copies; ++c) {
      ir::Value* at = c == 0 ? col : add(col, const_int(DType::i32, c * box_cols));
      b().create(OpKind::TmaStore, {const_int(DType::i32, c * rows * box_cols), row, at}, {},
                 {{attr::kBuffer, int64_t{buffer}}, {attr::kMap, index}});
    }
    b().create(OpKind::TmaStoreCommit, {}, {});
    b().create(OpKind::TmaStoreWait, {}, {}, {{attr::kPending, int64_t{0}}});
  });
  barrier();
  release_buffer(buffer);
}

}  // namespace tessera::lower::detail
