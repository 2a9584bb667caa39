// Session 26: matmul.ph with larger tiles, and with an f32 output (no
// 16-bit store in the epilogue), to see where fast mode's product loses
// to the hand-written GEMM.

@autotune(BM in [128, 64, 32], BN in [128, 64])
kernel mm_f16(A: tensor<f16>[M, K], B: tensor<f16>[K, N], C: tensor<f16>[M, N]) {
  let i = ctx.block.x * BM
  let j = ctx.block.y * BN
  C[i :+ BM, j :+ BN] = dot(A[i :+ BM, :], B[:, j :+ BN])
}

@autotune(BM in [128, 64, 32], BN in [128, 64])
kernel mm_f32(A: tensor<f16>[M, K], B: tensor<f16>[K, N], C: tensor<f32>[M, N]) {
  let i = ctx.block.x * BM
  let j = ctx.block.y * BN
  C[i :+ BM, j :+ BN] = dot(A[i :+ BM, :], B[:, j :+ BN])
}
