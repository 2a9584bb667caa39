//! 16-bit float tensors (`f16`, `bf16`): storage only, so every value is
//! an f32 and only loads, stores and `f16(x)`/`bf16(x)` meet the 16-bit
//! format. A tensor of them is bound as an array of u32 words, two
//! elements a word (element `i` in bits `16 * (i & 1)` of word `i >> 1`,
//! the little-endian layout of the host's buffer). A load takes its half
//! of the word and widens it; a store rounds and writes its half with an
//! atomic `and` and `or` on the word, since the neighbouring element may
//! be another invocation's (a written 16-bit tensor is bound as
//! `array<atomic<u32>>`, and read with atomic loads). The conversions are
//! `crate::half`'s, emitted once per module as functions.
//!
//! Not split across bindings and never read or written as `vec4`s
//! (`stmt::quad_slice` takes 32-bit elements only). The exception: an f16
//! tensor whose elements fast mode's cooperative matrices load straight
//! (`plan::dots`) is bound as `array<f16>`, read-only, and a load reads
//! its element and widens it.

use super::{H, Lower};
use crate::half;
use naga::{AtomicFunction, BinaryOperator as B, Expression, Function, Handle, Statement};
use phobos_core::ir::{Builtin, Place};
use phobos_core::types::Scalar;

/// Which conversion function.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum HalfFn {
    /// f32 -> u32: the bits, rounded.
    Encode,
    /// u32 -> f32: the value, exact.
    Decode,
    /// f32 -> f32: rounded to the format and widened back.
    Round,
}

impl Lower<'_> {
    fn half_fn(&mut self, elem: Scalar, which: HalfFn) -> Handle<Function> {
        if let Some(f) = self.exact.half.get(&(elem, which)) {
            return *f;
        }
        let name = format!(
            "{}_{elem}",
            match which {
                HalfFn::Encode => "encode",
                HalfFn::Decode => "decode",
                HalfFn::Round => "round",
            }
        );
        let f = match which {
            HalfFn::Encode => self.bits_fn(&name, &[Scalar::F32], Scalar::U32, |lw, a| {
                half::encode(lw, elem, a[0])
            }),
            HalfFn::Decode => self.bits_fn(&name, &[Scalar::U32], Scalar::F32, |lw, a| {
                half::decode(lw, elem, a[0])
            }),
            HalfFn::Round => self.bits_fn(&name, &[Scalar::F32], Scalar::F32, |lw, a| {
                let h = half::encode(lw, elem, a[0]);
                half::decode(lw, elem, h)
            }),
        };
        self.exact.half.insert((elem, which), f);
        f
    }

    /// `_round_f16(x)` or `_round_bf16(x)`.
    pub(super) fn round_half(&mut self, f: Builtin, x: H) -> H {
        let elem = match f {
            Builtin::RoundF16 => Scalar::F16,
            _ => Scalar::BF16,
        };
        let func = self.half_fn(elem, HalfFn::Round);
        self.call(func, vec![x])
    }

    /// The word holding element `flat` of the 16-bit tensor `p`, and the
    /// element's shift within it.
    fn half_word(&mut self, p: Place, flat: H) -> (H, H) {
        let Place::Param(i) = p else {
            unreachable!("only tensors hold 16-bit floats")
        };
        debug_assert!(self.splits[i].is_none(), "16-bit tensors are not split");
        let g = self.tensors[i].expect("stores and loads name tensors");
        let base = self.expr(Expression::GlobalVariable(g));
        let one = self.u32c(1);
        let word = self.binary(B::ShiftRight, flat, one);
        let ptr = self.access(base, word);
        let lane = self.binary(B::And, flat, one);
        let c4 = self.u32c(4);
        let shift = self.binary(B::ShiftLeft, lane, c4);
        (ptr, shift)
    }

    /// Element `flat` of the 16-bit tensor `p`, as f32. Fast mode widens
    /// an f16 with the hardware's `unpack2x16float` (one instruction, not
    /// `crate::half`'s twenty): the same value for every f16 but a NaN,
    /// whose payload is the driver's, and subnormals, which a driver may
    /// flush (Vulkan lets it).
    pub(super) fn half_load(&mut self, p: Place, flat: H) -> H {
        let elem = self.place_elem(p);
        if let Place::Param(i) = p
            && self.plan.native_halves.get(i) == Some(&true)
        {
            // An `array<f16>` (`plan::dots`): the element widened, as
            // `unpack2x16float` would.
            let g = self.tensors[i].expect("stores and loads name tensors");
            let ptr = self.array_ptr(g, flat);
            let h = self.var_load(ptr);
            return self.expr(Expression::As {
                expr: h,
                kind: naga::ScalarKind::Float,
                convert: Some(4),
            });
        }
        let (ptr, shift) = self.half_word(p, flat);
        let w = self.var_load(ptr);
        let w = self.binary(B::ShiftRight, w, shift);
        if self.options.precision == crate::Precision::Fast && elem == Scalar::F16 {
            let pair = self.math(naga::MathFunction::Unpack2x16float, w);
            return self.expr(Expression::AccessIndex {
                base: pair,
                index: 0,
            });
        }
        let mask = self.u32c(0xffff);
        let bits = self.binary(B::And, w, mask);
        let f = self.half_fn(elem, HalfFn::Decode);
        self.call(f, vec![bits])
    }

    /// Rounds the f32 `v` and writes it to element `flat` of the 16-bit
    /// tensor `p`, leaving the other half of its word as it is.
    pub(super) fn half_store(&mut self, p: Place, flat: H, v: H) {
        let elem = self.place_elem(p);
        let f = self.half_fn(elem, HalfFn::Encode);
        let bits = self.call(f, vec![v]);
        let (ptr, shift) = self.half_word(p, flat);
        let ones = self.u32c(0xffff);
        let mask = self.binary(B::ShiftLeft, ones, shift);
        let keep = self.expr(Expression::Unary {
            op: naga::UnaryOperator::BitwiseNot,
            expr: mask,
        });
        let put = self.binary(B::ShiftLeft, bits, shift);
        for (fun, value) in [
            (AtomicFunction::And, keep),
            (AtomicFunction::InclusiveOr, put),
        ] {
            self.cur.push(Statement::Atomic {
                pointer: ptr,
                fun,
                value,
                result: None,
            });
        }
    }
}
