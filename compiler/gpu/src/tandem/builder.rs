//! The function builder of the Tandem modules: expressions appended to one
//! naga function and emitted where they are made, on u32 values with a few
//! f32 operations, local variables, nested blocks and calls. It also
//! implements `crate::exact::IntOps`, so the exact f32 division and square
//! root of `exact.rs` are emitted here without a second copy.

use crate::exact::{IntOps, WideOps};
use naga::{
    BinaryOperator, Block, Expression, Function, FunctionArgument, FunctionResult, Handle, Literal,
    LocalVariable, MathFunction, Range, ScalarKind, Span, Statement, Type,
};

pub(crate) type H = Handle<Expression>;

/// The types every Tandem module declares.
#[derive(Clone, Copy)]
pub(crate) struct Tys {
    pub u32: Handle<Type>,
    pub vec2: Handle<Type>,
    pub vec4: Handle<Type>,
    /// The result type of a subgroup vote.
    pub boolean: Handle<Type>,
    /// Whether 64-bit integers may be used (`GpuOptions::int64`).
    pub int64: bool,
    /// The f64 type, in modules that compute in f64.
    pub f64: Option<Handle<Type>>,
}

/// Appends expressions to one function, emitting each where it is made.
pub(crate) struct Fb {
    pub f: Function,
    pub cur: Vec<Statement>,
    pub tys: Tys,
    /// Whether exact division's long-division fallback is behind an `if`
    /// (see `GpuOptions::branch_fallback`).
    pub branch_fallback: bool,
}

impl Fb {
    pub fn new(tys: Tys, branch_fallback: bool) -> Fb {
        Fb {
            f: Function::default(),
            cur: Vec::new(),
            tys,
            branch_fallback,
        }
    }

    /// A helper function `name(args: u32...) -> result` whose body `body`
    /// builds from the argument expressions and returns.
    pub fn function(
        tys: Tys,
        branch_fallback: bool,
        name: &str,
        arity: u32,
        result: Handle<Type>,
        body: impl FnOnce(&mut Fb, &[H]) -> H,
    ) -> Function {
        let mut b = Fb::new(tys, branch_fallback);
        b.f.name = Some(name.into());
        b.f.arguments = (0..arity)
            .map(|i| FunctionArgument {
                name: Some(format!("a{i}")),
                ty: tys.u32,
                binding: None,
            })
            .collect();
        b.f.result = Some(FunctionResult {
            ty: result,
            binding: None,
        });
        let args: Vec<H> = (0..arity)
            .map(|i| b.expr(Expression::FunctionArgument(i)))
            .collect();
        let value = body(&mut b, &args);
        b.cur.push(Statement::Return { value: Some(value) });
        b.finish()
    }

    /// The function with its body.
    pub fn finish(self) -> Function {
        let mut f = self.f;
        f.body = Block::from_vec(self.cur);
        f
    }

    pub fn expr(&mut self, e: Expression) -> H {
        let pre = e.needs_pre_emit();
        let h = self.f.expressions.append(e, Span::UNDEFINED);
        if !pre {
            self.cur.push(Statement::Emit(Range::new_from_bounds(h, h)));
        }
        h
    }

    /// `function(arguments)`; its result is introduced by the call.
    pub fn call(&mut self, function: Handle<Function>, arguments: Vec<H>) -> H {
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

    /// `atomicAdd(pointer, value)`, returning the old value.
    pub fn atomic_add(&mut self, pointer: H, value: H) -> H {
        let result = self.f.expressions.append(
            Expression::AtomicResult {
                ty: self.tys.u32,
                comparison: false,
            },
            Span::UNDEFINED,
        );
        self.cur.push(Statement::Atomic {
            pointer,
            fun: naga::AtomicFunction::Add,
            value,
            result: Some(result),
        });
        result
    }

    pub fn c(&mut self, v: u32) -> H {
        self.expr(Expression::Literal(Literal::U32(v)))
    }
    pub fn bin(&mut self, op: BinaryOperator, a: H, b: H) -> H {
        self.expr(Expression::Binary {
            op,
            left: a,
            right: b,
        })
    }
    pub fn add(&mut self, a: H, b: H) -> H {
        self.bin(BinaryOperator::Add, a, b)
    }
    pub fn sub(&mut self, a: H, b: H) -> H {
        self.bin(BinaryOperator::Subtract, a, b)
    }
    pub fn mul(&mut self, a: H, b: H) -> H {
        self.bin(BinaryOperator::Multiply, a, b)
    }
    pub fn xor(&mut self, a: H, b: H) -> H {
        self.bin(BinaryOperator::ExclusiveOr, a, b)
    }
    pub fn and(&mut self, a: H, b: H) -> H {
        self.bin(BinaryOperator::And, a, b)
    }
    pub fn or(&mut self, a: H, b: H) -> H {
        self.bin(BinaryOperator::InclusiveOr, a, b)
    }
    pub fn shl(&mut self, a: H, b: H) -> H {
        self.bin(BinaryOperator::ShiftLeft, a, b)
    }
    pub fn shr(&mut self, a: H, b: H) -> H {
        self.bin(BinaryOperator::ShiftRight, a, b)
    }
    pub fn add_c(&mut self, a: H, v: u32) -> H {
        let v = self.c(v);
        self.add(a, v)
    }
    pub fn shl_c(&mut self, a: H, n: u32) -> H {
        let n = self.c(n);
        self.shl(a, n)
    }
    pub fn shr_c(&mut self, a: H, n: u32) -> H {
        let n = self.c(n);
        self.shr(a, n)
    }
    pub fn and_c(&mut self, a: H, m: u32) -> H {
        let m = self.c(m);
        self.and(a, m)
    }
    pub fn xor_c(&mut self, a: H, m: u32) -> H {
        let m = self.c(m);
        self.xor(a, m)
    }
    pub fn lt(&mut self, a: H, b: H) -> H {
        self.bin(BinaryOperator::Less, a, b)
    }
    pub fn ge(&mut self, a: H, b: H) -> H {
        self.bin(BinaryOperator::GreaterEqual, a, b)
    }
    pub fn eq(&mut self, a: H, b: H) -> H {
        self.bin(BinaryOperator::Equal, a, b)
    }
    pub fn ne(&mut self, a: H, b: H) -> H {
        self.bin(BinaryOperator::NotEqual, a, b)
    }
    pub fn land(&mut self, a: H, b: H) -> H {
        self.bin(BinaryOperator::LogicalAnd, a, b)
    }
    pub fn lor(&mut self, a: H, b: H) -> H {
        self.bin(BinaryOperator::LogicalOr, a, b)
    }
    pub fn not(&mut self, a: H) -> H {
        self.expr(Expression::Unary {
            op: naga::UnaryOperator::LogicalNot,
            expr: a,
        })
    }
    pub fn select(&mut self, c: H, yes: H, no: H) -> H {
        self.expr(Expression::Select {
            condition: c,
            accept: yes,
            reject: no,
        })
    }
    /// 1 for true, 0 for false.
    pub fn bit(&mut self, b: H) -> H {
        let one = self.c(1);
        let zero = self.c(0);
        self.select(b, one, zero)
    }
    pub fn clz(&mut self, a: H) -> H {
        self.expr(Expression::Math {
            fun: MathFunction::CountLeadingZeros,
            arg: a,
            arg1: None,
            arg2: None,
            arg3: None,
        })
    }
    /// The hardware's `fun` of the f32 with bits `x`, as bits: measurement
    /// only (`Knobs::ablate_log`), never the SPEC's bits.
    pub fn native_f32(&mut self, fun: MathFunction, x: H) -> H {
        let f = self.bitcast(x, ScalarKind::Float);
        let r = self.expr(Expression::Math {
            fun,
            arg: f,
            arg1: None,
            arg2: None,
            arg3: None,
        });
        self.bitcast(r, ScalarKind::Uint)
    }
    /// The same bits as another scalar kind.
    pub fn bitcast(&mut self, x: H, kind: ScalarKind) -> H {
        self.expr(Expression::As {
            expr: x,
            kind,
            convert: None,
        })
    }
    /// The value converted to f32 (exact for the integers used here).
    pub fn convert_f32(&mut self, x: H) -> H {
        self.expr(Expression::As {
            expr: x,
            kind: ScalarKind::Float,
            convert: Some(4),
        })
    }

    /// Float operations on f32 bit patterns held in u32 values: each is
    /// one correctly rounded IEEE operation (`NoContraction` is added by
    /// `spirv_exact`).
    pub fn fop(&mut self, op: BinaryOperator, a: H, b: H) -> H {
        let fa = self.bitcast(a, ScalarKind::Float);
        let fb = self.bitcast(b, ScalarKind::Float);
        let r = self.bin(op, fa, fb);
        self.bitcast(r, ScalarKind::Uint)
    }
    pub fn fadd(&mut self, a: H, b: H) -> H {
        self.fop(BinaryOperator::Add, a, b)
    }
    pub fn fmul(&mut self, a: H, b: H) -> H {
        self.fop(BinaryOperator::Multiply, a, b)
    }

    /// A fresh function-local u32 variable (a pointer expression).
    pub fn var(&mut self, name: &str) -> H {
        let v = self.f.local_variables.append(
            LocalVariable {
                name: Some(name.into()),
                ty: self.tys.u32,
                init: None,
            },
            Span::UNDEFINED,
        );
        self.expr(Expression::LocalVariable(v))
    }
    /// A fresh function-local variable of type `ty` (a pointer expression).
    pub fn var_of(&mut self, name: &str, ty: Handle<Type>) -> H {
        let v = self.f.local_variables.append(
            LocalVariable {
                name: Some(name.into()),
                ty,
                init: None,
            },
            Span::UNDEFINED,
        );
        self.expr(Expression::LocalVariable(v))
    }
    /// `if cond { yes } else { no }`.
    pub fn if_else(&mut self, cond: H, yes: impl FnOnce(&mut Self), no: impl FnOnce(&mut Self)) {
        let accept = self.nested(yes);
        let reject = self.nested(no);
        self.cur.push(Statement::If {
            condition: cond,
            accept,
            reject,
        });
    }
    /// A local variable holding `value` now.
    pub fn var_init(&mut self, name: &str, value: H) -> H {
        let v = self.var(name);
        self.store(v, value);
        v
    }
    pub fn load(&mut self, p: H) -> H {
        self.expr(Expression::Load { pointer: p })
    }
    pub fn store(&mut self, p: H, v: H) {
        self.cur.push(Statement::Store {
            pointer: p,
            value: v,
        });
    }
    /// Runs `build` in a fresh block and returns that block.
    pub fn nested(&mut self, build: impl FnOnce(&mut Self)) -> Block {
        let outer = std::mem::take(&mut self.cur);
        build(self);
        Block::from_vec(std::mem::replace(&mut self.cur, outer))
    }
    /// `if cond { build }`.
    pub fn if_(&mut self, cond: H, build: impl FnOnce(&mut Self)) {
        let accept = self.nested(build);
        self.cur.push(Statement::If {
            condition: cond,
            accept,
            reject: Block::new(),
        });
    }
    /// `loop { build }` (the body breaks out itself).
    pub fn loop_(&mut self, build: impl FnOnce(&mut Self)) {
        let body = self.nested(build);
        self.cur.push(Statement::Loop {
            body,
            continuing: Block::new(),
            break_if: None,
        });
    }
    pub fn brk(&mut self) {
        self.cur.push(Statement::Break);
    }

    /// `(a + b, carry)` of two u32 values, the carry 0 or 1.
    pub fn add_carry(&mut self, a: H, b: H) -> (H, H) {
        let s = self.add(a, b);
        let c = self.lt(s, a);
        let c = self.bit(c);
        (s, c)
    }

    /// 64-bit `(lo, hi) + (lo, hi)`, wrapping.
    pub fn add64(&mut self, a: (H, H), b: (H, H)) -> (H, H) {
        let (lo, c) = self.add_carry(a.0, b.0);
        let hi = self.add(a.1, b.1);
        let hi = self.add(hi, c);
        (lo, hi)
    }

    /// 64-bit unsigned `a < b` on `(lo, hi)` pairs.
    pub fn lt64(&mut self, a: (H, H), b: (H, H)) -> H {
        let hi_lt = self.lt(a.1, b.1);
        let hi_eq = self.eq(a.1, b.1);
        let lo_lt = self.lt(a.0, b.0);
        let t = self.land(hi_eq, lo_lt);
        self.lor(hi_lt, t)
    }

    /// The exact 64-bit product of two u32 values as `(lo, hi)`, from
    /// 16-bit limbs (no `mulhi` in WGSL or naga).
    pub fn mul_wide(&mut self, a: H, b: H) -> (H, H) {
        if self.tys.int64 {
            return self.mul_wide64(a, b);
        }
        let a0 = self.and_c(a, 0xFFFF);
        let a1 = self.shr_c(a, 16);
        let b0 = self.and_c(b, 0xFFFF);
        let b1 = self.shr_c(b, 16);
        let p00 = self.mul(a0, b0);
        let p01 = self.mul(a0, b1);
        let p10 = self.mul(a1, b0);
        let p11 = self.mul(a1, b1);
        // mid = (p00 >> 16) + low halves of the cross products: < 3 * 2^16.
        let m0 = self.shr_c(p00, 16);
        let m1 = self.and_c(p01, 0xFFFF);
        let m2 = self.and_c(p10, 0xFFFF);
        let mid = self.add(m0, m1);
        let mid = self.add(mid, m2);
        let lo = self.mul(a, b);
        let h1 = self.shr_c(p01, 16);
        let h2 = self.shr_c(p10, 16);
        let h3 = self.shr_c(mid, 16);
        let hi = self.add(p11, h1);
        let hi = self.add(hi, h2);
        let hi = self.add(hi, h3);
        (lo, hi)
    }

    /// [`Fb::mul_wide`] with one u64 multiply of the zero-extended words.
    fn mul_wide64(&mut self, a: H, b: H) -> (H, H) {
        let [a, b] = [a, b].map(|x| {
            self.expr(Expression::As {
                expr: x,
                kind: ScalarKind::Uint,
                convert: Some(8),
            })
        });
        let p = self.bin(BinaryOperator::Multiply, a, b);
        let c32 = self.c(32);
        let top = self.bin(BinaryOperator::ShiftRight, p, c32);
        let [lo, hi] = [p, top].map(|x| {
            self.expr(Expression::As {
                expr: x,
                kind: ScalarKind::Uint,
                convert: Some(4),
            })
        });
        (lo, hi)
    }

    /// The exact 128-bit product of two 64-bit values, as four words from
    /// the least significant, with 32-bit limbs.
    pub fn mul128(&mut self, x: (H, H), n: (H, H)) -> [H; 4] {
        let (a_lo, a_hi) = self.mul_wide(x.0, n.0);
        let (b_lo, b_hi) = self.mul_wide(x.0, n.1);
        let (c_lo, c_hi) = self.mul_wide(x.1, n.0);
        let (d_lo, d_hi) = self.mul_wide(x.1, n.1);
        // w1 = a_hi + b_lo + c_lo, carries into w2.
        let (w1, k1) = self.add_carry(a_hi, b_lo);
        let (w1, k2) = self.add_carry(w1, c_lo);
        let c1 = self.add(k1, k2);
        // w2 = b_hi + c_hi + d_lo + c1, carries into w3.
        let (w2, k3) = self.add_carry(b_hi, c_hi);
        let (w2, k4) = self.add_carry(w2, d_lo);
        let (w2, k5) = self.add_carry(w2, c1);
        let c2 = self.add(k3, k4);
        let c2 = self.add(c2, k5);
        let w3 = self.add(d_hi, c2);
        [a_lo, w1, w2, w3]
    }
}

impl IntOps for Fb {
    type V = H;
    type B = H;
    fn c(&mut self, v: u32) -> H {
        Fb::c(self, v)
    }
    fn add(&mut self, a: H, b: H) -> H {
        Fb::add(self, a, b)
    }
    fn sub(&mut self, a: H, b: H) -> H {
        Fb::sub(self, a, b)
    }
    fn and(&mut self, a: H, b: H) -> H {
        Fb::and(self, a, b)
    }
    fn or(&mut self, a: H, b: H) -> H {
        Fb::or(self, a, b)
    }
    fn xor(&mut self, a: H, b: H) -> H {
        Fb::xor(self, a, b)
    }
    fn shl(&mut self, a: H, n: H) -> H {
        Fb::shl(self, a, n)
    }
    fn shr(&mut self, a: H, n: H) -> H {
        Fb::shr(self, a, n)
    }
    fn clz(&mut self, a: H) -> H {
        Fb::clz(self, a)
    }
    fn eq(&mut self, a: H, b: H) -> H {
        Fb::eq(self, a, b)
    }
    fn ne(&mut self, a: H, b: H) -> H {
        Fb::ne(self, a, b)
    }
    fn lt(&mut self, a: H, b: H) -> H {
        Fb::lt(self, a, b)
    }
    fn band(&mut self, a: H, b: H) -> H {
        self.land(a, b)
    }
    fn bor(&mut self, a: H, b: H) -> H {
        self.lor(a, b)
    }
    fn select(&mut self, c: H, yes: H, no: H) -> H {
        Fb::select(self, c, yes, no)
    }
    fn to_u32(&mut self, b: H) -> H {
        self.bit(b)
    }
    fn mul(&mut self, a: H, b: H) -> H {
        Fb::mul(self, a, b)
    }
    fn fdiv(&mut self, a: H, b: H) -> H {
        self.fop(BinaryOperator::Divide, a, b)
    }
    /// As `lower/exact.rs`: behind an `if` with `branch_fallback`, else both
    /// computed and selected.
    fn unless(&mut self, ok: H, fast: H, slow: impl FnOnce(&mut Self) -> H) -> H {
        if !self.branch_fallback {
            let slow = slow(self);
            return Fb::select(self, ok, fast, slow);
        }
        let var = self.var_init("unless", fast);
        let reject = self.nested(|b| {
            let value = slow(b);
            b.store(var, value);
        });
        self.cur.push(Statement::If {
            condition: ok,
            accept: Block::new(),
            reject,
        });
        self.load(var)
    }
    fn repeat<const K: usize>(
        &mut self,
        n: u32,
        state: [H; K],
        mut step: impl FnMut(&mut Self, [H; K]) -> [H; K],
    ) -> [H; K] {
        let vars = state.map(|value| self.var_init("rep", value));
        let zero = Fb::c(self, 0);
        let counter = self.var_init("rep_i", zero);
        self.loop_(|b| {
            let i = b.load(counter);
            let n = Fb::c(b, n);
            let done = b.ge(i, n);
            b.if_(done, |b| b.brk());
            let loaded = vars.map(|p| b.load(p));
            let next = step(b, loaded);
            for (p, v) in vars.into_iter().zip(next) {
                b.store(p, v);
            }
            let i1 = b.add_c(i, 1);
            b.store(counter, i1);
        });
        vars.map(|p| self.load(p))
    }
}

/// f64 checks of exact division and square root (`crate::exact::div_wide`,
/// `sqrt_wide`), on devices with
/// `SHADER_F64`; the module declares the f64 type (see `skeleton`).
impl WideOps for Fb {
    type D = H;
    fn f_rcp(&mut self, b: H) -> H {
        let one = Fb::c(self, 1.0f32.to_bits());
        self.fop(BinaryOperator::Divide, one, b)
    }
    fn f_mul(&mut self, a: H, b: H) -> H {
        self.fmul(a, b)
    }
    fn f_rsqrt(&mut self, a: H) -> H {
        let fa = self.bitcast(a, ScalarKind::Float);
        let r = self.expr(Expression::Math {
            fun: MathFunction::InverseSqrt,
            arg: fa,
            arg1: None,
            arg2: None,
            arg3: None,
        });
        self.bitcast(r, ScalarKind::Uint)
    }
    fn f_fma(&mut self, a: H, b: H, c: H) -> H {
        let [fa, fb, fc] = [a, b, c].map(|x| self.bitcast(x, ScalarKind::Float));
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
        self.fadd(a, b)
    }
    fn f_sub(&mut self, a: H, b: H) -> H {
        self.fop(BinaryOperator::Subtract, a, b)
    }
    fn f_lt(&mut self, a: H, b: H) -> H {
        let fa = self.bitcast(a, ScalarKind::Float);
        let fb = self.bitcast(b, ScalarKind::Float);
        self.bin(BinaryOperator::Less, fa, fb)
    }
    fn widen(&mut self, a: H) -> H {
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
        Fb::add(self, a, b)
    }
    fn d_sub(&mut self, a: H, b: H) -> H {
        Fb::sub(self, a, b)
    }
    fn d_mul(&mut self, a: H, b: H) -> H {
        Fb::mul(self, a, b)
    }
    fn d_lt(&mut self, a: H, b: H) -> H {
        Fb::lt(self, a, b)
    }
    fn d_select(&mut self, c: H, yes: H, no: H) -> H {
        Fb::select(self, c, yes, no)
    }
}
