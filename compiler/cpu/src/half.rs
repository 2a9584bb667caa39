//! 16-bit float tensors on the CPU: a load widens an element's bits to f32,
//! a store rounds an f32 to the element's bits, and `f16(x)`/`bf16(x)`
//! round in place. Each is a call to the core's conversion
//! (`phobos_core::types::{half_bits, half_value}`), so the bits are the
//! interpreter's by construction.

use crate::codegen::Gen;
use cranelift_codegen::ir::{AbiParam, InstBuilder, Signature, Value, types};
use phobos_core::ir::Builtin;
use phobos_core::types::{Scalar, half_bits, half_value};

extern "C" fn f16_bits(x: f32) -> u32 {
    u32::from(half_bits(Scalar::F16, x))
}

extern "C" fn bf16_bits(x: f32) -> u32 {
    u32::from(half_bits(Scalar::BF16, x))
}

extern "C" fn f16_value(bits: u32) -> f32 {
    half_value(Scalar::F16, bits as u16)
}

extern "C" fn bf16_value(bits: u32) -> f32 {
    half_value(Scalar::BF16, bits as u16)
}

extern "C" fn round_f16(x: f32) -> f32 {
    half_value(Scalar::F16, half_bits(Scalar::F16, x))
}

extern "C" fn round_bf16(x: f32) -> f32 {
    half_value(Scalar::BF16, half_bits(Scalar::BF16, x))
}

impl Gen<'_, '_> {
    /// A call of `f` on one argument of type `from`, returning `to`.
    fn call1(&mut self, f: *const u8, from: types::Type, to: types::Type, x: Value) -> Value {
        let mut sig = Signature::new(self.b.func.signature.call_conv);
        sig.params.push(AbiParam::new(from));
        sig.returns.push(AbiParam::new(to));
        let sig = self.b.import_signature(sig);
        let ptr = self.b.func.dfg.value_type(self.frame);
        let callee = self.b.ins().iconst(ptr, f as usize as i64);
        let call = self.b.ins().call_indirect(sig, callee, &[x]);
        self.b.inst_results(call)[0]
    }

    /// The f32 of an element of a 16-bit tensor `elem`, given as an i16.
    pub(crate) fn half_load(&mut self, elem: Scalar, bits: Value) -> Value {
        let bits = self.b.ins().uextend(types::I32, bits);
        let f = match elem {
            Scalar::F16 => f16_value as *const u8,
            _ => bf16_value as *const u8,
        };
        self.call1(f, types::I32, types::F32, bits)
    }

    /// The i16 an f32 is stored as in a 16-bit tensor `elem`.
    pub(crate) fn half_store(&mut self, elem: Scalar, x: Value) -> Value {
        let f = match elem {
            Scalar::F16 => f16_bits as *const u8,
            _ => bf16_bits as *const u8,
        };
        let bits = self.call1(f, types::F32, types::I32, x);
        self.b.ins().ireduce(types::I16, bits)
    }

    /// `_round_f16(x)` or `_round_bf16(x)`.
    pub(crate) fn round_half(&mut self, f: Builtin, x: Value) -> Value {
        let f = match f {
            Builtin::RoundF16 => round_f16 as *const u8,
            _ => round_bf16 as *const u8,
        };
        self.call1(f, types::F32, types::F32, x)
    }
}
