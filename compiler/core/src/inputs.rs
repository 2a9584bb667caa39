//! Generated inputs: what `phobosc run` and the playground pass for a tensor
//! or scalar the user did not give. Deterministic, and documented in
//! docs/language.md. (Here in the core, not the runtime, so that the
//! playground's wasm build generates the same inputs.)
//!
//! Element `i` (the row-major flat index) of a generated tensor is
//! - for floats: `1 + h(i) / 2^32`, rounded to the element type, where
//!   `h(i) = (i * 2654435761) mod 2^32` (Knuth's multiplicative hash), so
//!   values lie in [1, 2) and are never 0;
//! - for integers: `i`, wrapped to the type;
//! - for bool: whether `i` is odd.
//!
//! A generated scalar is 0 (or false).

use crate::interp::ops;
use crate::tensor::{Data, Tensor};
use crate::types::{Scalar, Value};

/// The generated tensor of one element type and shape: [`element`] cast
/// to the type, written straight into the typed storage (at 2^28
/// elements, going through `Tensor::set` took several seconds more), on
/// all the host's cores ([`fill`]).
pub fn tensor(elem: Scalar, shape: &[usize]) -> Tensor {
    let n: usize = shape.iter().product();
    macro_rules! typed {
        ($variant:ident, $zero:expr) => {{
            let mut v = vec![$zero; n];
            fill(&mut v, |i| match ops::cast(element(elem, i), elem) {
                Value::$variant(x) => x,
                other => unreachable!("cast to {elem} gave {other:?}"),
            });
            Data::$variant(v)
        }};
    }
    let data = match elem {
        Scalar::Bool => typed!(Bool, false),
        Scalar::I32 => typed!(I32, 0),
        Scalar::U32 => typed!(U32, 0),
        Scalar::I64 => typed!(I64, 0),
        Scalar::U64 => typed!(U64, 0),
        Scalar::F32 => typed!(F32, 0.0),
        Scalar::F64 => typed!(F64, 0.0),
        // The f32 element rounded to the 16-bit format, as a store does.
        Scalar::F16 => {
            let mut v = vec![half::f16::ZERO; n];
            fill(&mut v, |i| {
                half::f16::from_f64(element(elem, i).as_f64() as f32 as f64)
            });
            Data::F16(v)
        }
        Scalar::BF16 => {
            let mut v = vec![half::bf16::ZERO; n];
            fill(&mut v, |i| {
                half::bf16::from_f32(element(elem, i).as_f64() as f32)
            });
            Data::BF16(v)
        }
    };
    Tensor {
        shape: shape.to_vec(),
        data,
    }
}

/// The fewest elements worth a thread of their own.
const PER_THREAD: usize = 1 << 16;

/// Sets `v[i] = f(i)` for every `i`, split in contiguous ranges over the
/// host's cores (one thread where `available_parallelism` knows of no
/// others, as on wasm, or for small tensors). Each element depends only
/// on its index, so the result is the same on any number of threads.
fn fill<T: Send>(v: &mut [T], f: impl Fn(usize) -> T + Sync) {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(v.len() / PER_THREAD)
        .max(1);
    let chunk = v.len().div_ceil(threads).max(1);
    let fill_from = |start: usize, part: &mut [T]| {
        for (j, x) in part.iter_mut().enumerate() {
            *x = f(start + j);
        }
    };
    if threads == 1 {
        return fill_from(0, v);
    }
    std::thread::scope(|s| {
        for (k, part) in v.chunks_mut(chunk).enumerate() {
            let fill_from = &fill_from;
            s.spawn(move || fill_from(k * chunk, part));
        }
    });
}

fn element(elem: Scalar, i: usize) -> Value {
    match elem {
        Scalar::F32 | Scalar::F64 | Scalar::F16 | Scalar::BF16 => {
            let h = (i as u64).wrapping_mul(2_654_435_761) & 0xFFFF_FFFF;
            Value::F64(1.0 + h as f64 / 4_294_967_296.0)
        }
        Scalar::Bool => Value::Bool(i % 2 == 1),
        _ => Value::U64(i as u64),
    }
}

/// [`tensor`] as a Phobos kernel, for a backend that generates a tensor
/// where it lives (the GPU, rather than uploading gigabytes): its one
/// parameter `X: tensor<T>[N]` receives element `i` of `tensor(elem, [N])`
/// at flat index `i`, the same bits (the tests below run it and compare).
/// For `f32`, `1 + h / 2^32` rounded to nearest-even is computed on its
/// bits: `0x3F80_0000 + (h >> 9)`, plus one when the 9 bits dropped are
/// over half, or exactly half and the kept bits odd, which is the carry
/// out of `(h & 511) + 255 + ((h >> 9) & 1)` (a carry into the exponent
/// gives 2.0, as rounding does). One expression without `var` tiles,
/// which cost workgroup memory and barriers (on lavapipe 40x slower).
/// `None` for the types it does not cover (bool and the 64-bit ones);
/// those are generated on the host. Blocks of 1024 elements; a tensor of
/// up to 2^31 elements.
pub fn kernel_source(elem: Scalar) -> Option<String> {
    let h = "(u32(b + iota(0)) * 2654435761)";
    let value = match elem {
        Scalar::F32 => format!(
            "bitcast<f32>(1065353216 + ({h} >> 9) + ((({h} & 511) + 255 + (({h} >> 9) & 1)) >> 9))"
        ),
        Scalar::I32 => "b + iota(0)".to_string(),
        Scalar::U32 => "u32(b + iota(0))".to_string(),
        _ => return None,
    };
    Some(format!(
        "kernel {GENERATOR}(X: tensor<{elem}>[N]) {{
  let b = ctx.block.x * 1024
  X[b :+ 1024] = {value}
}}
"
    ))
}

/// The name of [`kernel_source`]'s kernel.
pub const GENERATOR: &str = "generated_input";

/// The generated scalar of one type.
pub fn scalar(ty: Scalar) -> Value {
    ops::cast(Value::I32(0), ty)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_tensors_hold_each_element_cast_to_the_type() {
        for elem in [
            Scalar::Bool,
            Scalar::I32,
            Scalar::U32,
            Scalar::I64,
            Scalar::U64,
            Scalar::F32,
            Scalar::F64,
        ] {
            // Small enough for one thread, and large enough for several.
            for shape in [[3, 1000], [5, 3 * PER_THREAD + 7]] {
                let t = tensor(elem, &shape);
                let want = Tensor::from_fn(elem, &shape, |i| element(elem, i));
                assert!(t.bits_eq(&want), "{elem} {shape:?}");
            }
        }
        assert_eq!(tensor(Scalar::F32, &[0, 4]).len(), 0);
    }

    /// The kernel's bits are `tensor`'s, on the interpreter (the backends
    /// keep its bits; the runtime's tests run it on the GPU), over a last
    /// block that is partial and, for f32, ties that round both ways: h's
    /// low 9 bits are 256 for some i in any run of 512.
    #[test]
    fn the_generator_kernel_gives_the_generated_tensor() {
        for elem in [Scalar::F32, Scalar::I32, Scalar::U32] {
            let src = kernel_source(elem).expect("covered");
            let (program, diags) = crate::Program::parse("generated.ph", &src);
            assert!(diags.is_empty(), "{elem}: {diags:?}");
            let kernel = program.kernel(GENERATOR, &[]).expect("it checks");
            let n = 3 * 1024 + 517;
            let mut args = [crate::launch::Arg::Tensor(Tensor::zeros(elem, &[n]))];
            crate::interp::run(&kernel, &mut args).expect("it runs");
            let crate::launch::Arg::Tensor(got) = &args[0] else {
                unreachable!()
            };
            assert!(got.bits_eq(&tensor(elem, &[n])), "{elem}");
        }
        for elem in [Scalar::Bool, Scalar::I64, Scalar::U64, Scalar::F64] {
            assert_eq!(kernel_source(elem), None);
        }
    }
}
