// The product of examples/matmul.ph spelled as users write it, to measure
// beside the example's one-line spelling in the same call (issue 28: speed
// that does not depend on spelling; issue 29: `dot`).
//   matmul_let:  the operands named with `let` first;
//   matmul_loop: Triton's loop over K in blocks of 32 with an f32
//                accumulator tile (K a multiple of 32). It adds the same
//                products in the same order as one `dot` over K, so its
//                exact bits are the example's.
//
//   phobosc bench bench/s15/matmul_spellings.ph --kernel matmul_loop --dim M=2048 --dim N=2048 --dim K=2048

// dims: M=40, N=36, K=64
@autotune(BM in [16, 32, 64], BN in [16, 64])
kernel matmul_let(A: tensor<f16>[M, K], B: tensor<f16>[K, N], C: tensor<f16>[M, N]) {
  let i = ctx.block.x * BM
  let j = ctx.block.y * BN
  let a = A[i :+ BM, :]
  let b = B[:, j :+ BN]
  C[i :+ BM, j :+ BN] = dot(a, b)
}

// dims: M=40, N=36, K=64
@autotune(BM in [16, 32, 64], BN in [16, 64])
kernel matmul_loop(A: tensor<f16>[M, K], B: tensor<f16>[K, N], C: tensor<f16>[M, N]) {
  let i = ctx.block.x * BM
  let j = ctx.block.y * BN
  var acc: tile<f32>[BM, BN] = 0.0
  for kb in 0 .. K / 32 {
    let k = kb * 32
    acc = dot(A[i :+ BM, k :+ 32], B[k :+ 32, j :+ BN], acc)
  }
  C[i :+ BM, j :+ BN] = acc
}
