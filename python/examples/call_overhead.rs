//! The cost of a small launch through the Rust API: the baseline that the
//! Python package's call overhead is measured against (`bench/call.py`,
//! recorded in bench/RESULTS.md under "Python").
//!
//!     cargo run --release -p phobos-python --example call_overhead [-- cpu interp gpu]
//!
//! It launches `examples/dropout_rows.ph` on a 16 x 256 tile, as
//! `mod.dropout_rows(X=x, seed=1, backend=B)` does from Python: fresh
//! argument tensors each time (a copy of X and a zero Y), the kernel
//! checked once, then `phobos_runtime::launch`.

use phobos_core::Program;
use phobos_core::launch::Arg;
use phobos_core::tensor::Tensor;
use phobos_core::types::{Scalar, Value};
use phobos_runtime::{Backend, Options, launch};
use std::time::Instant;

fn main() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/dropout_rows.ph");
    let src = std::fs::read_to_string(path).expect("the example is there");
    let (program, diags) = Program::parse("dropout_rows.ph", &src);
    assert!(diags.is_empty(), "the example compiles");
    let kernel = program.kernel("dropout_rows", &[]).expect("checks");
    let shape = [16, 256];
    let x = Tensor::from_fn(Scalar::F32, &shape, |i| Value::F32(i as f32));
    let mut names: Vec<String> = std::env::args().skip(1).collect();
    if names.is_empty() {
        names = vec!["cpu".into(), "interp".into()];
    }
    for name in names {
        let (backend, runs) = match name.as_str() {
            "cpu" => (Backend::Cpu, 2000),
            "interp" => (Backend::Interp, 200),
            "gpu" => (Backend::Gpu, 2000),
            other => panic!("unknown backend `{other}`: cpu, interp or gpu"),
        };
        let options = Options {
            backend,
            ..Options::default()
        };
        let mut times = Vec::with_capacity(runs);
        for _ in 0..runs + 20 {
            let started = Instant::now();
            let mut args = vec![
                Arg::Tensor(x.clone()),
                Arg::Tensor(Tensor::zeros(Scalar::F32, &shape)),
                Arg::Scalar(Value::I32(1)),
            ];
            launch(&kernel, &mut args, &options).expect("runs");
            times.push(started.elapsed().as_secs_f64() * 1e6);
        }
        // The first launches compile and warm up; they are not counted.
        let mut times = times.split_off(20);
        times.sort_by(f64::total_cmp);
        println!(
            "rust {:<6} dropout_rows 16x256: median {:.1} us, fastest {:.1} us ({runs} launches)",
            backend.name(),
            times[runs / 2],
            times[0]
        );
    }
}
