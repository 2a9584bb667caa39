// Exact `/` on bit patterns given as inputs (bench/s21/div-bits.sh): the
// GPU's checked division against the CPU backend's.
kernel div(X: tensor<f32>[N], Z: tensor<f32>[N], Q: tensor<f32>[N]) {
  Q = X / Z
}
