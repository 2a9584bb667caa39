// C = A B for f16 matrices, the product accumulated in f32 and rounded once
// to f16 when stored. `dot` adds the K products in order, each multiply and
// add rounded on its own, so exact mode gives the same bits on every
// backend; fast mode may fuse them.
//
//   phobosc run examples/matmul.ph --dim M=256 --dim N=256 --dim K=256

// dims: M=40, N=36, K=24
// The largest blocks come first: an untuned launch takes the first
// configuration with blocks enough to fill the device (docs/language.md,
// "The launch heuristic"), which for 2048^3 is BM=64, BN=16, and the tuner
// measures the others (on the H100, 64 x 64 was fastest in both modes).
@autotune(BM in [64, 32, 16], BN in [64, 16])
kernel matmul(A: tensor<f16>[M, K], B: tensor<f16>[K, N], C: tensor<f16>[M, N]) {
  let i = ctx.block.x * BM
  let j = ctx.block.y * BN
  C[i :+ BM, j :+ BN] = dot(A[i :+ BM, :], B[:, j :+ BN])
}
