//! The Phobos compiler core: syntax, checking, the tile IR and the reference
//! interpreter. It does no IO and links neither wgpu nor Cranelift, so it also
//! builds for the browser.

pub mod bounds;
pub mod diag;
pub mod figure;
pub mod ir;
pub mod precision;
pub mod sema;
pub mod span;
pub mod syntax;
pub mod types;

pub use diag::{Diagnostic, render};
pub use precision::Precision;
pub use sema::Program;
pub mod bind;
pub mod inputs;
pub mod interp;
pub mod launch;
pub mod tensor;
