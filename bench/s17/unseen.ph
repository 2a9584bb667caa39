// Spellings of softmax + dropout and layer norm + dropout that the
// seventeenth session wrote without tuning the compiler for them (issue
// 28's "spellings you have not seen"), measured beside tests/spellings/.
// s1, s2, s5 and l1 compute the bits of tests/spellings' `div_*` (and
// layer norm's division spelling); s4 mutates a `var` in place; c1 is a
// user's chunked loop over N / 256 chunks.

// Every step a `let`, the division last.
@autotune(R in [1, 2, 4])
kernel s1(X: tensor<f32>[M, N], Y: tensor<f32>[M, N], seed: i32) {
  let r = ctx.block.x * R
  let x = X[r :+ R, :]
  let m = max(x, axis = 1)
  let e = exp(x - m)
  let s = sum(e, axis = 1)
  let y = e / s
  Y[r :+ R, :] = dropout(y, 0.1, seed, (r + iota(0)) * N + iota(1))
}

// `var` tiles, never assigned again.
@autotune(R in [1, 2, 4])
kernel s2(X: tensor<f32>[M, N], Y: tensor<f32>[M, N], seed: i32) {
  let r = ctx.block.x * R
  var x: tile<f32>[R, N] = X[r :+ R, :]
  var e: tile<f32>[R, N] = exp(x - max(x, axis = 1))
  Y[r :+ R, :] = dropout(e / sum(e, axis = 1), 0.1, seed, (r + iota(0)) * N + iota(1))
}

// A shadowing `let`.
@autotune(R in [1, 2, 4])
kernel s5(X: tensor<f32>[M, N], Y: tensor<f32>[M, N], seed: i32) {
  let r = ctx.block.x * R
  let e = exp(X[r :+ R, :] - max(X[r :+ R, :], axis = 1))
  let e = e / sum(e, axis = 1)
  Y[r :+ R, :] = dropout(e, 0.1, seed, (r + iota(0)) * N + iota(1))
}

// A `var` divided in place.
@autotune(R in [1, 2, 4])
kernel s4(X: tensor<f32>[M, N], Y: tensor<f32>[M, N], seed: i32) {
  let r = ctx.block.x * R
  var e: tile<f32>[R, N] = exp(X[r :+ R, :] - max(X[r :+ R, :], axis = 1))
  let s = sum(e, axis = 1)
  e = e / s
  Y[r :+ R, :] = dropout(e, 0.1, seed, (r + iota(0)) * N + iota(1))
}

// A user's chunked loops (N a multiple of 256).
@autotune(R in [1, 2, 4])
kernel c1(X: tensor<f32>[M, N], Y: tensor<f32>[M, N], seed: i32) {
  let r = ctx.block.x * R
  var m: tile<f32>[R, 1] = -_inf()
  for j in 0 .. N / 256 {
    m = max(m, max(X[r :+ R, j * 256 :+ 256], axis = 1))
  }
  var s: tile<f32>[R, 1] = 0.0
  for j in 0 .. N / 256 {
    let e = exp(X[r :+ R, j * 256 :+ 256] - m)
    s = s + sum(e, axis = 1)
  }
  for j in 0 .. N / 256 {
    let c = j * 256
    Y[r :+ R, c :+ 256] = dropout(exp(X[r :+ R, c :+ 256] - m) / s, 0.1, seed, (r + iota(0)) * N + c + iota(1))
  }
}

// Layer norm divided by the standard deviation.
@autotune(R in [1, 2, 4])
kernel l1(X: tensor<f32>[M, N], G: tensor<f32>[N], B: tensor<f32>[N], Y: tensor<f32>[M, N], seed: i32) {
  let r = ctx.block.x * R
  let x = X[r :+ R, :]
  let mean = sum(x, axis = 1) / f32(N)
  let xc = x - mean
  let v = sum(xc * xc, axis = 1) / f32(N)
  let y = xc / sqrt(v + 1e-5) * G[:] + B[:]
  Y[r :+ R, :] = dropout(y, 0.1, seed, (r + iota(0)) * N + iota(1))
}
