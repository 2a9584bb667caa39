//! Tandem's stream math written once against [`IntOps`] (stdlib/tandem
//! SPEC.md sections 2 and 3): the quarter round, a round with its Weyl
//! word, the step's feed-forward and the key derivation. The same code is
//! the host model in the tests below, checked against the reference crate,
//! and the emitted code of both naga builders: the fill kernels
//! (`tandem/stream.rs`) and the draws inside kernels
//! (`lower/tandem_draw/`). Constants come from the reference crate.
//!
//! The CPU's bulk generator (`phobos_tandem::Bulk`, portable and AVX2) and
//! the reference itself are the other implementations of these rounds.

use crate::exact::IntOps;
pub(crate) use phobos_tandem::core::{WARM_UP_STEPS, WEYL_DERIVE, WEYL_STREAM};
pub(crate) use phobos_tandem::{DERIVE_ROUNDS, DOMAIN_SEED, DOMAIN_SPLIT, DOMAIN_SUB};

/// `x` rotated left by `r` bits (`0 < r < 32`).
pub(crate) fn rotl<O: IntOps>(o: &mut O, x: O::V, r: u32) -> O::V {
    let (left, right) = (o.c(r), o.c(32 - r));
    let hi = o.shl(x, left);
    let lo = o.shr(x, right);
    o.or(hi, lo)
}

/// ChaCha's quarter round on the whole state.
pub(crate) fn quarter_round<O: IntOps>(
    o: &mut O,
    [mut a, mut b, mut c, mut d]: [O::V; 4],
) -> [O::V; 4] {
    for (r1, r2) in [(16, 12), (8, 7)] {
        a = o.add(a, b);
        let x = o.xor(d, a);
        d = rotl(o, x, r1);
        c = o.add(c, d);
        let x = o.xor(b, c);
        b = rotl(o, x, r2);
    }
    [a, b, c, d]
}

/// A round: `weyl` added into word 0, then two quarter rounds. Returns the
/// round's input (for the feed-forward) and the permuted state.
pub(crate) fn round<O: IntOps>(o: &mut O, s: [O::V; 4], weyl: O::V) -> ([O::V; 4], [O::V; 4]) {
    let s0 = o.add(s[0], weyl);
    let input = [s0, s[1], s[2], s[3]];
    let once = quarter_round(o, input);
    (input, quarter_round(o, once))
}

/// Word-wise wrapping sum: the step's feed-forward and the derivation's.
pub(crate) fn add4<O: IntOps>(o: &mut O, a: [O::V; 4], b: [O::V; 4]) -> [O::V; 4] {
    std::array::from_fn(|q| o.add(a[q], b[q]))
}

/// Step number `n` (1 for the first) of a chunk in state `s`: the next
/// state and the step's output block `P(y) + y`.
pub(crate) fn step<O: IntOps>(o: &mut O, s: [O::V; 4], n: O::V) -> ([O::V; 4], [O::V; 4]) {
    let w = o.c(WEYL_STREAM);
    let weyl = o.mul(n, w);
    let (input, next) = round(o, s, weyl);
    let out = add4(o, next, input);
    (next, out)
}

/// `derive(k, domain, (lo, hi))` (SPEC.md 2.1): the derivation rounds of
/// `k ^ (lo, hi, domain, 0)`, plus `k`. `Key::from_seed`, `sub` and
/// `split` are derivations with their domain tags.
pub(crate) fn derive<O: IntOps>(
    o: &mut O,
    k: [O::V; 4],
    domain: u32,
    (lo, hi): (O::V, O::V),
) -> [O::V; 4] {
    let tag = o.c(domain);
    let mut s = [o.xor(k[0], lo), o.xor(k[1], hi), o.xor(k[2], tag), k[3]];
    for t in 1..=DERIVE_ROUNDS {
        let weyl = o.c(t.wrapping_mul(WEYL_DERIVE));
        s = round(o, s, weyl).1;
    }
    add4(o, s, k)
}

/// Lanes of a subgroup that exchange stepped blocks: four groups of eight
/// chunks.
pub(crate) const SHUFFLE_LANES: u32 = 32;
/// Steps a lane takes before an exchange: one per group of its subgroup.
pub(crate) const SHUFFLE_BATCH: usize = 4;

/// A subgroup's lane exchange, for [`transpose_groups`]: the fill kernels'
/// builder and the lowering emit it, and the tests run it on host lanes.
pub(crate) trait LaneOps {
    type V: Copy;
    type B: Copy;
    /// `c ? yes : no`, lane by lane.
    fn pick(&mut self, c: Self::B, yes: Self::V, no: Self::V) -> Self::V;
    /// The value `v` of lane `lane ^ mask`.
    fn shuffle_xor(&mut self, v: Self::V, mask: u32) -> Self::V;
}

/// Transposes the 4 x 4 matrix of (group of eight lanes, slot) in a
/// subgroup of [`SHUFFLE_LANES`], with two rounds of exchanges (lane bits 3
/// and 4). On entry slot `t` of lane `l` holds the block of step `t` of
/// the batch from `l`'s own chunk (lane `l % 8` of the subgroup's group
/// `l / 8`); `up[r]` is bit `3 + r` of `l`. On return slot `s` of lane
/// `l` holds the block of step `l / 8` from lane `l % 8`'s chunk of group
/// `s`: block `8 (first step + l / 8) + l % 8` of that group, so the 32
/// lanes' slot `s` are 32 consecutive blocks, 512 contiguous bytes.
pub(crate) fn transpose_groups<O: LaneOps>(
    o: &mut O,
    slots: &mut [O::V; SHUFFLE_BATCH],
    up: [O::B; 2],
) {
    for (r, up) in up.into_iter().enumerate() {
        let d = 1usize << r;
        for a in (0..SHUFFLE_BATCH).filter(|a| a & d == 0) {
            let (x, y) = (slots[a], slots[a + d]);
            // The lane with the bit set keeps its slot without the bit and
            // sends the other; its partner the reverse.
            let out = o.pick(up, x, y);
            let got = o.shuffle_xor(out, 8 << r);
            slots[a] = o.pick(up, got, x);
            slots[a + d] = o.pick(up, y, got);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exact::Host;
    use phobos_tandem::Key;

    #[test]
    fn derivations_equal_the_reference() {
        let o = &mut Host::default();
        for seed in [0u32, 1, 7, 0xDEAD_BEEF, u32::MAX] {
            let zero = [0; 4];
            let k = derive(o, zero, DOMAIN_SEED, (seed, 0));
            let want = Key::from_seed(u64::from(seed));
            assert_eq!(k, want.words(), "from_seed({seed})");
            let sub = derive(o, k, DOMAIN_SUB, (3, 0));
            assert_eq!(sub, want.sub(3).words(), "sub");
            let i = 0x1234_5678_9ABC_DEF0u64;
            let split = derive(o, k, DOMAIN_SPLIT, (i as u32, (i >> 32) as u32));
            assert_eq!(split, want.split(i).words(), "split");
        }
    }

    #[test]
    fn steps_equal_the_reference_blocks() {
        let o = &mut Host::default();
        let key = Key::from_seed(9).words();
        for (k_tag, chunk) in [(32u32, 0u64), (32, 5), (4, 1 << 20)] {
            let mut s = [
                key[0],
                key[1] ^ k_tag,
                key[2] ^ chunk as u32,
                key[3] ^ (chunk >> 32) as u32,
            ];
            let mut n = 0;
            for _ in 0..WARM_UP_STEPS {
                n += 1;
                s = step(o, s, n).0;
            }
            for j in 0..u64::from(k_tag) {
                n += 1;
                let (next, out) = step(o, s, n);
                s = next;
                let b = chunk / 8 * 8 * u64::from(k_tag) + 8 * j + chunk % 8;
                assert_eq!(
                    out,
                    phobos_tandem::core::block_at(key, k_tag, b),
                    "K {k_tag} chunk {chunk} block {j}"
                );
            }
        }
    }

    /// Host lanes: one value per lane of a subgroup.
    struct Lanes;
    impl LaneOps for Lanes {
        type V = [u32; SHUFFLE_LANES as usize];
        type B = [bool; SHUFFLE_LANES as usize];
        fn pick(&mut self, c: Self::B, yes: Self::V, no: Self::V) -> Self::V {
            std::array::from_fn(|l| if c[l] { yes[l] } else { no[l] })
        }
        fn shuffle_xor(&mut self, v: Self::V, mask: u32) -> Self::V {
            std::array::from_fn(|l| v[l ^ mask as usize])
        }
    }

    #[test]
    fn transposition_gives_each_slot_512_contiguous_bytes() {
        // A block is named by (group, lane in its group, step): its place
        // in the groups' interleaved layout is group * 8K + 8 step + lane.
        let name = |g: usize, q: usize, t: usize| (g * 100 + q * 10 + t) as u32;
        let mut slots: [_; SHUFFLE_BATCH] =
            std::array::from_fn(|t| std::array::from_fn(|l| name(l / 8, l % 8, t)));
        let up = [3, 4].map(|b| std::array::from_fn(|l| (l >> b) & 1 == 1));
        transpose_groups(&mut Lanes, &mut slots, up);
        for (s, slot) in slots.iter().enumerate() {
            for (l, &v) in slot.iter().enumerate() {
                assert_eq!(v, name(s, l % 8, l / 8), "slot {s} lane {l}");
            }
        }
    }
}
