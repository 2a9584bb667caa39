//! Attention with dropout (examples/attention_dropout.ph and
//! attention_dropout_backward.ph): the forward and both backward kernels
//! give the same bits on every backend at two tilings, match a float64
//! reference computed with the same Tandem mask (whose gradients are
//! checked against finite differences here), and the masks the forward and
//! the backward draw under their different tilings are equal element for
//! element.

use phobos_core::ir::Kernel;
use phobos_core::launch::Arg;
use phobos_core::tensor::Tensor;
use phobos_core::types::{Scalar, Value, half_bits, half_value};
use phobos_tests::{program, root, run_on_every_backend, tandem_uniforms, tensor};

/// The head dimension (a dim of the kernels) of the tests but one.
const D: usize = 64;
const SCALE: f32 = 0.125;
const P: f32 = 0.1;
const KEY: u32 = 2027;

fn kernel(file: &str, name: &str, bm: i64, bn: i64) -> Kernel {
    let text = std::fs::read_to_string(root().join("examples").join(file)).unwrap();
    let cfg = [("BM".to_string(), bm), ("BN".to_string(), bn)];
    program(file, &text)
        .kernel(name, &cfg)
        .unwrap_or_else(|d| panic!("{name}: {d:?}"))
}

/// An f16 tensor of shape [bh, s, D] with values in [-amp, amp), from a
/// fixed stream; `f` overrides element (h, i, d) where it gives a value.
fn f16s(
    shape: [usize; 3],
    salt: u64,
    amp: f32,
    f: impl Fn(usize, usize, usize) -> Option<f32>,
) -> Tensor {
    Tensor::from_fn(Scalar::F16, &shape, |n| {
        let (h, i, d) = (
            n / (shape[1] * shape[2]),
            n / shape[2] % shape[1],
            n % shape[2],
        );
        let v = f(h, i, d).unwrap_or_else(|| {
            let mut x = (n as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ salt;
            x ^= x >> 31;
            x = x.wrapping_mul(0xbf58_476d_1ce4_e5b9);
            x ^= x >> 29;
            ((x % 2048) as f32 / 1024.0 - 1.0) * amp
        });
        Value::F32(half_value(Scalar::F16, half_bits(Scalar::F16, v)))
    })
}

fn zeros(elem: Scalar, shape: &[usize]) -> Arg {
    Arg::Tensor(Tensor::zeros(elem, shape))
}

fn scalars() -> [Arg; 3] {
    [
        Arg::Scalar(Value::F32(SCALE)),
        Arg::Scalar(Value::F32(P)),
        Arg::Scalar(Value::U32(KEY)),
    ]
}

/// The forward at tiling `(bm, bn)` on every backend (the same bits
/// everywhere): O and L.
fn forward(
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
    (bm, bn): (i64, i64),
    what: &str,
) -> (Tensor, Tensor) {
    let fwd = kernel("attention_dropout.ph", "attention_dropout", bm, bn);
    let [bh, s, _] = [q.shape[0], q.shape[1], q.shape[2]];
    let mut inputs = vec![
        Arg::Tensor(q.clone()),
        Arg::Tensor(k.clone()),
        Arg::Tensor(v.clone()),
        zeros(Scalar::F16, &q.shape),
        zeros(Scalar::F32, &[bh, s, 1]),
    ];
    inputs.extend(scalars());
    let out = run_on_every_backend(&fwd, &inputs, what);
    (tensor(&out[3]).clone(), tensor(&out[4]).clone())
}

/// Whether the forward keeps element (h, i, j): Tandem's draw at its
/// coordinates' counter.
struct Mask(Vec<f32>, usize);

impl Mask {
    fn new(bh: usize, s: usize) -> Mask {
        Mask(tandem_uniforms(KEY, bh * s * s), s)
    }
    fn keep(&self, h: usize, i: usize, j: usize) -> bool {
        self.0[(h * self.1 + i) * self.1 + j] >= P
    }
}

/// Element (h, i, d) of a [bh, s, D] tensor as f64.
fn at(t: &Tensor, s: usize, h: usize, i: usize, d: usize) -> f64 {
    t.get((h * s + i) * t.shape[2] + d).as_f64()
}

/// The forward in float64: O and the log-sum-exp L.
fn forward64(
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
    mask: &Mask,
    bh: usize,
    s: usize,
) -> (Vec<f64>, Vec<f64>) {
    // The head dimension, a dim of the kernels.
    let dh = q.shape[2];
    let mut o = vec![0.0; bh * s * dh];
    let mut lse = vec![0.0; bh * s];
    for h in 0..bh {
        for i in 0..s {
            let sc: Vec<f64> = (0..s)
                .map(|j| {
                    (0..dh)
                        .map(|d| at(q, s, h, i, d) * at(k, s, h, j, d))
                        .sum::<f64>()
                        * f64::from(SCALE)
                })
                .collect();
            let m = sc.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            let l: f64 = sc.iter().map(|x| (x - m).exp()).sum();
            lse[h * s + i] = m + l.ln();
            for (j, x) in sc.iter().enumerate() {
                if mask.keep(h, i, j) {
                    let pd = (x - m).exp() / l / (1.0 - f64::from(P));
                    for d in 0..dh {
                        o[(h * s + i) * dh + d] += pd * at(v, s, h, j, d);
                    }
                }
            }
        }
    }
    (o, lse)
}

/// The loss sum(O * G) in float64, for the finite differences.
fn loss64(q: &Tensor, k: &Tensor, v: &Tensor, g: &Tensor, mask: &Mask, bh: usize, s: usize) -> f64 {
    let (o, _) = forward64(q, k, v, mask, bh, s);
    o.iter()
        .enumerate()
        .map(|(n, x)| x * g.get(n).as_f64())
        .sum()
}

/// dQ, dK, dV of sum(O * dO) in float64, from the formulas the kernels use.
fn backward64(
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
    g: &Tensor,
    mask: &Mask,
    bh: usize,
    s: usize,
) -> [Vec<f64>; 3] {
    let (o, lse) = forward64(q, k, v, mask, bh, s);
    let (mut dq, mut dk, mut dv) = (
        vec![0.0; bh * s * D],
        vec![0.0; bh * s * D],
        vec![0.0; bh * s * D],
    );
    let keep = 1.0 / (1.0 - f64::from(P));
    for h in 0..bh {
        for i in 0..s {
            let dd: f64 = (0..D)
                .map(|d| at(g, s, h, i, d) * o[(h * s + i) * D + d])
                .sum();
            for j in 0..s {
                let sc = (0..D)
                    .map(|d| at(q, s, h, i, d) * at(k, s, h, j, d))
                    .sum::<f64>()
                    * f64::from(SCALE);
                let p = (sc - lse[h * s + i]).exp();
                let kept = if mask.keep(h, i, j) { keep } else { 0.0 };
                let dpd: f64 = (0..D).map(|d| at(g, s, h, i, d) * at(v, s, h, j, d)).sum();
                let ds = p * (dpd * kept - dd);
                for d in 0..D {
                    dv[(h * s + j) * D + d] += p * kept * at(g, s, h, i, d);
                    dq[(h * s + i) * D + d] += ds * at(k, s, h, j, d) * f64::from(SCALE);
                    dk[(h * s + j) * D + d] += ds * at(q, s, h, i, d) * f64::from(SCALE);
                }
            }
        }
    }
    [dq, dk, dv]
}

fn close(what: &str, got: &Tensor, want: &[f64], tol: f64) {
    let big = want.iter().fold(0.0f64, |a, x| a.max(x.abs()));
    for (n, w) in want.iter().enumerate() {
        let g = got.get(n).as_f64();
        assert!(
            (g - w).abs() <= tol * big.max(1e-3),
            "{what}[{n}] = {g}, float64 {w} (largest {big})"
        );
    }
}

/// The forward and both backward kernels at two tilings, on every
/// backend, against float64.
#[test]
fn forward_and_backward_match_float64_on_every_backend() {
    let (bh, s) = (2, 40);
    let shape = [bh, s, D];
    let q = f16s(shape, 1, 1.0, |_, _, _| None);
    let k = f16s(shape, 2, 1.0, |_, _, _| None);
    let v = f16s(shape, 3, 1.0, |_, _, _| None);
    let g = f16s(shape, 4, 1.0, |_, _, _| None);
    let mask = Mask::new(bh, s);
    let (o64, lse64) = forward64(&q, &k, &v, &mask, bh, s);
    let [dq64, dk64, dv64] = backward64(&q, &k, &v, &g, &mask, bh, s);
    // The float64 gradient is the loss's: central differences at a few
    // elements of each input.
    for (which, n) in [(0, 5), (0, 2 * s * D - 3), (1, 77), (2, 1000)] {
        let h = 1e-4;
        let mut plus = [q.clone(), k.clone(), v.clone()];
        let mut minus = plus.clone();
        let x = plus[which].get(n).as_f64();
        // f32 tensors for the perturbed copies (f16 would round h away).
        for (t, d) in [(&mut plus[which], h), (&mut minus[which], -h)] {
            let mut f = Tensor::from_fn(Scalar::F32, &t.shape, |m| t.get(m));
            f.set(n, Value::F32((x + d) as f32));
            *t = f;
        }
        let num = (loss64(&plus[0], &plus[1], &plus[2], &g, &mask, bh, s)
            - loss64(&minus[0], &minus[1], &minus[2], &g, &mask, bh, s))
            / (f64::from((x + h) as f32) - f64::from((x - h) as f32));
        let ana = [&dq64, &dk64, &dv64][which][n];
        assert!(
            (num - ana).abs() <= 1e-3 * (1.0 + ana.abs()),
            "input {which} element {n}: finite difference {num}, analytic {ana}"
        );
    }
    // (BM, BN) of the forward, the kv kernel and the q kernel.
    for [(fm, fn_), (km, kn), (qm, qn)] in [[(16, 16); 3], [(16, 32), (32, 16), (16, 32)]] {
        let (o, l) = forward(&q, &k, &v, (fm, fn_), &format!("forward {fm}x{fn_}"));
        close("O", &o, &o64, 4e-3);
        close("L", &l, &lse64, 1e-5);

        let kv = kernel(
            "attention_dropout_backward.ph",
            "attention_dropout_backward_kv",
            km,
            kn,
        );
        let qk = kernel(
            "attention_dropout_backward.ph",
            "attention_dropout_backward_q",
            qm,
            qn,
        );
        let common = [&q, &k, &v, &o, &g].map(|t| Arg::Tensor(t.clone()));
        let mut kv_in: Vec<Arg> = common.to_vec();
        kv_in.extend([
            Arg::Tensor(l.clone()),
            zeros(Scalar::F16, &shape),
            zeros(Scalar::F16, &shape),
        ]);
        kv_in.extend(scalars());
        let kv_out = run_on_every_backend(&kv, &kv_in, &format!("backward kv {km}x{kn}"));
        close("dK", tensor(&kv_out[6]), &dk64, 1e-2);
        close("dV", tensor(&kv_out[7]), &dv64, 1e-2);
        let mut q_in: Vec<Arg> = common.to_vec();
        q_in.extend([Arg::Tensor(l), zeros(Scalar::F16, &shape)]);
        q_in.extend(scalars());
        let q_out = run_on_every_backend(&qk, &q_in, &format!("backward q {qm}x{qn}"));
        close("dQ", tensor(&q_out[6]), &dq64, 1e-2);
    }
}

/// The head dimension D is a dim of the examples: the forward at D = 16
/// gives the same bits on every backend and matches float64, as at 64.
#[test]
fn the_head_dimension_is_a_dim() {
    let (bh, s, dh) = (1, 24, 16);
    let shape = [bh, s, dh];
    let q = f16s(shape, 5, 1.0, |_, _, _| None);
    let k = f16s(shape, 6, 1.0, |_, _, _| None);
    let v = f16s(shape, 7, 1.0, |_, _, _| None);
    let (o64, lse64) = forward64(&q, &k, &v, &Mask::new(bh, s), bh, s);
    let (o, l) = forward(&q, &k, &v, (16, 16), "forward at D = 16");
    assert_eq!(o.shape, vec![bh, s, dh]);
    close("O", &o, &o64, 4e-3);
    close("L", &l, &lse64, 1e-5);
}

/// With V the identity, O[i, j] is nonzero exactly where the forward kept
/// (i, j); with dO the identity, dV[j, i] is nonzero exactly where the
/// backward kept it. The two masks, drawn under different tilings (and
/// the backward's transposed), are equal, on every backend, and are
/// Tandem's draws at the elements' coordinates.
#[test]
fn the_backward_regenerates_the_forwards_mask() {
    let (bh, s) = (2, 64);
    let shape = [bh, s, D];
    let eye = |_: usize, i: usize, d: usize| Some(if i == d { 1.0 } else { 0.0 });
    let q = f16s(shape, 5, 0.5, |_, _, _| None);
    let k = f16s(shape, 6, 0.5, |_, _, _| None);
    let v = f16s(shape, 0, 0.0, eye);
    let mask = Mask::new(bh, s);
    for (fwd_tile, bwd_tile) in [((16, 16), (32, 16)), ((16, 32), (16, 16))] {
        let (o, l) = forward(&q, &k, &v, fwd_tile, "mask forward");
        let kv = kernel(
            "attention_dropout_backward.ph",
            "attention_dropout_backward_kv",
            bwd_tile.0,
            bwd_tile.1,
        );
        let mut kv_in: Vec<Arg> = [&q, &k, &v, &o, &v]
            .map(|t| Arg::Tensor(t.clone()))
            .to_vec();
        kv_in.extend([
            Arg::Tensor(l),
            zeros(Scalar::F16, &shape),
            zeros(Scalar::F16, &shape),
        ]);
        kv_in.extend(scalars());
        let kv_out = run_on_every_backend(&kv, &kv_in, "mask backward");
        let dv = tensor(&kv_out[7]);
        let mut kept = 0;
        for h in 0..bh {
            for i in 0..s {
                for j in 0..s {
                    let forward = at(&o, s, h, i, j) != 0.0;
                    let backward = at(dv, s, h, j, i) != 0.0;
                    assert_eq!(
                        forward,
                        mask.keep(h, i, j),
                        "forward mask at ({h}, {i}, {j})"
                    );
                    assert_eq!(backward, forward, "backward mask at ({h}, {i}, {j})");
                    kept += usize::from(forward);
                }
            }
        }
        let frac = kept as f64 / (bh * s * s) as f64;
        assert!((0.85..0.95).contains(&frac), "kept {frac}");
    }
}
