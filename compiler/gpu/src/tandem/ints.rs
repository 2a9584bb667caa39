//! Integer element maps (SPEC.md 7.4, 7.5, 7.10): bools (staged through
//! workgroup memory so that their stores coalesce), Lemire's bounded
//! integers with their out-of-line retries, and the alias table's choice.
//!
//! Lemire: `m = x * n` exactly (16-bit limbs for 32 x 32, 32-bit limbs for
//! 64 x 64), rejected exactly when its low half is below `2^w mod n`, which
//! the host computes and passes as the uniform `threshold` (so the device
//! never divides). A rejected element's position goes on the miss list;
//! the retry (a function here, run by the misses kernel, or in place when
//! the list is full) derives `sub(PURPOSE_BELOW).split(i)` from the host's
//! `sub` key and reads that continuation until a draw is accepted.

use super::builder::{Fb, H};
use super::stage::{Step, slot};
use super::{FillMap, Globals, P, store_words};
use naga::{GlobalVariable, Handle};

/// Vec4 slots per group of eight invocations in the bool stage: the
/// group's eight blocks and one of padding, so that the stage's reads are
/// free of bank conflicts (see [`store_bools`]).
pub(super) const BOOL_SLOTS: u32 = 9;

/// One step of bools, staged so that stores coalesce. A stream block
/// becomes 128 output bytes (one byte per bit), 8 `vec4<u32>`; the eight
/// invocations of a group write 8 consecutive blocks, 1 KiB. Stored
/// directly, each lane's store would touch its own 128-byte line. Instead
/// each lane puts its block in the workgroup stage, a barrier, then in store
/// `e` lane `l` writes vec4 `l` of the group's block `e`, so the group's 8
/// lanes write one whole 128-byte line per store. Vec4 `l` of a block is
/// nibbles `4 (l % 2) ..` of the block's word `l / 2`: one stage read.
///
/// Every invocation of the workgroup must run this (the barrier; `stage.rs`
/// says why one per step is enough and how stores are masked).
///
/// Bank conflicts: group `q`'s slots start at word `36 q`; in store `e`,
/// lane `(q, l)` reads word `36 q + 4 e + l / 2`, so the four groups of a
/// 32-lane warp read 16 distinct banks (lanes `2i` and `2i + 1` read the
/// same word).
pub(super) fn store_bools(
    b: &mut Fb,
    g: &Globals,
    stage: Handle<GlobalVariable>,
    o: [H; 4],
    at: Step,
) {
    let (group_slot, lane) = at.group_slot(b, BOOL_SLOTS);
    let own = b.add(group_slot, lane);
    let block = b.expr(naga::Expression::Compose {
        ty: b.tys.vec4,
        components: o.to_vec(),
    });
    let p = slot(b, stage, own);
    b.store(p, block);
    b.cur
        .push(naga::Statement::ControlBarrier(naga::Barrier::WORK_GROUP));
    // Lane l's share of every block: word l / 2, its half l % 2.
    let word = b.shr_c(lane, 1);
    let odd = b.and_c(lane, 1);
    let shift = b.shl_c(odd, 4);
    for e in 0..8 {
        let index = b.add_c(group_slot, e);
        let p = slot(b, stage, index);
        let wp = b.expr(naga::Expression::Access {
            base: p,
            index: word,
        });
        let w = b.load(wp);
        let h = b.shr(w, shift);
        let words = bool_words(b, h);
        // The group's block e: stored when skip <= rel < skip + n_blocks.
        let block = b.c(e);
        let (inside, idx) = at.output_block(b, block);
        b.if_(inside, |b| {
            let first = b.shl_c(idx, 3);
            let first = b.add(first, lane);
            store_words(b, g, FillMap::Bool, first, &words);
        });
    }
}

/// The four output words of 16 bits `h` of a block: nibble `t` becomes the
/// bytes of `(t * 0x00204081) & 0x01010101` (the four shifted copies
/// `t << 7k` do not overlap, and bit `k` of copy `k` lands on bit `8k`).
fn bool_words(b: &mut Fb, h: H) -> [H; 4] {
    [0, 1, 2, 3].map(|nib| {
        let t = if nib == 0 { h } else { b.shr_c(h, 4 * nib) };
        let t = b.and_c(t, 0xF);
        let spread = b.c(0x0020_4081);
        let t = b.mul(t, spread);
        b.and_c(t, 0x0101_0101)
    })
}

/// One Lemire attempt on a 32-bit draw: `(accepted, value)`.
pub(super) fn lemire32(b: &mut Fb, g: &Globals, x: H) -> (H, H) {
    let n = g.param(b, P::N_LO);
    let thr = g.param(b, P::THR_LO);
    let (lo, hi) = b.mul_wide(x, n);
    let ok = b.ge(lo, thr);
    (ok, hi)
}

/// One Lemire attempt on a 64-bit draw `(lo, hi)`: `(accepted, value)`.
pub(super) fn lemire64(b: &mut Fb, g: &Globals, x: (H, H)) -> (H, (H, H)) {
    let n = (g.param(b, P::N_LO), g.param(b, P::N_HI));
    let thr = (g.param(b, P::THR_LO), g.param(b, P::THR_HI));
    let p = b.mul128(x, n);
    let rejected = b.lt64((p[0], p[1]), thr);
    let ok = b.not(rejected);
    (ok, (p[2], p[3]))
}

/// The output words of a bounded value `v` (its words, low first): `low`
/// added in 32 or 64 bits.
pub(super) fn offset(b: &mut Fb, g: &Globals, map: FillMap, v: &[H]) -> Vec<H> {
    let low_lo = g.param(b, P::LOW_LO);
    let low_hi = g.param(b, P::LOW_HI);
    match map {
        FillMap::Below32 => vec![b.add(v[0], low_lo)],
        FillMap::Below32To64 => {
            let zero = b.c(0);
            let (lo, hi) = b.add64((v[0], zero), (low_lo, low_hi));
            vec![lo, hi]
        }
        FillMap::Below64 => {
            let (lo, hi) = b.add64((v[0], v[1]), (low_lo, low_hi));
            vec![lo, hi]
        }
        _ => unreachable!("offset of a map without bounds"),
    }
}

/// The body of the retry function of `map`: element `(i_lo, i_hi)`'s
/// value (its words, low first) from its continuation sequence.
pub(super) fn retry(b: &mut Fb, g: &Globals, map: FillMap, i: (H, H)) -> H {
    let sub = [
        g.param(b, P::SUB0),
        g.param(b, P::SUB0 + 1),
        g.param(b, P::SUB0 + 2),
        g.param(b, P::SUB0 + 3),
    ];
    let key = b.split(sub, i);
    let zero = b.c(0);
    let r0 = b.var_init("r0", zero);
    let r1 = b.var_init("r1", zero);
    let wide = map == FillMap::Below64;
    b.continuation(key, |b, o, done| {
        let draws: Vec<Vec<H>> = if wide {
            vec![vec![o[0], o[1]], vec![o[2], o[3]]]
        } else {
            o.iter().map(|&w| vec![w]).collect()
        };
        for d in draws {
            let (ok, v) = if wide {
                let (ok, v) = lemire64(b, g, (d[0], d[1]));
                (ok, vec![v.0, v.1])
            } else {
                let (ok, v) = lemire32(b, g, d[0]);
                (ok, vec![v])
            };
            let dv = b.load(done);
            let zero = b.c(0);
            let fresh = b.eq(dv, zero);
            let take = b.land(fresh, ok);
            b.if_(take, |b| {
                b.store(r0, v[0]);
                if wide {
                    b.store(r1, v[1]);
                }
                let one = b.c(1);
                b.store(done, one);
            });
        }
    });
    let lo = b.load(r0);
    let hi = b.load(r1);
    let vec2 = b.tys.vec2;
    b.expr(naga::Expression::Compose {
        ty: vec2,
        components: vec![lo, hi],
    })
}

/// The output words of one stream block of a bounded fill, with each
/// rejected draw put on the miss list (or retried in place when the list
/// is full). `idx` is the block's index in the output binding.
pub(super) fn below_words(
    b: &mut Fb,
    g: &Globals,
    map: FillMap,
    o: [H; 4],
    idx: H,
    retry_fn: naga::Handle<naga::Function>,
) -> Vec<H> {
    let wide = map == FillMap::Below64;
    let per_block = if wide { 2 } else { 4 };
    let mut out = Vec::new();
    for e in 0..per_block {
        let (ok, v) = if wide {
            let (ok, v) = lemire64(b, g, (o[2 * e], o[2 * e + 1]));
            (ok, vec![v.0, v.1])
        } else {
            let (ok, v) = lemire32(b, g, o[e]);
            (ok, vec![v])
        };
        let words = offset(b, g, map, &v);
        let vars: Vec<H> = words.iter().map(|&w| b.var_init("val", w)).collect();
        let rejected = b.not(ok);
        b.if_(rejected, |b| {
            // The element's position in the binding and in the stream.
            let base = b.c(per_block as u32);
            let pos = b.mul(idx, base);
            let pos = b.add_c(pos, e as u32);
            let piece = g.param(b, P::PIECE);
            let counters = b.expr(naga::Expression::GlobalVariable(g.aux.expect("counters")));
            let counter = b.expr(naga::Expression::Access {
                base: counters,
                index: piece,
            });
            let one = b.c(1);
            let slot = b.atomic_add(counter, one);
            let cap = g.param(b, P::CAP);
            let listed = b.lt(slot, cap);
            let list = g.list.expect("a miss list");
            let listed_block = b.nested(|b| {
                let l = b.expr(naga::Expression::GlobalVariable(list));
                let p = b.expr(naga::Expression::Access {
                    base: l,
                    index: slot,
                });
                b.store(p, pos);
            });
            let in_place = b.nested(|b| {
                let i = g.element(b, pos);
                let r = b.call(retry_fn, vec![i.0, i.1]);
                let v: Vec<H> = (0..if wide { 2 } else { 1 })
                    .map(|k| b.expr(naga::Expression::AccessIndex { base: r, index: k }))
                    .collect();
                let words = offset(b, g, map, &v);
                for (var, w) in vars.iter().zip(words) {
                    b.store(*var, w);
                }
            });
            b.cur.push(naga::Statement::If {
                condition: listed,
                accept: listed_block,
                reject: in_place,
            });
        });
        for var in vars {
            out.push(b.load(var));
        }
    }
    out
}

/// Choice through the alias table: per 64-bit draw `x`, `p = x * n` (96
/// bits), column `p >> 64`, kept when `p mod 2^64 < threshold`, else the
/// column's alias. Two u32 indices per block.
pub(super) fn choice_words(b: &mut Fb, g: &Globals, o: [H; 4]) -> Vec<H> {
    let n = g.param(b, P::N_LO);
    let table = g.aux.expect("the alias table");
    (0..2)
        .map(|d| {
            let (a_lo, a_hi) = b.mul_wide(o[2 * d], n);
            let (b_lo, b_hi) = b.mul_wide(o[2 * d + 1], n);
            let (w1, c) = b.add_carry(a_hi, b_lo);
            let column = b.add(b_hi, c);
            let t = b.expr(naga::Expression::GlobalVariable(table));
            let p = b.expr(naga::Expression::Access {
                base: t,
                index: column,
            });
            let entry = b.load(p);
            let [thr_lo, thr_hi, alias] =
                [0, 1, 2].map(|index| b.expr(naga::Expression::AccessIndex { base: entry, index }));
            let keep = b.lt64((a_lo, w1), (thr_lo, thr_hi));
            b.select(keep, column, alias)
        })
        .collect()
}
