//! Constant nodes computed at compile time, so that the WGSL holds no
//! constant expression that a WebGPU implementation could refuse.
//!
//! WGSL evaluates a constant expression (one built only from literals) when
//! the shader is created, and makes it a shader-creation error for the
//! result to be a NaN or an infinity, for a left shift to lose bits or flip
//! the sign, for an integer division by zero, and for `sqrt` or `log` of a
//! value outside their domain. naga does not evaluate `bitcast` and accepts
//! all of these; Tint (Chromium, Dawn) refuses the module. Phobos gives each
//! of them a meaning (`interp/ops.rs`), and the stdlib needs some of them
//! (`_nan()` is `bitcast<f32>(2143289344)`). So:
//! - an IR node whose operands are all constants is lowered as its value,
//!   computed by the core's constant folding
//!   (`ir::analysis::constant_values`) with `interp::ops`, the
//!   interpreter's own operations, so its bits are the reference's by
//!   construction;
//! - a non-finite f32 (from a constant or from folding) is written as a
//!   bitcast of a `let`-bound u32 (`builder.rs`'s `lit`): WGSL says a
//!   `let` is not a constant expression, so nothing is evaluated at shader
//!   creation, and the value keeps its exact bits at no run-time cost.
//!
//! What remains constant in the WGSL is single literals and the lowering's
//! own combinations of them (shift masks, `select`s of 1 for a divisor),
//! which are valid for every value. `tests/wgsl_valid.rs` checks every
//! example and fixture with Tint and with naga's parser.

use phobos_core::ir::{ExprId, IdVec, Kernel};
use phobos_core::types::Value;

/// The value of every node of `kernel` whose leaves are all constants (none
/// for the others): `ir::analysis::constant_values`, the core's constant
/// folding with the interpreter's operations.
pub(super) fn constants(kernel: &Kernel) -> IdVec<ExprId, Option<Value>> {
    phobos_core::ir::analysis::constant_values(kernel)
}
