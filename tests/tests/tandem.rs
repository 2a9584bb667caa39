//! Tandem draws inside kernels (`std/tandem.ph`): draw `i` equals element
//! `i` of the reference fill of `Tandem::new(Key::from_seed(key))`, on the
//! interpreter, the CPU backend and the GPU, and a fused
//! `Y = X + s * tandem_normal(key, i)` equals the fill plus the add, bit for
//! bit.

use phobos_core::Program;
use phobos_core::ir::Kernel;
use phobos_core::launch::Arg;
use phobos_core::tensor::{Data, Tensor};
use phobos_core::types::{Scalar, Value};
use phobos_tandem::{Key, Tandem};
use phobos_tests::{gpu_available, matches_on_gpu, run_everywhere};

fn kernel(src: &str, name: &str) -> Kernel {
    let (program, diags) = Program::parse("t.ph", src);
    assert!(diags.is_empty(), "{diags:?}");
    program.kernel(name, &[]).expect("checks")
}

/// Every distribution at counters `base + flat index`, with three bounds
/// (one that rejects half its draws, so retries run).
const DRAWS: &str = "
@autotune(R in [4])
kernel draws(W: tensor<u32>[M, 256], F: tensor<f32>[M, 256], N: tensor<f32>[M, 256],
             E: tensor<f32>[M, 256], T: tensor<u32>[M, 256], B6: tensor<u32>[M, 256],
             BH: tensor<u32>[M, 256], BK: tensor<u32>[M, 256], key: u32, base: u32) {
  let r = ctx.block.x * R
  W[r :+ R, :] = tandem_u32(key, base + u32((r + iota(0)) * 256 + iota(1)))
  F[r :+ R, :] = tandem_uniform(key, base + u32((r + iota(0)) * 256 + iota(1)))
  N[r :+ R, :] = tandem_normal(key, base + u32((r + iota(0)) * 256 + iota(1)))
  E[r :+ R, :] = tandem_exponential(key, base + u32((r + iota(0)) * 256 + iota(1)))
  T[r :+ R, :] = u32(tandem_bool(key, base + u32((r + iota(0)) * 256 + iota(1))))
  B6[r :+ R, :] = tandem_below(key, base + u32((r + iota(0)) * 256 + iota(1)), 6)
  BH[r :+ R, :] = tandem_below(key, base + u32((r + iota(0)) * 256 + iota(1)), 2147483649)
  BK[r :+ R, :] = tandem_below(key, base + u32((r + iota(0)) * 256 + iota(1)), 1000)
}
";

const OUTPUTS: usize = 8;

fn draws_args(rows: usize, key: u32, base: u32) -> Vec<Arg> {
    let f = |s| Arg::Tensor(Tensor::zeros(s, &[rows, 256]));
    vec![
        f(Scalar::U32),
        f(Scalar::F32),
        f(Scalar::F32),
        f(Scalar::F32),
        f(Scalar::U32),
        f(Scalar::U32),
        f(Scalar::U32),
        f(Scalar::U32),
        Arg::Scalar(Value::U32(key)),
        Arg::Scalar(Value::U32(base)),
    ]
}

/// The reference fills of the same elements, as the kernel's outputs.
fn reference(rows: usize, key: u32, base: u32) -> Vec<Tensor> {
    let t = Tandem::new(Key::from_seed(u64::from(key)));
    let n = rows * 256;
    let start = u64::from(base);
    let mut u = vec![0u32; n];
    t.fill_u32(&mut u, start).unwrap();
    let mut f = vec![0f32; n];
    t.fill_f32(&mut f, start).unwrap();
    let mut z = vec![0f32; n];
    t.fill_normal_f32(&mut z, start).unwrap();
    let mut e = vec![0f32; n];
    t.fill_exponential_f32(&mut e, start).unwrap();
    let mut b = vec![false; n];
    t.fill_bool(&mut b, start).unwrap();
    let below = |bound: u32| {
        let mut v = vec![0u32; n];
        t.fill_below_u32(&mut v, start, bound).unwrap();
        v
    };
    let shape = vec![rows, 256];
    let mk = |data| Tensor {
        shape: shape.clone(),
        data,
    };
    vec![
        mk(Data::U32(u)),
        mk(Data::F32(f)),
        mk(Data::F32(z)),
        mk(Data::F32(e)),
        mk(Data::U32(b.iter().map(|&x| u32::from(x)).collect())),
        mk(Data::U32(below(6))),
        mk(Data::U32(below(2_147_483_649))),
        mk(Data::U32(below(1000))),
    ]
}

fn assert_reference(args: &[Arg], want: &[Tensor], what: &str) {
    for (o, w) in want.iter().enumerate().take(OUTPUTS) {
        let Arg::Tensor(got) = &args[o] else {
            panic!("output {o} is a tensor")
        };
        if let Some(j) = (0..w.len()).find(|&j| got.get(j).bits() != w.get(j).bits()) {
            panic!(
                "{what}: output {o} element {j}: kernel {} but reference {}",
                got.get(j),
                w.get(j)
            );
        }
    }
}

#[test]
fn draws_equal_the_reference_fills_on_interp_and_cpu() {
    let k = kernel(DRAWS, "draws");
    for (rows, key, base) in [(9, 32, 0), (3, 7, 4_294_966_000), (2, 0, 1_000_003)] {
        let mut args = draws_args(rows, key, base);
        run_everywhere(&k, &mut args);
        assert_reference(&args, &reference(rows, key, base), "interp");
    }
}

#[test]
fn draws_equal_the_reference_fills_on_the_gpu() {
    if !gpu_available() {
        return;
    }
    let k = kernel(DRAWS, "draws");
    for (rows, key, base) in [(9, 32, 0), (3, 7, 4_294_966_000)] {
        let inputs = draws_args(rows, key, base);
        let mut want = inputs.clone();
        phobos_core::interp::run(&k, &mut want).unwrap();
        assert_reference(&want, &reference(rows, key, base), "interp");
        assert!(matches_on_gpu(&k, &inputs, &want).unwrap());
    }
}
