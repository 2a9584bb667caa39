//! The Phobos CPU backend: the tile IR compiled by Cranelift to native code,
//! blocks run on every core, with exactly the interpreter's bits.
//!
//! ```
//! use phobos_core::Program;
//! use phobos_core::launch::Arg;
//! use phobos_core::tensor::Tensor;
//! use phobos_core::types::{Scalar, Value};
//!
//! let src = "@autotune(R in [4])
//! kernel twice(X: tensor<f32>[N], Y: tensor<f32>[N]) {
//!   let r = ctx.block.x * R
//!   Y[r :+ R] = X[r :+ R] * 2.0
//! }";
//! let (program, _) = Program::parse("twice.ph", src);
//! let kernel = program.kernel("twice", &[]).unwrap();
//! let x = Tensor::from_fn(Scalar::F32, &[10], |i| Value::F32(i as f32));
//! let mut args = vec![Arg::Tensor(x), Arg::Tensor(Tensor::zeros(Scalar::F32, &[10]))];
//! let run = phobos_cpu::run(&kernel, &mut args, None).unwrap();
//! assert_eq!(run.bound.grid, [3, 1, 1]);
//! let Arg::Tensor(y) = &args[1] else { unreachable!() };
//! assert_eq!(y.get(9), Value::F32(18.0));
//! ```

mod codegen;
mod compile;
mod dot;
mod exec;
mod half;
mod layout;
mod ops;
mod parallel;
mod reduce;
mod simd;
mod tandem;

pub use compile::{CompileError, Compiled, compile};
pub use exec::{RunError, RunInfo, run, run_blocks};
