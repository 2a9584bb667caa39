//! `normal_f64`: the 1024-layer ziggurat of SPEC.md 7.8 on device f64
//! values, with the table (section 7.9) computed by the host's reference
//! and uploaded as `x[0..=1024]` then `f[0..=1024]` (`array<f64>`).
//!
//! The fill kernel takes the fast path of each 64-bit draw (layer `x & 1023`,
//! sign bit 10, abscissa `frac53(x) x[L]`, kept when below `x[L+1]`) and
//! lists a miss as three words `(position, draw lo, draw hi)`: the slow path
//! re-examines the element's own draw first, so the draw is stored rather
//! than recomputed. The misses kernel (or the fill kernel itself when the
//! list is full) runs the slow path ([`slow`]) on the continuation of
//! `sub.split(i)`, `sub = key.sub(PURPOSE_NORMAL64)` from the host, as a
//! state machine fed one 64-bit continuation draw at a time: a wedge test
//! (one draw), a fresh draw after a rejected wedge, or the tail (two draws
//! per attempt, `neg_ln_u64(d) / R` correctly rounded by `f64div.rs`).
//!
//! The fast path reads a layer's edges `(x[L], x[L+1])` from workgroup
//! memory: each workgroup of the fill kernel first copies them from the
//! table into an `array<vec2<f64>, 1024>` ([`load_edges`]), so a draw's
//! edges are one 16-byte workgroup load rather than two random reads of
//! the storage buffer. The slow path, rare, reads the storage buffer.

use super::builder::{Fb, H};
use super::float64::W;
use super::{Globals, P, f64_pair_ty, f64div, workgroup_array};
use naga::{Expression, Function, GlobalVariable, Handle, Module, Type, UnaryOperator};

/// `R`, the base layer's edge (SPEC.md 7.9).
const R: f64 = f64::from_bits(0x4010_27C8_4109_FAD5);
/// Index of `f[0]` in the uploaded table.
pub const F_BASE: u32 = 1025;
/// Entries of the uploaded table.
pub const TABLE_LEN: usize = 2 * F_BASE as usize;
/// Words per miss-list entry: the position and the draw.
pub const LIST_WORDS: u32 = 3;

/// What the slow path waits for from its next continuation draw.
const WEDGE: u32 = 0;
const FRESH: u32 = 1;
const TAIL_A: u32 = 2;
const TAIL_B: u32 = 3;

/// Layers of the ziggurat: the fast path's `x & 1023`.
const LAYERS: u32 = 1024;

/// What the fill kernel's `normal_f64` blocks use.
pub(super) struct FillParts {
    /// The slow-path function `(x lo, x hi, i lo, i hi) -> f64`.
    pub slow: Handle<Function>,
    pub f64_ty: Handle<Type>,
    /// `vec2<f64>`.
    pub pair_ty: Handle<Type>,
    /// The layers' edges in workgroup memory ([`edges_global`]).
    pub edges: Handle<GlobalVariable>,
}

/// The workgroup array of the layers' edges: entry `L` is
/// `(x[L], x[L+1])`.
pub(super) fn edges_global(m: &mut Module) -> Handle<GlobalVariable> {
    let pair = f64_pair_ty(m);
    workgroup_array(m, "ziggurat_edges", pair, LAYERS, 16)
}

/// Copies the edges from the table into `z.edges` (invocation `local` of
/// a workgroup of `size` copies layers `local + size r`), then a workgroup
/// barrier: every invocation of the workgroup must run this.
pub(super) fn load_edges(b: &mut Fb, g: &Globals, z: &FillParts, local: H, size: u32) {
    assert!(LAYERS.is_multiple_of(size), "{size} invocations");
    for r in 0..LAYERS / size {
        let layer = if r == 0 {
            local
        } else {
            b.add_c(local, r * size)
        };
        let lo = table(b, g, layer);
        let next = b.add_c(layer, 1);
        let hi = table(b, g, next);
        let pair = b.expr(Expression::Compose {
            ty: z.pair_ty,
            components: vec![lo, hi],
        });
        let p = edge_pair(b, z.edges, layer);
        b.store(p, pair);
    }
    b.cur
        .push(naga::Statement::ControlBarrier(naga::Barrier::WORK_GROUP));
}

/// Entry `layer` of the workgroup's edges (a pointer).
fn edge_pair(b: &mut Fb, edges: Handle<GlobalVariable>, layer: H) -> H {
    let e = b.expr(Expression::GlobalVariable(edges));
    b.expr(Expression::Access {
        base: e,
        index: layer,
    })
}

/// Entry `index` of the uploaded table.
fn table(b: &mut Fb, g: &Globals, index: H) -> H {
    let t = b.expr(Expression::GlobalVariable(
        g.zig.expect("the ziggurat table"),
    ));
    let p = b.expr(Expression::Access { base: t, index });
    b.load(p)
}

/// `value`, negated when bit 10 of the draw's low word is set (a zero
/// abscissa gives -0.0: the negation flips only the sign).
fn signed(b: &mut Fb, x_lo: H, value: H) -> H {
    let s = b.and_c(x_lo, 1 << 10);
    let zero = b.c(0);
    let neg = b.ne(s, zero);
    let minus = b.expr(Expression::Unary {
        op: UnaryOperator::Negate,
        expr: value,
    });
    b.select(neg, minus, value)
}

/// The fast path of draw `x`: `(hit, value, layer, v)`, the value signed;
/// `edges` gives a layer's `(x[L], x[L+1])`.
fn fast_parts(b: &mut Fb, x: W, edges: impl FnOnce(&mut Fb, H) -> (H, H)) -> (H, H, H, H) {
    let layer = b.and_c(x.0, LAYERS - 1);
    let u = b.frac53(x);
    let (xl, xl1) = edges(b, layer);
    let v = b.mul(u, xl);
    let hit = b.lt(v, xl1);
    let value = signed(b, x.0, v);
    (hit, value, layer, v)
}

/// The fill kernel's element from draw `x`, with the layer's edges from
/// the workgroup's copy `edges`: `(hit, signed value)`.
pub(super) fn fast(b: &mut Fb, edges: Handle<GlobalVariable>, x: W) -> (H, H) {
    let (hit, value, _, _) = fast_parts(b, x, |b, layer| {
        let p = edge_pair(b, edges, layer);
        let pair = b.load(p);
        let [lo, hi] = [0, 1].map(|index| b.expr(Expression::AccessIndex { base: pair, index }));
        (lo, hi)
    });
    (hit, value)
}

/// The slow path's local variables.
#[derive(Clone, Copy)]
struct Vars {
    x_lo: H,
    x_hi: H,
    layer: H,
    state: H,
    fin: H,
    v: H,
    a: H,
    res: H,
}

/// Examines the draw in `x_lo`, `x_hi`: a hit finishes with `±v`, a miss
/// waits for the tail's first draw (layer 0) or a wedge draw.
fn examine(b: &mut Fb, g: &Globals, s: Vars) {
    let x = (b.load(s.x_lo), b.load(s.x_hi));
    let (hit, value, layer, v) = fast_parts(b, x, |b, layer| {
        let xl = table(b, g, layer);
        let next = b.add_c(layer, 1);
        (xl, table(b, g, next))
    });
    b.store(s.layer, layer);
    b.store(s.v, v);
    b.if_else(
        hit,
        |b| {
            b.store(s.res, value);
            let one = b.c(1);
            b.store(s.fin, one);
        },
        |b| {
            let zero = b.c(0);
            let base = b.eq(layer, zero);
            let tail = b.c(TAIL_A);
            let wedge = b.c(WEDGE);
            let st = b.select(base, tail, wedge);
            b.store(s.state, st);
        },
    );
}

/// Finishes with `value` signed by the current draw.
fn finish(b: &mut Fb, s: Vars, value: H) {
    let x_lo = b.load(s.x_lo);
    let r = signed(b, x_lo, value);
    b.store(s.res, r);
    let one = b.c(1);
    b.store(s.fin, one);
}

/// One continuation draw `d` of the slow path.
fn consume(b: &mut Fb, g: &Globals, neg_ln: Handle<Function>, s: Vars, d: W) {
    let st = b.load(s.state);
    let wedge = b.c(WEDGE);
    let is_wedge = b.eq(st, wedge);
    b.if_else(
        is_wedge,
        |b| {
            // y = f[L] + frac53(d) * (f[L+1] - f[L]); accept when below
            // density(v) = exp_neg((v * v) * 0.5).
            let layer = b.load(s.layer);
            let fi = b.add_c(layer, F_BASE);
            let fl = table(b, g, fi);
            let fi1 = b.add_c(fi, 1);
            let fl1 = table(b, g, fi1);
            let u = b.frac53(d);
            let diff = b.sub(fl1, fl);
            let ud = b.mul(u, diff);
            let y = b.add(fl, ud);
            let v = b.load(s.v);
            let vv = b.mul(v, v);
            let half = f64div::F64Ops::dc(b, 0.5);
            let h = b.mul(vv, half);
            let density = b.exp_neg_f64(h);
            let below = b.lt(y, density);
            b.if_else(
                below,
                |b| finish(b, s, v),
                |b| {
                    let fresh = b.c(FRESH);
                    b.store(s.state, fresh);
                },
            );
        },
        |b| {
            let fresh = b.c(FRESH);
            let is_fresh = b.eq(st, fresh);
            b.if_else(
                is_fresh,
                |b| {
                    b.store(s.x_lo, d.0);
                    b.store(s.x_hi, d.1);
                    examine(b, g, s);
                },
                |b| {
                    let tail_a = b.c(TAIL_A);
                    let is_a = b.eq(st, tail_a);
                    let n = b.call(neg_ln, vec![d.0, d.1]);
                    b.if_else(
                        is_a,
                        |b| {
                            // a = neg_ln_u64(d) / R, correctly rounded.
                            let r = f64div::F64Ops::dc(b, R);
                            let y = f64div::F64Ops::dc(b, 1.0 / R);
                            let a = f64div::div(b, n, r, y);
                            b.store(s.a, a);
                            let next = b.c(TAIL_B);
                            b.store(s.state, next);
                        },
                        |b| {
                            // Accept R + a when b + b > a * a.
                            let a = b.load(s.a);
                            let bb = b.add(n, n);
                            let aa = b.mul(a, a);
                            let accept = b.lt(aa, bb);
                            b.if_else(
                                accept,
                                |b| {
                                    let r = f64div::F64Ops::dc(b, R);
                                    let ra = b.add(r, a);
                                    finish(b, s, ra);
                                },
                                |b| {
                                    let next = b.c(TAIL_A);
                                    b.store(s.state, next);
                                },
                            );
                        },
                    );
                },
            );
        },
    );
}

/// The body of the slow-path function `(x lo, x hi, i lo, i hi) -> f64`:
/// element `i`'s value after its draw `x` missed (SPEC.md 7.8's loop).
pub(super) fn slow(
    b: &mut Fb,
    g: &Globals,
    f64_ty: Handle<Type>,
    neg_ln: Handle<Function>,
    x: W,
    i: W,
) -> H {
    let sub = [0, 1, 2, 3].map(|q| g.param(b, P::SUB0 + q));
    let key = b.split(sub, i);
    let zero = b.c(0);
    let dzero = f64div::F64Ops::dc(b, 0.0);
    let fvar = |b: &mut Fb, name| {
        let p = b.var_of(name, f64_ty);
        b.store(p, dzero);
        p
    };
    let s = Vars {
        x_lo: b.var_init("x_lo", x.0),
        x_hi: b.var_init("x_hi", x.1),
        layer: b.var_init("layer", zero),
        state: b.var_init("state", zero),
        fin: b.var_init("fin", zero),
        v: fvar(b, "v"),
        a: fvar(b, "a"),
        res: fvar(b, "res"),
    };
    examine(b, g, s);
    b.continuation(key, |b, o, done| {
        for d in [(o[0], o[1]), (o[2], o[3])] {
            let f = b.load(s.fin);
            let zero = b.c(0);
            let live = b.eq(f, zero);
            b.if_(live, |b| consume(b, g, neg_ln, s, d));
        }
        let f = b.load(s.fin);
        b.store(done, f);
    });
    b.load(s.res)
}
