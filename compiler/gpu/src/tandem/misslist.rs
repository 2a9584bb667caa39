//! `normal_f64`'s miss list written once per workgroup: the fill kernel
//! keeps each invocation's misses in a small local buffer while it steps
//! its chunk, then the workgroup counts them in workgroup memory, reserves
//! their slots with one atomic on the piece's counter, and each invocation
//! writes its entries there.
//!
//! One atomic per miss on one address (0.43 % of the draws: 1.15 million
//! for 2^28 elements) serialises in the device's L2; one per workgroup
//! (256 invocations, about 70 misses) does not. A miss beyond the local
//! buffer takes the global atomic at once, and an entry beyond the list's
//! capacity is resolved in place, so no bit depends on either size.

use super::builder::{Fb, H};
use super::{Globals, P, counter, list_word, out_f64, ty, ziggurat};
use naga::{
    AddressSpace, ArraySize, Expression, GlobalVariable, Handle, Module, Scalar as NScalar, Span,
    Statement, TypeInner,
};

/// Misses an invocation keeps before the workgroup lists them: at 0.43 %
/// of 64 draws a chunk (K = 32) an invocation has 0.27 on average, and
/// more than 4 in about one of 100,000.
const PENDING: u32 = 4;

/// The buffers of a kernel: the invocation's pending entries and count
/// (function variables) and the workgroup's count and base.
#[derive(Clone, Copy)]
pub(super) struct MissList {
    entries: H,
    count: H,
    wg_count: Handle<GlobalVariable>,
    wg_base: Handle<GlobalVariable>,
}

fn workgroup_var(m: &mut Module, name: &str, inner: TypeInner) -> Handle<GlobalVariable> {
    let ty = ty(m, inner);
    m.global_variables.append(
        GlobalVariable {
            name: Some(name.into()),
            space: AddressSpace::WorkGroup,
            binding: None,
            ty,
            init: None,
            memory_decorations: Default::default(),
        },
        Span::UNDEFINED,
    )
}

/// The workgroup's miss count (atomic) and the first slot of its entries
/// in the piece's list.
pub(super) fn declare(m: &mut Module) -> (Handle<GlobalVariable>, Handle<GlobalVariable>) {
    let wg_count = workgroup_var(m, "wg_misses", TypeInner::Atomic(NScalar::U32));
    let wg_base = workgroup_var(m, "wg_base", TypeInner::Scalar(NScalar::U32));
    (wg_count, wg_base)
}

impl MissList {
    /// The invocation's buffers, and the workgroup's count zeroed by
    /// invocation 0; a workgroup barrier must follow before any miss.
    pub(super) fn new(
        b: &mut Fb,
        m: &mut Module,
        (wg_count, wg_base): (Handle<GlobalVariable>, Handle<GlobalVariable>),
        local: H,
    ) -> MissList {
        let words = PENDING * ziggurat::LIST_WORDS;
        let array = ty(
            m,
            TypeInner::Array {
                base: b.tys.u32,
                size: ArraySize::Constant(std::num::NonZeroU32::new(words).expect("entries")),
                stride: 4,
            },
        );
        let entries = b.var_of("pending", array);
        let zero = b.c(0);
        let count = b.var_init("pending_count", zero);
        let first = b.eq(local, zero);
        b.if_(first, |b| {
            let p = b.expr(Expression::GlobalVariable(wg_count));
            let zero = b.c(0);
            b.store(p, zero);
        });
        MissList {
            entries,
            count,
            wg_count,
            wg_base,
        }
    }

    fn entry_word(self, b: &mut Fb, index: H) -> H {
        b.expr(Expression::Access {
            base: self.entries,
            index,
        })
    }

    /// Keeps the miss `(pos, draw)` for the workgroup's list; `full` runs
    /// when the buffer is full (it must list or resolve the miss itself).
    pub(super) fn keep(self, b: &mut Fb, words: [H; 3], full: impl FnOnce(&mut Fb)) {
        let n = b.load(self.count);
        let cap = b.c(PENDING);
        let room = b.lt(n, cap);
        b.if_else(
            room,
            |b| {
                let stride = b.c(ziggurat::LIST_WORDS);
                let at = b.mul(n, stride);
                for (k, w) in words.into_iter().enumerate() {
                    let index = b.add_c(at, k as u32);
                    let p = self.entry_word(b, index);
                    b.store(p, w);
                }
                let n1 = b.add_c(n, 1);
                b.store(self.count, n1);
            },
            full,
        );
    }

    /// Lists the workgroup's kept misses: a workgroup atomic gives each
    /// invocation its offset, invocation 0 reserves the workgroup's slots
    /// on the piece's counter, and each entry goes to its slot, or is
    /// resolved in place by `slow` `(draw lo, draw hi, i lo, i hi) -> f64`
    /// when the slot is past the list's capacity. Every invocation of the
    /// workgroup must run this (two workgroup barriers).
    pub(super) fn flush(self, b: &mut Fb, g: &Globals, local: H, slow: Handle<naga::Function>) {
        let n = b.load(self.count);
        let wg_count = b.expr(Expression::GlobalVariable(self.wg_count));
        let offset = b.atomic_add(wg_count, n);
        b.cur
            .push(Statement::ControlBarrier(naga::Barrier::WORK_GROUP));
        let zero = b.c(0);
        let first = b.eq(local, zero);
        b.if_(first, |b| {
            let wg_count = b.expr(Expression::GlobalVariable(self.wg_count));
            let total = b.load(wg_count);
            let c = counter(b, g);
            let base = b.atomic_add(c, total);
            let p = b.expr(Expression::GlobalVariable(self.wg_base));
            b.store(p, base);
        });
        b.cur
            .push(Statement::ControlBarrier(naga::Barrier::WORK_GROUP));
        let p = b.expr(Expression::GlobalVariable(self.wg_base));
        let base = b.load(p);
        let start = b.add(base, offset);
        let cap = g.param(b, P::CAP);
        let e = b.var_init("pending_e", zero);
        b.loop_(|b| {
            let ev = b.load(e);
            let done = b.ge(ev, n);
            b.if_(done, |b| b.brk());
            let stride = b.c(ziggurat::LIST_WORDS);
            let at = b.mul(ev, stride);
            let [pos, lo, hi] = [0, 1, 2].map(|k| {
                let index = b.add_c(at, k);
                let p = self.entry_word(b, index);
                b.load(p)
            });
            let slot = b.add(start, ev);
            let listed = b.lt(slot, cap);
            b.if_else(
                listed,
                |b| {
                    let at = b.mul(slot, stride);
                    for (k, w) in [pos, lo, hi].into_iter().enumerate() {
                        let index = b.add_c(at, k as u32);
                        let p = list_word(b, g, index);
                        b.store(p, w);
                    }
                },
                |b| {
                    let i = g.element(b, pos);
                    let r = b.call(slow, vec![lo, hi, i.0, i.1]);
                    let p = out_f64(b, g, pos);
                    b.store(p, r);
                },
            );
            let next = b.add_c(ev, 1);
            b.store(e, next);
        });
    }
}
