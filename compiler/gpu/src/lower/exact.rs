//! Exact mode's f32 division and square root: the algorithms of
//! `crate::exact` emitted once per module as naga functions
//! (`exact_div(a, b)`, `exact_sqrt(a)`) that the entry point calls. With
//! `GpuOptions::wide_div`, division is checked in f64 (`DivCheck`: by
//! default `exact::div_recip`, where `GpuOptions::int64` allows). A divisor
//! the plan shares (`plan::divisors`) has its reciprocal computed once,
//! `exact_recip(b)`, and its quotients call `exact_div_by(a, b, r)`: that
//! f64 is the only one the entry point holds; every other f64 lives inside
//! these functions.

use super::{H, Lower};
use crate::exact::{self, BitsOps, IntOps, WideOps};
use crate::{DivCheck, LowerError};
use naga::{
    BinaryOperator as B, Block, Expression, Function, FunctionArgument, FunctionResult, Handle,
    Literal, MathFunction, Scalar as NScalar, ScalarKind, Span, Statement, Type, TypeInner,
};
use phobos_core::ir::ExprId;
use phobos_core::types::{Scalar, Value};
use std::collections::HashMap;

/// The two functions exact mode may call, created on first use.
#[derive(Default)]
pub(super) struct ExactFns {
    div: Option<Handle<Function>>,
    sqrt: Option<Handle<Function>>,
    /// `exact_recip(b) -> f64` and `exact_div_by(a, b, r) -> f32`, the two
    /// shares of `exact::div_recip`, where a statement divides by a value
    /// the same at every element ([`Lower::share_divisors`]).
    recip: Option<Handle<Function>>,
    div_by: Option<Handle<Function>>,
    /// The divisors whose reciprocal the current statement computed before
    /// its loop, by the divisor's handle: the reciprocal's handle.
    /// Cleared after each statement, whose blocks scope both.
    pub(super) recips: HashMap<H, H>,
    /// The 16-bit float conversions (`half_io.rs`), by format and kind.
    pub(super) half: HashMap<(Scalar, super::half_io::HalfFn), Handle<Function>>,
}

impl<'k> Lower<'k> {
    /// The reciprocal of each divisor under `root` that the plan shares
    /// (`plan::divisors`), computed once here, before the statement's
    /// loop: its quotients then pay only the dividend's share
    /// (`exact::div_by_recip`). Same bits.
    pub(super) fn share_divisors(
        &mut self,
        root: ExprId,
        cache: &mut HashMap<ExprId, H>,
    ) -> Result<(), LowerError> {
        if self.plan.divisors.is_empty() {
            return Ok(());
        }
        for id in self.k.reachable(root) {
            if !self.plan.divisors.iter().any(|d| d.divisor == id) {
                continue;
            }
            let zeros: Vec<H> = (0..self.k.exprs[id].shape.len())
                .map(|_| self.u32c(0))
                .collect();
            let y = self.node(id, &zeros, cache)?;
            if self.exact.recips.contains_key(&y) {
                continue;
            }
            let f = self.once(
                |e| &mut e.recip,
                |lw| {
                    lw.bits_fn("exact_recip", &[Scalar::F32], Scalar::F64, |lw, a| {
                        exact::recip(lw, a[0])
                    })
                },
            );
            let r = self.call(f, vec![y]);
            self.exact.recips.insert(y, r);
        }
        Ok(())
    }

    /// `x / y` on f32, correctly rounded.
    pub(super) fn exact_div(&mut self, x: H, y: H) -> H {
        if let Some(&r) = self.exact.recips.get(&y) {
            let f = self.once(
                |e| &mut e.div_by,
                |lw| {
                    let args = [Scalar::F32, Scalar::F32, Scalar::F64];
                    lw.bits_fn("exact_div_by", &args, Scalar::F32, |lw, a| {
                        exact::div_by_recip(lw, a[0], a[1], a[2])
                    })
                },
            );
            return self.call(f, vec![x, y, r]);
        }
        let f = self.once(
            |e| &mut e.div,
            |lw| {
                let check = lw.options.knobs.div_check;
                match (lw.options.wide_div, check, lw.options.int64) {
                    (false, ..) => {
                        lw.exact_fn("exact_div", 2, |lw, args| exact::div(lw, args[0], args[1]))
                    }
                    (true, DivCheck::Recip, true) => lw.exact_fn("exact_div", 2, |lw, args| {
                        exact::div_recip(lw, args[0], args[1])
                    }),
                    (true, DivCheck::F32, _) => lw.exact_fn("exact_div", 2, |lw, args| {
                        exact::div_split(lw, args[0], args[1])
                    }),
                    (true, DivCheck::Recip | DivCheck::F64, _) => {
                        lw.exact_fn("exact_div", 2, |lw, args| {
                            exact::div_wide(lw, args[0], args[1])
                        })
                    }
                }
            },
        );
        self.call(f, vec![x, y])
    }

    /// `sqrt(x)` on f32, correctly rounded.
    pub(super) fn exact_sqrt(&mut self, x: H) -> H {
        let f = self.once(
            |e| &mut e.sqrt,
            |lw| {
                if lw.options.wide_div {
                    lw.exact_fn("exact_sqrt", 1, |lw, args| exact::sqrt_wide(lw, args[0]))
                } else {
                    lw.exact_fn("exact_sqrt", 1, |lw, args| exact::sqrt(lw, args[0]))
                }
            },
        );
        self.call(f, vec![x])
    }

    /// The function in `slot` of [`ExactFns`], built by `build` on first
    /// use.
    fn once(
        &mut self,
        slot: fn(&mut ExactFns) -> &mut Option<Handle<Function>>,
        build: impl FnOnce(&mut Self) -> Handle<Function>,
    ) -> Handle<Function> {
        if let Some(f) = *slot(&mut self.exact) {
            return f;
        }
        let f = build(self);
        *slot(&mut self.exact) = Some(f);
        f
    }

    pub(super) fn call(&mut self, function: Handle<Function>, arguments: Vec<H>) -> H {
        // A call's result is introduced by the call statement, not emitted.
        let result = self
            .f
            .expressions
            .append(Expression::CallResult(function), Span::UNDEFINED);
        self.cur.push(Statement::Call {
            function,
            arguments,
            result: Some(result),
        });
        result
    }

    /// Builds a function of `arity` f32 arguments returning f32, whose body
    /// `body` computes the result's bits from the arguments' bits.
    fn exact_fn(
        &mut self,
        name: &str,
        arity: u32,
        body: impl FnOnce(&mut Self, &[H]) -> H,
    ) -> Handle<Function> {
        let args = [Scalar::F32; 2];
        self.bits_fn(name, &args[..arity as usize], Scalar::F32, body)
    }

    /// Builds a function of arguments of the types `args` (f32, u32 or
    /// f64) returning `ret` (the same), whose body `body` computes the
    /// result's bits from the arguments' bits (u32 values; an f64 is
    /// passed and returned as it is). It is built with this lowering's own
    /// helpers, on a swapped-in function.
    pub(super) fn bits_fn(
        &mut self,
        name: &str,
        args: &[Scalar],
        ret: Scalar,
        body: impl FnOnce(&mut Self, &[H]) -> H,
    ) -> Handle<Function> {
        let names = ["a", "b", "c"];
        let mut ty = |s: Scalar| match s {
            Scalar::F64 => self.m.types.insert(
                Type {
                    name: None,
                    inner: TypeInner::Scalar(NScalar::F64),
                },
                Span::UNDEFINED,
            ),
            s => self.types[&s],
        };
        let arg_tys: Vec<_> = args.iter().map(|s| ty(*s)).collect();
        let ret_ty = ty(ret);
        let func = Function {
            name: Some(name.into()),
            arguments: arg_tys
                .iter()
                .enumerate()
                .map(|(i, ty)| FunctionArgument {
                    name: Some(names[i].into()),
                    ty: *ty,
                    binding: None,
                })
                .collect(),
            result: Some(FunctionResult {
                ty: ret_ty,
                binding: None,
            }),
            ..Default::default()
        };
        let outer_f = std::mem::replace(&mut self.f, func);
        let outer_cur = std::mem::take(&mut self.cur);
        // Handles of the outer function mean nothing in this one.
        let outer_recips = std::mem::take(&mut self.exact.recips);
        let bits: Vec<H> = args
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let a = self.expr(Expression::FunctionArgument(i as u32));
                if *s == Scalar::F32 {
                    self.bitcast(a, ScalarKind::Uint)
                } else {
                    a
                }
            })
            .collect();
        let bits = body(self, &bits);
        let value = if ret == Scalar::F32 {
            self.bitcast(bits, ScalarKind::Float)
        } else {
            bits
        };
        self.cur.push(Statement::Return { value: Some(value) });
        let mut func = std::mem::replace(&mut self.f, outer_f);
        func.body = Block::from_vec(std::mem::replace(&mut self.cur, outer_cur));
        self.exact.recips = outer_recips;
        self.m.functions.append(func, Span::UNDEFINED)
    }
}

impl Lower<'_> {
    /// `a op b` on f32 bit patterns, as bits.
    fn f_bits(&mut self, op: B, a: H, b: H) -> H {
        let fa = self.bitcast(a, ScalarKind::Float);
        let fb = self.bitcast(b, ScalarKind::Float);
        let r = self.binary(op, fa, fb);
        self.bitcast(r, ScalarKind::Uint)
    }
}

impl IntOps for Lower<'_> {
    type V = H;
    type B = H;
    fn c(&mut self, v: u32) -> H {
        self.u32c(v)
    }
    fn add(&mut self, a: H, b: H) -> H {
        self.binary(B::Add, a, b)
    }
    fn sub(&mut self, a: H, b: H) -> H {
        self.binary(B::Subtract, a, b)
    }
    fn and(&mut self, a: H, b: H) -> H {
        self.binary(B::And, a, b)
    }
    fn or(&mut self, a: H, b: H) -> H {
        self.binary(B::InclusiveOr, a, b)
    }
    fn xor(&mut self, a: H, b: H) -> H {
        self.binary(B::ExclusiveOr, a, b)
    }
    fn shl(&mut self, a: H, n: H) -> H {
        self.binary(B::ShiftLeft, a, n)
    }
    fn shr(&mut self, a: H, n: H) -> H {
        self.binary(B::ShiftRight, a, n)
    }
    fn clz(&mut self, a: H) -> H {
        self.math(MathFunction::CountLeadingZeros, a)
    }
    fn eq(&mut self, a: H, b: H) -> H {
        self.binary(B::Equal, a, b)
    }
    fn ne(&mut self, a: H, b: H) -> H {
        self.binary(B::NotEqual, a, b)
    }
    fn lt(&mut self, a: H, b: H) -> H {
        self.binary(B::Less, a, b)
    }
    fn band(&mut self, a: H, b: H) -> H {
        self.binary(B::LogicalAnd, a, b)
    }
    fn bor(&mut self, a: H, b: H) -> H {
        self.binary(B::LogicalOr, a, b)
    }
    fn select(&mut self, c: H, yes: H, no: H) -> H {
        Lower::select(self, c, yes, no)
    }
    fn to_u32(&mut self, b: H) -> H {
        let one = self.lit(Value::U32(1));
        let zero = self.lit(Value::U32(0));
        Lower::select(self, b, one, zero)
    }
    fn mul(&mut self, a: H, b: H) -> H {
        self.binary(B::Multiply, a, b)
    }
    fn fdiv(&mut self, a: H, b: H) -> H {
        self.f_bits(B::Divide, a, b)
    }
    /// With `branch_fallback`: `var r = fast; if !ok { r = slow(); }`, then
    /// `r`, so the common path skips the slow one. Without it:
    /// `select(slow(), fast, ok)`, the slow path computed on every call: a
    /// uniform `if` (as when a scalar argument's `exact_sqrt` feeds
    /// `exact_div`) makes Mesa's lavapipe spend minutes creating the
    /// pipeline, and a select does not.
    fn unless(&mut self, ok: H, fast: H, slow: impl FnOnce(&mut Self) -> H) -> H {
        if !self.options.branch_fallback {
            let slow = slow(self);
            return Lower::select(self, ok, fast, slow);
        }
        let var = self.temp(Scalar::U32);
        self.var_store(var, fast);
        let outer = std::mem::take(&mut self.cur);
        let value = slow(self);
        self.var_store(var, value);
        let reject = Block::from_vec(std::mem::replace(&mut self.cur, outer));
        self.cur.push(Statement::If {
            condition: ok,
            accept: Block::new(),
            reject,
        });
        self.var_load(var)
    }
    /// `var s = state; var i = 0u; loop { if !(i < n) { break; }
    /// s = step(s); i += 1u; }`, then `s`.
    fn repeat<const K: usize>(
        &mut self,
        n: u32,
        state: [H; K],
        mut step: impl FnMut(&mut Self, [H; K]) -> [H; K],
    ) -> [H; K] {
        let vars = state.map(|value| {
            let pointer = self.temp(Scalar::U32);
            self.var_store(pointer, value);
            pointer
        });
        let counter = self.temp(Scalar::U32);
        let zero = self.u32c(0);
        self.var_store(counter, zero);
        let outer = std::mem::take(&mut self.cur);
        let i = self.var_load(counter);
        let n = self.u32c(n);
        let more = self.binary(B::Less, i, n);
        self.cur.push(Statement::If {
            condition: more,
            accept: Block::new(),
            reject: Block::from_vec(vec![Statement::Break]),
        });
        let loaded = vars.map(|pointer| self.var_load(pointer));
        let next = step(self, loaded);
        for (pointer, value) in vars.into_iter().zip(next) {
            self.var_store(pointer, value);
        }
        let one = self.u32c(1);
        let i1 = self.binary(B::Add, i, one);
        self.var_store(counter, i1);
        let body = Block::from_vec(std::mem::replace(&mut self.cur, outer));
        self.push_loop(body, Block::new());
        vars.map(|pointer| self.var_load(pointer))
    }
}

impl BitsOps for Lower<'_> {
    fn d_words(&mut self, d: H) -> (H, H) {
        // Registers the u64 type, which the bitcast's result has.
        self.m.types.insert(
            Type {
                name: None,
                inner: TypeInner::Scalar(NScalar::U64),
            },
            Span::UNDEFINED,
        );
        let bits = self.bitcast(d, ScalarKind::Uint);
        let c32 = self.expr(Expression::Literal(Literal::U64(32)));
        let high = self.binary(B::ShiftRight, bits, c32);
        let narrow = |lw: &mut Self, x: H| {
            lw.expr(Expression::As {
                expr: x,
                kind: ScalarKind::Uint,
                convert: Some(4),
            })
        };
        (narrow(self, high), narrow(self, bits))
    }
}

impl WideOps for Lower<'_> {
    type D = H;
    fn f_rcp(&mut self, b: H) -> H {
        let one = self.lit(Value::F32(1.0));
        let fb = self.bitcast(b, ScalarKind::Float);
        let r = self.binary(B::Divide, one, fb);
        self.bitcast(r, ScalarKind::Uint)
    }
    fn f_mul(&mut self, a: H, b: H) -> H {
        self.f_bits(B::Multiply, a, b)
    }
    fn f_rsqrt(&mut self, a: H) -> H {
        let fa = self.bitcast(a, ScalarKind::Float);
        let r = self.math(MathFunction::InverseSqrt, fa);
        self.bitcast(r, ScalarKind::Uint)
    }
    fn f_fma(&mut self, a: H, b: H, c: H) -> H {
        let fa = self.bitcast(a, ScalarKind::Float);
        let fb = self.bitcast(b, ScalarKind::Float);
        let fc = self.bitcast(c, ScalarKind::Float);
        let r = self.expr(Expression::Math {
            fun: MathFunction::Fma,
            arg: fa,
            arg1: Some(fb),
            arg2: Some(fc),
            arg3: None,
        });
        self.bitcast(r, ScalarKind::Uint)
    }
    fn f_add(&mut self, a: H, b: H) -> H {
        self.f_bits(B::Add, a, b)
    }
    fn f_sub(&mut self, a: H, b: H) -> H {
        self.f_bits(B::Subtract, a, b)
    }
    fn f_lt(&mut self, a: H, b: H) -> H {
        let fa = self.bitcast(a, ScalarKind::Float);
        let fb = self.bitcast(b, ScalarKind::Float);
        self.binary(B::Less, fa, fb)
    }
    fn widen(&mut self, a: H) -> H {
        // Registers the f64 type, which the conversion's result has.
        self.m.types.insert(
            Type {
                name: None,
                inner: TypeInner::Scalar(NScalar::F64),
            },
            Span::UNDEFINED,
        );
        let fa = self.bitcast(a, ScalarKind::Float);
        self.expr(Expression::As {
            expr: fa,
            kind: ScalarKind::Float,
            convert: Some(8),
        })
    }
    fn d_c(&mut self, v: f64) -> H {
        self.expr(Expression::Literal(Literal::F64(v)))
    }
    fn d_add(&mut self, a: H, b: H) -> H {
        self.binary(B::Add, a, b)
    }
    fn d_sub(&mut self, a: H, b: H) -> H {
        self.binary(B::Subtract, a, b)
    }
    fn d_mul(&mut self, a: H, b: H) -> H {
        self.binary(B::Multiply, a, b)
    }
    fn d_lt(&mut self, a: H, b: H) -> H {
        self.binary(B::Less, a, b)
    }
    fn d_select(&mut self, c: H, yes: H, no: H) -> H {
        Lower::select(self, c, yes, no)
    }
}
