// Layer norm over each row followed by dropout, fused. One block takes R
// whole rows: the mean and the mean of squared deviations are reductions
// over the row (`sum`, in the language's fixed pairwise tree), then each
// element is normalised, scaled by G, shifted by B, dropped or kept, and
// written once. The GPU computes the reductions with the whole workgroup,
// reading the row in coalesced segments (compiler/gpu/src/lower/coop_warp.rs).
// Rows of any length run; layernorm_dropout_chunked.ph shows the same with
// `for` loops over chunks of 256.
//
//   phobosc run examples/layernorm_dropout.ph --dim M=64 --dim N=1000
//
// The dropout counter is each element's flat index in the whole tensor, as
// in dropout_rows.ph, so the mask depends on neither R nor the kernel.
// tests/tests/layernorm.rs checks its output (and the chunked kernel's) against a reference
// computed in f64 (within 4 ulp of the row's largest input, scaled as the
// output is, plus 8 ulp of the result) and the mask bit for bit.

// dims: M=20, N=300
// check no element is NaN: Y == Y
// check the kept fraction is near 0.9 (elements kept): Y != 0.0
@autotune(R in [1, 2, 4])
kernel layernorm_dropout(X: tensor<f32>[M, N], G: tensor<f32>[N], B: tensor<f32>[N], Y: tensor<f32>[M, N], seed: i32) {
  let r = ctx.block.x * R
  let mean = sum(X[r :+ R, :], axis = 1) / f32(N)
  let rstd = 1.0 / sqrt(sum((X[r :+ R, :] - mean) * (X[r :+ R, :] - mean), axis = 1) / f32(N) + 0.00001)
  Y[r :+ R, :] = dropout((X[r :+ R, :] - mean) * rstd * G[:] + B[:], 0.1, seed, (r + iota(0)) * N + iota(1))
}
