//! The interpreter against Cranelift: every kernel of the input that checks
//! clean runs on both, on small dims chosen from the input, and every tensor
//! must come back with the same bits. Launches whose tensors, tiles or work
//! exceed small budgets are skipped before anything is allocated, so that a
//! kernel with a huge constant tile is not mistaken for a leak or a hang.

#![no_main]

use libfuzzer_sys::fuzz_target;
use phobos_core::Program;
use phobos_core::ir::{Index, Kernel, ParamKind, Stmt};
use phobos_core::launch::{Arg, ArgShape, bind_shapes};
use phobos_core::tensor::Tensor;
use phobos_core::types::{Dim, Scalar, Value};

/// The most bytes of tensors and tiles one launch may hold.
const MAX_BYTES: u64 = 1 << 20;
/// The most element evaluations the interpreter is allowed, roughly: blocks
/// times expressions times the largest shape of the kernel.
const MAX_WORK: u64 = 1 << 22;
/// The most IR expressions a kernel may have (Cranelift compile time).
const MAX_EXPRS: usize = 4_000;
/// Configurations run per kernel (each is a compile).
const MAX_CONFIGS: usize = 4;

/// FNV-1a, so that the dims and the data follow from the input alone and
/// the seed corpus can be plain `.ph` files.
fn hash(data: &[u8], salt: u64) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64 ^ salt.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    for &b in data {
        h ^= b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// splitmix64.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// A value of `s`: edge values often, random bits otherwise.
fn value(s: Scalar, rng: &mut Rng) -> Value {
    let r = rng.next();
    let pick = r % 8;
    let bits = rng.next();
    match s {
        Scalar::Bool => Value::Bool(bits & 1 == 1),
        Scalar::I32 => Value::I32(match pick {
            0 => 0,
            1 => -1,
            2 => i32::MIN,
            3 => i32::MAX,
            4 => (bits % 17) as i32 - 8,
            _ => bits as i32,
        }),
        Scalar::U32 => Value::U32(match pick {
            0 => 0,
            1 => u32::MAX,
            2 => 1 << 31,
            3 => (bits % 17) as u32,
            _ => bits as u32,
        }),
        Scalar::I64 => Value::I64(match pick {
            0 => 0,
            1 => -1,
            2 => i64::MIN,
            3 => i64::MAX,
            4 => (bits % 17) as i64 - 8,
            _ => bits as i64,
        }),
        Scalar::U64 => Value::U64(match pick {
            0 => 0,
            1 => u64::MAX,
            2 => 1 << 63,
            3 => bits % 17,
            _ => bits,
        }),
        Scalar::F32 => Value::F32(match pick {
            0 => 0.0,
            1 => -0.0,
            2 => f32::NAN,
            3 => f32::INFINITY,
            4 => f32::NEG_INFINITY,
            5 => f32::from_bits(bits as u32),
            _ => (bits % 2001) as f32 / 100.0 - 10.0,
        }),
        Scalar::F64 => Value::F64(match pick {
            0 => 0.0,
            1 => -0.0,
            2 => f64::NAN,
            3 => f64::INFINITY,
            4 => f64::NEG_INFINITY,
            5 => f64::from_bits(bits),
            _ => (bits % 2001) as f64 / 100.0 - 10.0,
        }),
    }
}

fn extent(d: &Dim, dims: &[u64]) -> u64 {
    match *d {
        Dim::Const(v) => v,
        Dim::Sym(s) => dims[s],
    }
}

fn elements(shape: &[Dim], dims: &[u64]) -> u64 {
    shape
        .iter()
        .fold(1u64, |n, d| n.saturating_mul(extent(d, dims).max(1)))
}

/// The arguments of a launch with every dim in `dims`, or `None` when it
/// would exceed the budgets.
fn args_for(kernel: &Kernel, dims: &[u64], rng: &mut Rng) -> Option<Vec<Arg>> {
    if kernel.exprs.len() > MAX_EXPRS {
        return None;
    }
    let mut bytes = 0u64;
    let mut shapes = Vec::new();
    for p in &kernel.params {
        match &p.kind {
            ParamKind::Tensor { elem, shape, .. } => {
                let n = elements(shape, dims);
                bytes = bytes.saturating_add(n.saturating_mul(elem.size() as u64));
                if bytes > MAX_BYTES {
                    return None;
                }
                let s: Vec<usize> = shape.iter().map(|d| extent(d, dims) as usize).collect();
                shapes.push((*elem, s));
            }
            ParamKind::Scalar(_) => shapes.push((Scalar::Bool, Vec::new())),
        }
    }
    // The largest shape anything in the kernel is evaluated over.
    let mut largest = 1u64;
    for l in &kernel.locals {
        let n = elements(&l.shape, dims);
        bytes = bytes.saturating_add(n.saturating_mul(l.elem.size() as u64));
        largest = largest.max(n);
    }
    if bytes > MAX_BYTES {
        return None;
    }
    for e in &kernel.exprs {
        largest = largest.max(elements(&e.shape, dims));
    }
    for s in &kernel.body {
        if let Stmt::Store { index, .. } = s {
            let n = index.iter().fold(1u64, |n, i| match i {
                Index::Range { len, .. } => n.saturating_mul(extent(len, dims).max(1)),
                Index::Single(_) => n,
            });
            largest = largest.max(n);
        }
    }
    let scalars: Vec<Option<Value>> = kernel
        .params
        .iter()
        .map(|p| match p.kind {
            ParamKind::Scalar(s) => Some(value(s, rng)),
            ParamKind::Tensor { .. } => None,
        })
        .collect();
    let arg_shapes: Vec<ArgShape> = shapes
        .iter()
        .zip(&scalars)
        .map(|((elem, shape), v)| match v {
            Some(v) => ArgShape::Scalar(*v),
            None => ArgShape::Tensor { elem: *elem, shape },
        })
        .collect();
    // A launch both backends refuse the same way is not run; `bind` is
    // shared, so there is nothing to compare.
    let bound = bind_shapes(kernel, &arg_shapes).ok()?;
    let blocks = bound.grid.iter().fold(1u64, |n, g| n.saturating_mul(*g));
    let work = blocks
        .saturating_mul(largest)
        .saturating_mul(kernel.exprs.len().max(1) as u64);
    if work > MAX_WORK {
        return None;
    }
    Some(
        shapes
            .iter()
            .zip(scalars)
            .map(|((elem, shape), v)| match v {
                Some(v) => Arg::Scalar(v),
                None => {
                    let n: usize = shape.iter().product();
                    let vals: Vec<Value> = (0..n).map(|_| value(*elem, rng)).collect();
                    Arg::Tensor(Tensor::from_fn(*elem, shape, |i| vals[i]))
                }
            })
            .collect(),
    )
}

/// `PHOBOS_FUZZ_STATS=1` prints one line per kernel run or skipped, to count
/// over a corpus (`-runs=0 corpus/differential 2>&1 | sort | uniq -c`).
fn stats(what: &str) {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    if *ON.get_or_init(|| std::env::var_os("PHOBOS_FUZZ_STATS").is_some()) {
        eprintln!("phobos-fuzz: {what}");
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (program, diags) = Program::parse("fuzz.ph", text);
    if !diags.is_empty() {
        return;
    }
    let mut rng = Rng(hash(data, 0));
    for name in program.kernel_names() {
        for config in program.configs(name).into_iter().take(MAX_CONFIGS) {
            let Ok(kernel) = program.kernel(name, &config) else {
                continue;
            };
            let dims: Vec<u64> = kernel.dims.iter().map(|_| 1 + rng.next() % 8).collect();
            let Some(args) = args_for(&kernel, &dims, &mut rng) else {
                stats("skipped (over a budget, or bind refuses the launch)");
                continue;
            };
            let mut reference = args.clone();
            let mut cpu = args;
            let a = phobos_core::interp::run(&kernel, &mut reference);
            let b = phobos_cpu::run(&kernel, &mut cpu, Some(1));
            match (&a, &b) {
                (Ok(_), Ok(_)) => {}
                (Err(ea), Err(phobos_cpu::RunError::Launch(eb))) if ea == eb => {
                    stats("refused by both");
                    continue;
                }
                _ => panic!(
                    "kernel `{name}` {config:?} dims {dims:?}: the interpreter gives {a:?}, Cranelift {:?}",
                    b.as_ref()
                        .map(|r| r.bound.clone())
                        .map_err(|e| e.to_string())
                ),
            }
            for (i, (x, y)) in reference.iter().zip(&cpu).enumerate() {
                let same = match (x, y) {
                    (Arg::Tensor(x), Arg::Tensor(y)) => x.bits_eq(y),
                    (x, y) => x == y,
                };
                if !same {
                    let p = &kernel.params[i].name;
                    panic!(
                        "kernel `{name}` {config:?} dims {dims:?}: `{p}` differs\ninterpreter: {x:?}\ncranelift:   {y:?}\nIR:\n{}",
                        kernel.print()
                    );
                }
            }
            stats("compared");
        }
    }
});
