//! The Tandem stream in naga expressions (SPEC.md sections 2 and 3): the
//! quarter round, the step with its Weyl word and feed-forward, chunk
//! seeding with the warm-up, key derivation (`split(i)` of a miss, on the
//! device) and continuation sequences.

use super::builder::{Fb, H};

/// Golden-ratio Weyl constant of the stream (SPEC.md 3.1).
const WEYL_STREAM: u32 = 0x9E37_79B9;
/// Weyl constant of the key derivation (SPEC.md 2.1).
const WEYL_DERIVE: u32 = 0xBB67_AE85;
/// Warm-up steps after seeding a chunk (SPEC.md 3.2).
pub(super) const WARM_UP_STEPS: u32 = 8;
/// Rounds of a key derivation.
const DERIVE_ROUNDS: u32 = 12;
/// The domain word of `split` ("splt").
const DOMAIN_SPLIT: u32 = u32::from_le_bytes(*b"splt");

impl Fb {
    /// ChaCha's quarter round on values; returns the new values.
    pub(super) fn quarter_round(&mut self, s: [H; 4]) -> [H; 4] {
        let [mut a, mut b, mut c, mut d] = s;
        a = self.add(a, b);
        let x = self.xor(d, a);
        d = self.rotl(x, 16);
        c = self.add(c, d);
        let x = self.xor(b, c);
        b = self.rotl(x, 12);
        a = self.add(a, b);
        let x = self.xor(d, a);
        d = self.rotl(x, 8);
        c = self.add(c, d);
        let x = self.xor(b, c);
        b = self.rotl(x, 7);
        [a, b, c, d]
    }

    /// Step `t` on the state variables: `y = s + (t * W, 0, 0, 0)`,
    /// `s = P(y)`; returns the output `P(y) + y` when `output`.
    pub(super) fn step(&mut self, vars: [H; 4], t: H, output: bool) -> Option<[H; 4]> {
        let w = self.c(WEYL_STREAM);
        let weyl = self.mul(t, w);
        let s0 = self.load(vars[0]);
        let y0 = self.add(s0, weyl);
        let y = [
            y0,
            self.load(vars[1]),
            self.load(vars[2]),
            self.load(vars[3]),
        ];
        let p = self.quarter_round(y);
        let p = self.quarter_round(p);
        for q in 0..4 {
            self.store(vars[q], p[q]);
        }
        output.then(|| {
            [
                self.add(p[0], y[0]),
                self.add(p[1], y[1]),
                self.add(p[2], y[2]),
                self.add(p[3], y[3]),
            ]
        })
    }

    /// State variables seeded with `seed` and warmed up by steps 1..=8
    /// (unrolled, outputs discarded).
    pub(super) fn seeded(&mut self, seed: [H; 4]) -> [H; 4] {
        let vars = [
            self.var_init("s0", seed[0]),
            self.var_init("s1", seed[1]),
            self.var_init("s2", seed[2]),
            self.var_init("s3", seed[3]),
        ];
        for t in 1..=WARM_UP_STEPS {
            let t = self.c(t);
            self.step(vars, t, false);
        }
        vars
    }

    /// `key.split(i)` for the 64-bit `i = (lo, hi)`: twelve derivation
    /// rounds of `key ^ (lo, hi, DOMAIN_SPLIT, 0)`, plus the key.
    pub(super) fn split(&mut self, key: [H; 4], i: (H, H)) -> [H; 4] {
        let s0 = self.xor(key[0], i.0);
        let s1 = self.xor(key[1], i.1);
        let s2 = self.xor_c(key[2], DOMAIN_SPLIT);
        let mut s = [s0, s1, s2, key[3]];
        for t in 1..=DERIVE_ROUNDS {
            let w = self.c(t.wrapping_mul(WEYL_DERIVE));
            s[0] = self.add(s[0], w);
            s = self.quarter_round(s);
            s = self.quarter_round(s);
        }
        [
            self.add(s[0], key[0]),
            self.add(s[1], key[1]),
            self.add(s[2], key[2]),
            self.add(s[3], key[3]),
        ]
    }

    /// Reads the continuation sequence of `key` (SPEC.md 3.5: chunk 0 with
    /// `K` tag 0, unbounded) one block at a time: `visit` gets each block's
    /// words and a `done` variable to set to 1, and the loop ends after the
    /// block in which it was set.
    pub(super) fn continuation(&mut self, key: [H; 4], visit: impl FnOnce(&mut Fb, [H; 4], H)) {
        let vars = self.seeded(key);
        let zero = self.c(0);
        let done = self.var_init("done", zero);
        let first = self.c(WARM_UP_STEPS + 1);
        let t = self.var_init("t", first);
        self.loop_(|b| {
            let tv = b.load(t);
            let o = b.step(vars, tv, true).expect("an output step");
            let t1 = b.add_c(tv, 1);
            b.store(t, t1);
            visit(b, o, done);
            let d = b.load(done);
            let zero = b.c(0);
            let stop = b.ne(d, zero);
            b.if_(stop, |b| b.brk());
        });
    }
}
