// Session 9: the standard library's functions on arbitrary f32 bit patterns,
// for a bits comparison of the GPU (exact) against Cranelift.
kernel math_bits(X: tensor<f32>[N], E: tensor<f32>[N], T: tensor<f32>[N], F: tensor<f32>[N],
                 L: tensor<f32>[N], C: tensor<f32>[N], R: tensor<f32>[N]) {
  E = exp(X)
  T = tanh(X)
  F = erf(X)
  L = log(X)
  C = cos(X)
  R = rsqrt(X)
}

// `uniform`, `randn` and `dropout` of the seed's generator over counters.
kernel random_bits(X: tensor<f32>[N], U: tensor<f32>[N], G: tensor<f32>[N], D: tensor<f32>[N], seed: i32) {
  U = uniform(seed, iota(0))
  G = randn(seed, iota(0))
  D = dropout(X, 0.1, seed, iota(0))
}
