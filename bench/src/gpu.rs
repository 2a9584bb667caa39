//! The GPU benchmark of issue 3, in one run on one adapter: the seed's
//! `dropout_rows` compiled by `phobosc` (exact and fast mode), and `hash32`
//! and `uniform` fills, against the copy and zero-fill ceilings measured in
//! the same run by hand-written WGSL of the true shape (`ceiling.rs`), with
//! the ceilings' ablations as experiments.
//!
//! `cargo run --release -p phobos-bench --bin phobos-bench-gpu [-- LOG2_N]`
//!
//! Each row: half a second of warm-up launches, then the median (and fastest) of 21 GPU timestamps
//! around the pass, as GiB/s of bytes read + written. The output buffer is
//! poisoned before timing and what the timed runs left in it is compared
//! with the CPU backend on every element and with the reference
//! interpreter on a prefix. A benchmark, not a test: CI does not run it.

#[path = "ceiling.rs"]
mod ceiling;
#[path = "common.rs"]
mod common;

use ceiling::Ceilings;
use common::{RUNS, gib, time_dispatch, timestamps};
use phobos_core::Program;
use phobos_core::launch::Arg;
use phobos_core::tensor::{Data, Tensor};
use phobos_core::types::{Scalar, Value};
use phobos_runtime::gpu::Gpu;
use phobos_runtime::{Backend, Options, Precision, launch};

const FILLS: &str = "
@autotune(B in [256, 1024, 4096])
kernel hash_fill(Y: tensor<u32>[N]) {
  let b = ctx.block.x * B
  Y[b :+ B] = u32(hash32(b + iota(0)))
}
@autotune(B in [4096])
kernel uniform_fill(U: tensor<f32>[N], seed: i32) {
  let b = ctx.block.x * B
  U[b :+ B] = uniform(seed, b + iota(0))
}
";

/// Experiments on the shape of a fill kernel, in the structure the lowering
/// emits: `LOOP` is a grid-stride loop of 16 scalar stores per invocation
/// with a bounds check against a uniform, as `phobosc` writes it.
const LOOP: &str = "
struct P { n: u32, a: u32, b: u32, c: u32 }
@group(0) @binding(2) var<uniform> p: P;
@group(0) @binding(1) var<storage, read_write> dst: array<u32>;
@compute @workgroup_size(256)
fn main(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) w: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>) {
  let blk = w.x + w.y * nw.x;
  let base = blk * 4096u;
  var i = li;
  loop {
    if i >= 4096u { break; }
    let idx = base + i;
    if idx < p.n { dst[idx] = idx * 2654435761u; }
    continuing { i = i + 256u; }
  }
}
";

/// The same stores, one per invocation.
const FLAT: &str = "
struct P { n: u32, a: u32, b: u32, c: u32 }
@group(0) @binding(2) var<uniform> p: P;
@group(0) @binding(1) var<storage, read_write> dst: array<u32>;
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) g: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>) {
  let idx = g.x + g.y * nw.x * 256u;
  if idx < p.n { dst[idx] = idx * 2654435761u; }
}
";

fn wgsl_source(text: &str) -> wgpu::ShaderSource<'static> {
    wgpu::ShaderSource::Wgsl(text.to_string().into())
}

/// A hand-written WGSL kernel over `bytes` of output (and as many of input
/// when `copy`) on buffers of `usage`, with, for kernels with a uniform at
/// binding 2, the element count and the workgroups to dispatch: median and
/// fastest seconds. For experiments on the shape of generated kernels; the
/// ceilings are `ceiling.rs`'s.
fn ceiling_with(
    gpu: &Gpu,
    source: wgpu::ShaderSource<'static>,
    bytes: u64,
    copy: bool,
    usage: wgpu::BufferUsages,
    uniform: Option<[u32; 4]>,
    per_group: u32,
) -> (f64, f64) {
    let device = gpu.device();
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("ceiling"),
        source,
    });
    let explicit = std::env::var("PHOBOS_BENCH_EXPLICIT_LAYOUT").is_ok();
    let storage = common::storage_entry;
    let mut layout_entries = vec![storage(1, false)];
    if copy {
        layout_entries.push(storage(0, true));
    }
    if uniform.is_some() {
        layout_entries.push(wgpu::BindGroupLayoutEntry {
            binding: 2,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Uniform,
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        });
    }
    let bgl = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: None,
        entries: &layout_entries,
    });
    let pl = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: None,
        bind_group_layouts: &[Some(&bgl)],
        immediate_size: 0,
    });
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some("ceiling"),
        layout: explicit.then_some(&pl),
        module: &module,
        entry_point: Some("main"),
        compilation_options: Default::default(),
        cache: None,
    });
    let buffer = |label| {
        device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size: bytes,
            usage,
            mapped_at_creation: false,
        })
    };
    let ubuf = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("n"),
        size: 16,
        usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let (src, dst) = (buffer("src"), buffer("dst"));
    let mut entries = vec![wgpu::BindGroupEntry {
        binding: 1,
        resource: dst.as_entire_binding(),
    }];
    if copy {
        entries.push(wgpu::BindGroupEntry {
            binding: 0,
            resource: src.as_entire_binding(),
        });
    }
    if let Some(words) = uniform {
        gpu.queue()
            .write_buffer(&ubuf, 0, bytemuck::cast_slice(&words));
        entries.push(wgpu::BindGroupEntry {
            binding: 2,
            resource: ubuf.as_entire_binding(),
        });
    }
    let bind = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: None,
        layout: &if explicit {
            bgl.clone()
        } else {
            pipeline.get_bind_group_layout(0)
        },
        entries: &entries,
    });
    let groups = match uniform {
        Some([n, ..]) => n.div_ceil(per_group),
        None => (bytes / 16).div_ceil(256) as u32,
    };
    time_dispatch(gpu, &pipeline, &bind, groups)
}

/// The workgroup size the GPU backend picks for `kernel`.
fn phobos_gpu_workgroup(kernel: &phobos_core::ir::Kernel) -> u32 {
    phobos_runtime::gpu::workgroup_size(kernel)
}

fn tensor(a: &Arg) -> &Tensor {
    match a {
        Arg::Tensor(t) => t,
        Arg::Scalar(_) => unreachable!(),
    }
}

struct Row {
    what: String,
    bytes: u64,
    median: f64,
    fastest: f64,
    ceiling: &'static str,
    exact_check: String,
}

/// Times `kernel` with `args` on the GPU at `precision`, then compares the
/// timed output with the CPU backend (all elements) and the interpreter
/// (the launch `small`, whose outputs are a prefix of the large ones).
#[allow(clippy::too_many_arguments)]
fn measure(
    gpu: &Gpu,
    program: &Program,
    name: &str,
    config: &[(String, i64)],
    args: &[Arg],
    small: &[Arg],
    precision: Precision,
    bytes: u64,
    ceiling: &'static str,
) -> Row {
    let kernel = program.kernel(name, config).expect("checks");
    // Poison every output before the timed runs.
    let mut poisoned = args.to_vec();
    for (p, a) in kernel.params.iter().zip(&mut poisoned) {
        if let (phobos_core::ir::ParamKind::Tensor { written: true, .. }, Arg::Tensor(t)) =
            (&p.kind, a)
        {
            match &mut t.data {
                Data::F32(v) => v.fill(f32::from_bits(0x7fbad000)),
                Data::U32(v) => v.fill(0xdead_beef),
                Data::I32(v) => v.fill(-1),
                _ => {}
            }
        }
    }
    let prepared = gpu.prepare(&kernel, &poisoned, precision).expect("prepare");
    let t = timestamps(gpu, |enc, ts| prepared.encode(enc, ts));
    let mut got = poisoned.clone();
    gpu.read_back(&kernel, &prepared, &mut got)
        .expect("read back");

    let mut cpu = args.to_vec();
    let options = Options {
        backend: Backend::Cpu,
        ..Options::default()
    };
    launch(&kernel, &mut cpu, &options).expect("cpu");
    let mut interp = small.to_vec();
    phobos_core::interp::run(&kernel, &mut interp).expect("interp");
    let mut diffs = 0u64;
    let mut checked = 0u64;
    let mut prefix_diffs = 0u64;
    let mut prefix = 0u64;
    for i in 0..got.len() {
        let (Arg::Tensor(g), Arg::Tensor(c)) = (&got[i], &cpu[i]) else {
            continue;
        };
        if !matches!(
            kernel.params[i].kind,
            phobos_core::ir::ParamKind::Tensor { written: true, .. }
        ) {
            continue;
        }
        for j in 0..g.len() {
            checked += 1;
            diffs += u64::from(g.get(j).bits() != c.get(j).bits());
        }
        let s = tensor(&interp[i]);
        for j in 0..s.len() {
            prefix += 1;
            prefix_diffs += u64::from(g.get(j).bits() != s.get(j).bits());
        }
    }
    Row {
        what: format!(
            "{name} {} ({}, workgroup {})",
            config
                .iter()
                .map(|(n, v)| format!("{n}={v}"))
                .collect::<Vec<_>>()
                .join(" "),
            precision.name(),
            phobos_gpu_workgroup(&kernel)
        ),
        bytes,
        median: t[t.len() / 2],
        fastest: t[0],
        ceiling,
        exact_check: format!(
            "{} of {checked} differ from cpu; {} of {prefix} (prefix) differ from interp",
            diffs, prefix_diffs
        ),
    }
}

fn main() {
    let log2: u32 = std::env::args()
        .nth(1)
        .map_or(28, |s| s.parse().expect("LOG2_N"));
    let n = 1usize << log2;
    let gpu = Gpu::shared().unwrap_or_else(|e| panic!("{e}"));
    println!("device: {}", gpu.describe());
    println!(
        "elements: 2^{log2} = {n}; median (fastest) of {RUNS} GPU timestamps after a warm-up\n"
    );

    let bytes = 4 * n as u64;
    let mut ceilings = Ceilings::new(gpu);
    let copy = ceilings.copy(bytes);
    let zero = ceilings.zero(bytes);
    ceiling::print_ablations(gpu, bytes);

    let lp = ceiling_with(
        gpu,
        wgsl_source(LOOP),
        bytes,
        false,
        wgpu::BufferUsages::STORAGE,
        Some([n as u32, 0, 0, 0]),
        4096,
    );
    let flat = ceiling_with(
        gpu,
        wgsl_source(FLAT),
        bytes,
        false,
        wgpu::BufferUsages::STORAGE,
        Some([n as u32, 0, 0, 0]),
        256,
    );
    println!(
        "experiments in the lowering's structure (usage STORAGE, old grid), GiB/s: scalar stores in a 16-step loop {:.0}; one scalar store per invocation {:.0}\n",
        gib(bytes, lp.0),
        gib(bytes, flat.0)
    );
    // Variants of a generated fill (`phobosc build`, 4096 elements a
    // block, uniform {dim, grid_x, grid_y, grid_z} moved to binding 2).
    if let Ok(dir) = std::env::var("PHOBOS_BENCH_WGSL") {
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .expect("dir")
            .flatten()
            .map(|e| e.path())
            .collect();
        files.sort();
        for f in files
            .iter()
            .filter(|f| f.extension().is_some_and(|e| e == "wgsl"))
        {
            let text = std::fs::read_to_string(f)
                .unwrap()
                .replace("@binding(0)", "@binding(2)");
            let blocks = (n as u32).div_ceil(4096);
            let t = ceiling_with(
                gpu,
                wgsl_source(&text),
                bytes,
                false,
                wgpu::BufferUsages::STORAGE,
                Some([n as u32, blocks, 1, 1]),
                4096,
            );
            println!("{}: {:.0} GiB/s", f.display(), gib(bytes, t.0));
        }
    }
    // The lowering's own module for hash_fill B=4096, in the same harness:
    // as a naga module, and as its WGSL text (uniform moved to binding 2).
    {
        let (fills, _) = Program::parse("fills.ph", FILLS);
        let kernel = fills
            .kernel("hash_fill", &[("B".to_string(), 4096)])
            .expect("checks");
        let options = phobos_gpu::GpuOptions {
            precision: phobos_gpu::Precision::Fast,
            ..phobos_gpu::GpuOptions::for_kernel(&kernel)
        };
        let compiled = phobos_gpu::compile(&kernel, &options).expect("lowers");
        let blocks = (n as u32).div_ceil(4096);
        let mut module = compiled.module.clone();
        for (_, g) in module.global_variables.iter_mut() {
            if let Some(b) = &mut g.binding
                && b.binding == 0
            {
                b.binding = 2;
            }
        }
        let naga = ceiling_with(
            gpu,
            wgpu::ShaderSource::Naga(std::borrow::Cow::Owned(module)),
            bytes,
            false,
            wgpu::BufferUsages::STORAGE,
            Some([n as u32, blocks, 1, 1]),
            4096,
        );
        let text = compiled.wgsl().replace("@binding(0)", "@binding(2)");
        let wgsl = ceiling_with(
            gpu,
            wgsl_source(&text),
            bytes,
            false,
            wgpu::BufferUsages::STORAGE,
            Some([n as u32, blocks, 1, 1]),
            4096,
        );
        println!(
            "hash_fill B=4096 in the harness: naga module {:.0} GiB/s, its WGSL {:.0} GiB/s",
            gib(bytes, naga.0),
            gib(bytes, wgsl.0)
        );
        for precision in [Precision::Fast, Precision::Exact] {
            let args = [Arg::Tensor(Tensor::zeros(Scalar::U32, &[n]))];
            let prepared = gpu.prepare(&kernel, &args, precision).expect("prepare");
            let t = timestamps(gpu, |enc, ts| prepared.encode(enc, ts));
            println!(
                "hash_fill B=4096 through the runtime ({}): {:.0} GiB/s, workgroups {:?}",
                precision.name(),
                gib(bytes, t[t.len() / 2]),
                prepared.workgroups()
            );
        }
    }
    if std::env::var("PHOBOS_BENCH_ONLY_EXPERIMENTS").is_ok() {
        return;
    }
    let dropout = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../examples/dropout_rows.ph"
    ))
    .expect("examples/dropout_rows.ph");
    // The example's configuration, and smaller and larger blocks.
    let dropout = dropout.replace("@autotune(R in [16])", "@autotune(R in [4, 16, 64])");
    let (program, diags) = Program::parse("dropout_rows.ph", &dropout);
    assert!(diags.is_empty());
    let rows = n / 256;
    let x = Tensor::from_fn(Scalar::F32, &[rows, 256], |i| {
        Value::F32(1.0 + (i % 1000) as f32 / 1000.0)
    });
    let args = vec![
        Arg::Tensor(x.clone()),
        Arg::Tensor(Tensor::zeros(Scalar::F32, &[rows, 256])),
        Arg::Scalar(Value::I32(1)),
    ];
    let small_rows = 64.min(rows);
    let xs = Tensor::from_fn(Scalar::F32, &[small_rows, 256], |i| {
        Value::F32(1.0 + (i % 1000) as f32 / 1000.0)
    });
    let small = vec![
        Arg::Tensor(xs),
        Arg::Tensor(Tensor::zeros(Scalar::F32, &[small_rows, 256])),
        Arg::Scalar(Value::I32(1)),
    ];
    let mut table = Vec::new();
    for config in program.configs("dropout_rows") {
        for precision in [Precision::Exact, Precision::Fast] {
            table.push(measure(
                gpu,
                &program,
                "dropout_rows",
                &config,
                &args,
                &small,
                precision,
                2 * bytes,
                "copy",
            ));
        }
    }

    let (fills, diags) = Program::parse("fills.ph", FILLS);
    assert!(diags.is_empty());
    let small_n = 1 << 16;
    let hash = [Arg::Tensor(Tensor::zeros(Scalar::U32, &[n]))];
    let hash_small = [Arg::Tensor(Tensor::zeros(Scalar::U32, &[small_n]))];
    for config in fills.configs("hash_fill") {
        for precision in [Precision::Exact, Precision::Fast] {
            table.push(measure(
                gpu,
                &fills,
                "hash_fill",
                &config,
                &hash,
                &hash_small,
                precision,
                bytes,
                "zero",
            ));
        }
    }
    let uni = [
        Arg::Tensor(Tensor::zeros(Scalar::F32, &[n])),
        Arg::Scalar(Value::I32(1)),
    ];
    let uni_small = [
        Arg::Tensor(Tensor::zeros(Scalar::F32, &[small_n])),
        Arg::Scalar(Value::I32(1)),
    ];
    let uni_config = vec![("B".to_string(), 4096)];
    table.push(measure(
        gpu,
        &fills,
        "uniform_fill",
        &uni_config,
        &uni,
        &uni_small,
        Precision::Exact,
        bytes,
        "zero",
    ));

    println!("| what | GiB/s median (fastest) | ceiling of this run | % of ceiling | bits |");
    println!("|---|---|---|---|---|");
    println!(
        "| copy ceiling (WGSL, true shape) | {:.0} ({:.0}) | | | |",
        gib(2 * bytes, copy.0),
        gib(2 * bytes, copy.1)
    );
    println!(
        "| zero-fill ceiling (WGSL, true shape) | {:.0} ({:.0}) | | | |",
        gib(bytes, zero.0),
        gib(bytes, zero.1)
    );
    for r in &table {
        let (c, name) = if r.ceiling == "copy" {
            (gib(2 * bytes, copy.0), "copy")
        } else {
            (gib(bytes, zero.0), "zero fill")
        };
        let g = gib(r.bytes, r.median);
        println!(
            "| {} | {:.0} ({:.0}) | {name} {c:.0} | {:.1}% | {} |",
            r.what,
            g,
            gib(r.bytes, r.fastest),
            100.0 * g / c,
            r.exact_check
        );
    }
}
