//! The Tandem stream in naga expressions (SPEC.md sections 2 and 3): the
//! quarter round, the step with its Weyl word and feed-forward, chunk
//! seeding with the warm-up, key derivation (`split(i)` of a miss, on the
//! device) and continuation sequences.

use super::builder::{Fb, H};
pub(super) use crate::tandem_ops::WARM_UP_STEPS;
use crate::tandem_ops::{self, DOMAIN_SPLIT};

impl Fb {
    /// Step `t` on the state variables (the math of
    /// [`tandem_ops::step`]); returns the output `P(y) + y` when `output`.
    pub(super) fn step(&mut self, vars: [H; 4], t: H, output: bool) -> Option<[H; 4]> {
        let s: [H; 4] = std::array::from_fn(|q| self.load(vars[q]));
        let (next, out) = tandem_ops::step(self, s, t);
        for q in 0..4 {
            self.store(vars[q], next[q]);
        }
        output.then_some(out)
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

    /// `key.split(i)` for the 64-bit `i = (lo, hi)`.
    pub(super) fn split(&mut self, key: [H; 4], i: (H, H)) -> [H; 4] {
        tandem_ops::derive(self, key, DOMAIN_SPLIT, i)
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
