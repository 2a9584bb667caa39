//! Shared helpers of the integration tests: fixture discovery, running a
//! kernel on generated inputs, a plain-Rust model of the stdlib, and the
//! random kernel generator of the differential tests.

// `gen` is a reserved word in Rust 2024, hence the raw identifier.
pub mod docs;
pub mod r#gen;
pub mod model;

use phobos_core::Program;
use phobos_core::ir::{Kernel, ParamKind};
use phobos_core::launch::Arg;
use phobos_core::tensor::Tensor;
use phobos_core::types::Dim;
use phobos_runtime::inputs;
use std::path::{Path, PathBuf};

/// The repository root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ is in the root")
        .to_path_buf()
}

/// The `.ph` files of a folder, sorted.
pub fn ph_files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "ph"))
        .collect();
    v.sort();
    v
}

pub fn stem(p: &Path) -> String {
    p.file_stem()
        .expect("file name")
        .to_string_lossy()
        .into_owned()
}

/// Reads `// dims: M=37, N=5` from a fixture (default: every dim 37).
pub fn fixture_dims(text: &str) -> Vec<(String, usize)> {
    text.lines()
        .filter_map(|l| l.trim().strip_prefix("// dims:"))
        .flat_map(|l| l.split(',').map(str::to_string).collect::<Vec<_>>())
        .filter_map(|kv| {
            let (k, v) = kv.split_once('=')?;
            Some((k.trim().to_string(), v.trim().parse().ok()?))
        })
        .collect()
}

/// Arguments for a kernel: generated tensors for what it reads, zeros for
/// the rest, scalars 0 (or `scalars` by name).
pub fn make_args(
    k: &Kernel,
    dims: &[(String, usize)],
    scalars: &[(&str, phobos_core::types::Value)],
) -> Vec<Arg> {
    let extent = |d: &Dim| match d {
        Dim::Const(v) => *v as usize,
        Dim::Sym(s) => dims
            .iter()
            .find(|(n, _)| *n == k.dims[*s])
            .map_or(37, |(_, v)| *v),
    };
    k.params
        .iter()
        .map(|p| match &p.kind {
            ParamKind::Scalar(t) => Arg::Scalar(
                scalars
                    .iter()
                    .find(|(n, _)| *n == p.name)
                    .map_or(inputs::scalar(*t), |(_, v)| *v),
            ),
            ParamKind::Tensor {
                elem, shape, read, ..
            } => {
                let ext: Vec<usize> = shape.iter().map(extent).collect();
                Arg::Tensor(if *read {
                    inputs::tensor(*elem, &ext)
                } else {
                    Tensor::zeros(*elem, &ext)
                })
            }
        })
        .collect()
}

/// Asserts that checking each source (as `k.ph`) reports a diagnostic
/// containing its phrase, located in the source.
pub fn assert_located_errors(cases: &[(&str, &str)]) {
    for (src, want) in cases {
        let (p, mut d) = Program::parse("k.ph", src);
        d.extend(p.check());
        let text = phobos_core::render(&d, &p.sources, false);
        assert!(text.contains(want), "{src}\n{text}");
        assert!(text.contains("k.ph:"), "no location: {text}");
    }
}

/// Parses and checks a program, panicking with rendered diagnostics.
pub fn program(name: &str, text: &str) -> Program {
    let (p, mut d) = Program::parse(name, text);
    d.extend(p.check());
    assert!(
        d.is_empty(),
        "{}",
        phobos_core::render(&d, &p.sources, false)
    );
    p
}

/// The kernel `name` of `examples/{name}.ph`, checked, in its first
/// configuration.
pub fn example_kernel(name: &str) -> phobos_core::ir::Kernel {
    let path = root().join(format!("examples/{name}.ph"));
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    program(&format!("{name}.ph"), &text)
        .kernel(name, &[])
        .unwrap_or_else(|d| panic!("{name}: {d:?}"))
}

/// Runs `k` on the interpreter and on `gpu` (exact mode) and panics at the
/// first element of any tensor whose bits differ, naming `what` the device
/// is.
pub fn same_bits_on(gpu: &phobos_runtime::gpu::Gpu, what: &str, k: &Kernel, args: Vec<Arg>) {
    let mut want = args.clone();
    phobos_core::interp::run(k, &mut want).unwrap();
    let mut got = args;
    gpu.run(k, &mut got, phobos_runtime::Precision::Exact)
        .unwrap_or_else(|e| panic!("`{}` on {what}: {e}", k.name));
    for (i, (a, b)) in want.iter().zip(&got).enumerate() {
        if let (Arg::Tensor(a), Arg::Tensor(b)) = (a, b)
            && let Some(j) = (0..a.len()).find(|&j| a.get(j).bits() != b.get(j).bits())
        {
            panic!(
                "`{}`: `{}` element {j}: interp {} but {what} {}",
                k.name,
                k.params[i].name,
                a.get(j),
                b.get(j)
            );
        }
    }
}

pub fn tensor(a: &Arg) -> &Tensor {
    match a {
        Arg::Tensor(t) => t,
        Arg::Scalar(_) => panic!("not a tensor"),
    }
}

/// Runs a kernel on the interpreter and on the CPU backend, asserts that
/// every tensor has the same bits, and leaves the interpreter's results in
/// `args`.
pub fn run_everywhere(k: &Kernel, args: &mut [Arg]) -> phobos_core::launch::Bound {
    use phobos_runtime::{Backend, Options, launch};
    let mut cpu = args.to_vec();
    let bound = phobos_core::interp::run(k, args).unwrap_or_else(|e| panic!("interp: {e}"));
    let options = Options {
        backend: Backend::Cpu,
        ..Options::default()
    };
    launch(k, &mut cpu, &options).unwrap_or_else(|e| panic!("cpu: {e}"));
    for (i, (a, b)) in args.iter().zip(&cpu).enumerate() {
        if let (Arg::Tensor(a), Arg::Tensor(b)) = (a, b) {
            let bad = (0..a.len()).find(|&j| a.get(j).bits() != b.get(j).bits());
            if let Some(j) = bad {
                panic!(
                    "`{}` element {j}: interp {} but cpu {}",
                    k.params[i].name,
                    a.get(j),
                    b.get(j)
                );
            }
        }
    }
    bound
}

/// [`run_everywhere`] on a copy of `inputs`, then, where a GPU is present,
/// the same launch there, which must give the same bits; the results.
/// `what` names the launch in a failure.
pub fn run_on_every_backend(k: &Kernel, inputs: &[Arg], what: &str) -> Vec<Arg> {
    let mut args = inputs.to_vec();
    run_everywhere(k, &mut args);
    if gpu_available() {
        assert_eq!(
            matches_on_gpu(k, inputs, &args),
            Ok(true),
            "{what}: the GPU differs"
        );
    }
    args
}

/// Whether the GPU backend has an adapter here. Without one the caller
/// skips and says so, unless `PHOBOS_REQUIRE_GPU=1` (CI), which fails.
pub fn gpu_available() -> bool {
    match phobos_runtime::gpu::Gpu::shared() {
        Ok(_) => true,
        Err(e) => {
            assert!(
                std::env::var("PHOBOS_REQUIRE_GPU").map_or(true, |v| v != "1"),
                "PHOBOS_REQUIRE_GPU=1 but the GPU backend is not available: {e}"
            );
            eprintln!("skipping the GPU: {e}");
            false
        }
    }
}

/// What the GPU backend may still refuse: types it has no storage for yet.
/// Anything else it refuses is a failure.
pub fn gpu_may_refuse(message: &str) -> bool {
    message.contains("not supported on the GPU")
        && ["bool tensor", "i64", "u64", "f64"]
            .iter()
            .any(|what| message.contains(what))
}

/// Runs `k` on the GPU from `inputs` and compares every tensor with
/// `want` bit for bit. `Ok(false)` when the GPU refuses it for a reason
/// [`gpu_may_refuse`] allows.
pub fn matches_on_gpu(k: &Kernel, inputs: &[Arg], want: &[Arg]) -> Result<bool, String> {
    use phobos_runtime::{Backend, Options, launch};
    let mut got = inputs.to_vec();
    let options = Options {
        backend: Backend::Gpu,
        ..Options::default()
    };
    match launch(k, &mut got, &options) {
        Ok(_) => {}
        Err(e) if gpu_may_refuse(&e.to_string()) => {
            eprintln!("the GPU refuses `{}`: {e}", k.name);
            return Ok(false);
        }
        Err(e) => return Err(format!("gpu: {e}")),
    }
    for (i, (a, b)) in want.iter().zip(&got).enumerate() {
        if let (Arg::Tensor(a), Arg::Tensor(b)) = (a, b)
            && let Some(j) = (0..a.len()).find(|&j| a.get(j).bits() != b.get(j).bits())
        {
            return Err(format!(
                "`{}` element {j}: interp {} but gpu {}",
                k.params[i].name,
                a.get(j),
                b.get(j)
            ));
        }
    }
    Ok(true)
}

/// Whether the GPU adapter is Mesa's lavapipe (llvmpipe), whose known
/// deviations some tests name.
pub fn gpu_is_lavapipe() -> bool {
    phobos_runtime::gpu::Gpu::shared().is_ok_and(|g| g.info().name.contains("llvmpipe"))
}

/// Element `i` of `phobosc fill f32 --key key` for `i` in `0..n`: the
/// reference crate's `fill_f32`, which `tandem_uniform(key, i)` and so
/// `tandem_dropout` read.
pub fn tandem_uniforms(key: u32, n: usize) -> Vec<f32> {
    use phobos_tandem::{Key, Tandem};
    let mut f = vec![0f32; n];
    Tandem::new(Key::from_seed(u64::from(key)))
        .fill_f32(&mut f, 0)
        .expect("a fill from counter 0");
    f
}

/// Checks the Tandem variant of an example against the hash one. `k` runs
/// from `inputs` on the interpreter, Cranelift and the GPU with the same
/// bits; then its output (argument `out`, `key` its key) is exactly 0
/// where element `i` of `phobosc fill f32 --key key` is below `p`, and
/// has the bits of the hash kernel's output `hashed` (of seed `seed`, all
/// else the same) wherever both keep the element, since the two compute
/// the same value and differ only in the draw. Returns how many elements
/// the Tandem mask keeps.
pub fn check_tandem_variant(
    k: &Kernel,
    inputs: &[Arg],
    out: usize,
    (key, seed, p): (u32, i32, f32),
    hashed: &Tensor,
) -> usize {
    use phobos_core::tensor::Data;
    let args = run_on_every_backend(k, inputs, &format!("`{}`", k.name));
    let (Data::F32(y), Data::F32(h)) = (&tensor(&args[out]).data, &hashed.data) else {
        panic!("the outputs are f32")
    };
    let u = tandem_uniforms(key, y.len());
    let mut kept = 0;
    for i in 0..y.len() {
        if u[i] < p {
            assert_eq!(y[i].to_bits(), 0, "`{}`: element {i} is dropped", k.name);
            continue;
        }
        kept += 1;
        if model::uniform(seed, i as i32) >= p {
            assert_eq!(
                y[i].to_bits(),
                h[i].to_bits(),
                "`{}`: element {i}, kept by both draws, differs from the hash kernel's",
                k.name
            );
        }
    }
    kept
}

/// The first element whose bits differ between two argument lists.
pub fn differs(want: &[Arg], got: &[Arg]) -> Option<String> {
    for (i, (a, b)) in want.iter().zip(got).enumerate() {
        if let (Arg::Tensor(a), Arg::Tensor(b)) = (a, b) {
            if a.shape != b.shape {
                return Some(format!(
                    "argument {i}: shapes {:?} and {:?}",
                    a.shape, b.shape
                ));
            }
            if let Some(j) = (0..a.len()).find(|&j| a.get(j).bits() != b.get(j).bits()) {
                return Some(format!(
                    "argument {i} element {j}: {} and {}",
                    a.get(j),
                    b.get(j)
                ));
            }
        }
    }
    None
}
