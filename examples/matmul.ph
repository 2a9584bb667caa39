// C = A B for f16 matrices, the product accumulated in f32 and rounded once
// to f16 when stored. `dot` adds the K products in order, each multiply and
// add rounded on its own, so exact mode gives the same bits on every
// backend; fast mode may fuse them.
//
//   phobosc run examples/matmul.ph --dim M=256 --dim N=256 --dim K=256

// dims: M=40, N=36, K=24
@autotune(BM in [16, 32, 64], BN in [16, 64])
kernel matmul(A: tensor<f16>[M, K], B: tensor<f16>[K, N], C: tensor<f16>[M, N]) {
  let i = ctx.block.x * BM
  let j = ctx.block.y * BN
  C[i :+ BM, j :+ BN] = dot(A[i :+ BM, :], B[:, j :+ BN])
}
