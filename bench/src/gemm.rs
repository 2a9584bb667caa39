//! The GEMM ceilings of issue 29: hand-written WGSL matrix products on f16
//! inputs with f32 accumulation, against which `dot` is judged in the same
//! call.
//!
//! ```text
//! phobos-bench-gemm [SIZE ...]        (default 4096; M = N = K = SIZE)
//! ```
//!
//! - `coop direct` and `coop staged` (fast mode's ceiling through wgpu):
//!   cooperative matrices (`enable wgpu_cooperative_matrix`, 16x16x16,
//!   f16 x f16 -> f32), a workgroup of four subgroups of 32 computing a
//!   128 x 128 tile, each subgroup 64 x 64 in sixteen accumulators; the
//!   first loads its fragments from the storage buffers, the second stages
//!   32-wide K slices of A and B in workgroup memory first.
//! - `exact tiled` (exact mode's ceiling): a 16 x 16 workgroup computing a
//!   64 x 64 tile, 4 x 4 outputs per invocation, K slices of 16 in
//!   workgroup memory, f16 read as pairs from u32 words
//!   (`unpack2x16float`, exact), loaded through exact mode's SPIR-V
//!   (`phobos_gpu::spirv_exact`: every multiply and add rounded on its own,
//!   sequentially over K, as `dot` defines it); and the same WGSL as fast
//!   mode loads it, where the driver may fuse each multiply and add.
//!
//! The inputs are multiples of 1/8 in [-1, 1], so every partial sum is
//! exact in f32 whatever the order: each variant's output is compared with
//! the host's on every element of the rows [`checked_row`] picks, and a
//! variant that differs says so.

#[path = "common.rs"]
mod common;

use phobos_runtime::gpu::Gpu;
use std::borrow::Cow;

/// The workgroup tile of the cooperative kernels (rows and columns).
const COOP_TILE: u32 = 128;
/// The workgroup tile of the exact kernel.
const EXACT_TILE: u32 = 64;

fn main() {
    let sizes: Vec<u32> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("SIZE is a multiple of 128"))
        .collect();
    let sizes = if sizes.is_empty() { vec![4096] } else { sizes };
    if let Some(dir) = std::env::var_os("PHOBOS_GEMM_WGSL") {
        let dir = std::path::Path::new(&dir);
        for (name, src) in [
            ("coop_direct", coop_wgsl(sizes[0], false)),
            ("coop_staged", coop_wgsl(sizes[0], true)),
            ("exact_tiled", exact_wgsl(sizes[0])),
        ] {
            std::fs::write(dir.join(format!("{name}.wgsl")), src)
                .expect("PHOBOS_GEMM_WGSL is a directory");
        }
    }
    let gpu = Gpu::new().expect("a GPU");
    println!("# {}", gpu.describe());
    let shapes = gpu.cooperative_matrix();
    println!(
        "# cooperative matrices: {}",
        if shapes.is_empty() {
            "none".to_string()
        } else {
            shapes
                .iter()
                .map(|p| {
                    format!(
                        "{}x{}x{} {:?}x{:?}->{:?}",
                        p.m_size, p.n_size, p.k_size, p.ab_type, p.ab_type, p.cr_type
                    )
                })
                .collect::<Vec<_>>()
                .join(", ")
        }
    );
    let has_f16 = gpu.device().features().contains(wgpu::Features::SHADER_F16);
    let coop = has_f16
        && shapes.iter().any(|p| {
            (p.m_size, p.n_size, p.k_size) == (16, 16, 16)
                && p.ab_type == wgpu::CooperativeScalarType::F16
                && p.cr_type == wgpu::CooperativeScalarType::F32
        });
    println!("| kernel | M=N=K | median ms | fastest ms | TFLOP/s (median) | check |");
    println!("|---|---|---|---|---|---|");
    for &n in &sizes {
        assert!(
            n > 0 && n % COOP_TILE == 0,
            "SIZE {n} is not a multiple of {COOP_TILE}"
        );
        let problem = Problem::new(&gpu, n);
        if coop {
            problem.run(&gpu, "coop direct", &coop_wgsl(n, false), COOP_TILE, false);
            problem.run(&gpu, "coop staged", &coop_wgsl(n, true), COOP_TILE, false);
        } else {
            println!("| coop | {n} | n/a: no f16 16x16x16 cooperative matrices | | | |");
        }
        problem.run(&gpu, "exact tiled", &exact_wgsl(n), EXACT_TILE, true);
        problem.run(
            &gpu,
            "exact tiled, contracted (fast)",
            &exact_wgsl(n),
            EXACT_TILE,
            false,
        );
    }
}

/// Whether the host computes row `i` of the product to check it (every
/// 61st row and the last: a 4096-cube in about a second on one core, and
/// rows in every workgroup tile and subgroup quarter).
fn checked_row(i: usize) -> bool {
    i.is_multiple_of(61) || i % 128 == 127
}

/// One size's buffers and the host's product.
struct Problem {
    n: u32,
    a: wgpu::Buffer,
    b: wgpu::Buffer,
    c: wgpu::Buffer,
    want: Vec<u8>,
}

impl Problem {
    fn new(gpu: &Gpu, n: u32) -> Problem {
        let len = (n as usize) * (n as usize);
        // Multiples of 1/8 in [-1, 1]: exact in f16, every sum exact in f32.
        let value = |i: usize, salt: usize| {
            let h = (i.wrapping_mul(2_654_435_761) ^ salt).wrapping_mul(40_503) >> 7;
            ((h % 17) as f32 - 8.0) / 8.0
        };
        let a: Vec<f32> = (0..len).map(|i| value(i, 1)).collect();
        let b: Vec<f32> = (0..len).map(|i| value(i, 2)).collect();
        let halves = |v: &[f32]| -> Vec<u8> {
            v.iter()
                .flat_map(|x| half::f16::from_f32(*x).to_bits().to_le_bytes())
                .collect()
        };
        let nn = n as usize;
        let mut want = vec![0f32; len];
        for i in (0..nn).filter(|i| checked_row(*i)) {
            let row = &mut want[i * nn..(i + 1) * nn];
            for k in 0..nn {
                let x = a[i * nn + k];
                for (j, w) in row.iter_mut().enumerate() {
                    *w += x * b[k * nn + j];
                }
            }
        }
        let upload = |bytes: &[u8]| {
            let buf = common::storage(gpu, bytes.len() as u64);
            gpu.queue().write_buffer(&buf, 0, bytes);
            buf
        };
        Problem {
            n,
            a: upload(&halves(&a)),
            b: upload(&halves(&b)),
            c: common::storage(gpu, 4 * len as u64),
            want: want.iter().flat_map(|x| x.to_le_bytes()).collect(),
        }
    }

    /// Times `wgsl` over the product and checks its output.
    fn run(&self, gpu: &Gpu, name: &str, wgsl: &str, tile: u32, exact: bool) {
        let n = self.n;
        let scope = gpu.device().push_error_scope(wgpu::ErrorFilter::Validation);
        let pipeline = pipeline(gpu, wgsl, exact);
        if let Some(e) = pollster::block_on(scope.pop()) {
            println!("| {name} | {n} | failed: {e} | | | |");
            return;
        }
        let pipeline = match pipeline {
            Ok(p) => p,
            Err(e) => {
                println!("| {name} | {n} | failed: {e} | | | |");
                return;
            }
        };
        let bind = gpu.device().create_bind_group(&wgpu::BindGroupDescriptor {
            label: None,
            layout: &pipeline.get_bind_group_layout(0),
            entries: &[entry(0, &self.a), entry(1, &self.b), entry(2, &self.c)],
        });
        let bytes = self.want.len() as u64;
        common::poison(gpu, &self.c, bytes);
        let t = common::time_pass(gpu, &pipeline, |pass| {
            pass.set_bind_group(0, &bind, &[]);
            pass.dispatch_workgroups(n / tile, n / tile, 1);
        });
        let mut got = Vec::new();
        common::read_back(gpu, &self.c, bytes, &mut got);
        let row = 4 * n as usize;
        let bad: usize = (0..n as usize)
            .filter(|i| checked_row(*i))
            .map(|i| {
                let r = i * row..(i + 1) * row;
                common::differing(&got[r.clone()], &self.want[r], 4)
            })
            .sum();
        if bad > 0 && std::env::var_os("PHOBOS_GEMM_SHOW").is_some() {
            let f =
                |v: &[u8], i: usize| f32::from_le_bytes(v[4 * i..4 * i + 4].try_into().unwrap());
            for i in [0, 1, 2, n as usize, 1000] {
                eprintln!("  C[{i}]: got {} want {}", f(&got, i), f(&self.want, i));
            }
        }
        let flop = 2.0 * f64::from(n).powi(3);
        let check = match bad {
            0 => "exact on every checked row".to_string(),
            k => format!("**{k} elements differ**"),
        };
        println!(
            "| {name} | {n} | {:.4} | {:.4} | {:.1} | {check} |",
            t[t.len() / 2] * 1e3,
            t[0] * 1e3,
            flop / t[t.len() / 2] / 1e12
        );
    }
}

/// The pipeline of `wgsl`: as WGSL through wgpu (fast), or as exact mode's
/// SPIR-V through passthrough.
fn pipeline(gpu: &Gpu, wgsl: &str, exact: bool) -> Result<wgpu::ComputePipeline, String> {
    let device = gpu.device();
    let module = if exact {
        let module = naga::front::wgsl::parse_str(wgsl).map_err(|e| e.emit_to_string(wgsl))?;
        let info = naga::valid::Validator::new(
            naga::valid::ValidationFlags::all(),
            naga::valid::Capabilities::SHADER_FLOAT16_IN_FLOAT32,
        )
        .validate(&module)
        .map_err(|e| format!("{e:?}"))?;
        let options = phobos_gpu::GpuOptions {
            precision: phobos_gpu::Precision::Exact,
            ..Default::default()
        };
        let words = phobos_gpu::spirv(&module, &info, &options);
        if let Some(path) = std::env::var_os("PHOBOS_GEMM_SPIRV") {
            let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
            std::fs::write(path, bytes).map_err(|e| e.to_string())?;
        }
        let entry = wgpu::PassthroughShaderEntryPoint {
            name: Cow::Borrowed(phobos_gpu::ENTRY_POINT),
            workgroup_size: (16, 16, 1),
        };
        // SAFETY: naga's SPIR-V of a module naga validated, with exact
        // mode's decorations only, as the runtime loads its kernels.
        unsafe {
            device.create_shader_module_passthrough(wgpu::ShaderModuleDescriptorPassthrough {
                label: Some("gemm exact"),
                entry_points: Cow::Owned(vec![entry]),
                spirv: Some(Cow::Owned(words)),
                ..Default::default()
            })
        }
    } else {
        device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("gemm"),
            source: wgpu::ShaderSource::Wgsl(Cow::Borrowed(wgsl)),
        })
    };
    let storage = common::storage_entry;
    let bindings = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some("gemm"),
        entries: &[storage(0, true), storage(1, true), storage(2, false)],
    });
    let layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: Some("gemm"),
        bind_group_layouts: &[Some(&bindings)],
        immediate_size: 0,
    });
    Ok(
        device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some("gemm"),
            layout: Some(&layout),
            module: &module,
            entry_point: Some(phobos_gpu::ENTRY_POINT),
            compilation_options: Default::default(),
            cache: None,
        }),
    )
}

/// The cooperative-matrix kernel for `n`: each of four subgroups owns a
/// 64 x 64 quarter of the workgroup's 128 x 128 tile (sixteen 16 x 16
/// accumulators); `staged` copies each 32-wide K slice of A and B into
/// workgroup memory first.
fn coop_wgsl(n: u32, staged: bool) -> String {
    let mut s = String::from("enable f16;\nenable wgpu_cooperative_matrix;\n");
    let elem = if staged { "vec4<f16>" } else { "f16" };
    s += &format!(
        "@group(0) @binding(0) var<storage, read> a: array<{elem}>;\n\
         @group(0) @binding(1) var<storage, read> b: array<{elem}>;\n\
         @group(0) @binding(2) var<storage, read_write> c: array<f32>;\n\
         const N: u32 = {n}u;\n"
    );
    if staged {
        s += "var<workgroup> sa: array<f16, 4096>;\nvar<workgroup> sb: array<f16, 4096>;\n";
    }
    s += "@compute @workgroup_size(128)\n\
          fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {\n\
          \x20 let sg = li / 32u;\n\
          \x20 let r0 = wg.y * 128u + (sg / 2u) * 64u;\n\
          \x20 let c0 = wg.x * 128u + (sg % 2u) * 64u;\n";
    for i in 0..4 {
        for j in 0..4 {
            s += &format!("  var c{i}{j} = coop_mat16x16<f32, C>();\n");
        }
    }
    let step = if staged { 32 } else { 16 };
    s += &format!("  for (var k = 0u; k < N; k += {step}u) {{\n");
    if staged {
        // 4096 halves of A (128 rows x 32) and of B (32 rows x 128), eight
        // vec4 loads of each per invocation.
        s += "    for (var t = 0u; t < 8u; t++) {\n\
              \x20     let q = t * 128u + li;\n\
              \x20     let ar = q / 8u; let ac = (q % 8u) * 4u;\n\
              \x20     let va = a[((wg.y * 128u + ar) * N + k + ac) / 4u];\n\
              \x20     sa[ar * 32u + ac] = va.x; sa[ar * 32u + ac + 1u] = va.y;\n\
              \x20     sa[ar * 32u + ac + 2u] = va.z; sa[ar * 32u + ac + 3u] = va.w;\n\
              \x20     let br = q / 32u; let bc = (q % 32u) * 4u;\n\
              \x20     let vb = b[((k + br) * N + wg.x * 128u + bc) / 4u];\n\
              \x20     sb[br * 128u + bc] = vb.x; sb[br * 128u + bc + 1u] = vb.y;\n\
              \x20     sb[br * 128u + bc + 2u] = vb.z; sb[br * 128u + bc + 3u] = vb.w;\n\
              \x20   }\n\
              \x20   workgroupBarrier();\n\
              \x20   for (var kk = 0u; kk < 32u; kk += 16u) {\n";
        let ar = "(sg / 2u) * 64u";
        let bc = "(sg % 2u) * 64u";
        for i in 0..4 {
            s += &format!(
                "      let a{i} = coopLoadT<coop_mat16x16<f16, A>>(&sa[({ar} + {}u) * 32u + kk], 32u);\n",
                16 * i
            );
        }
        for j in 0..4 {
            s += &format!(
                "      let b{j} = coopLoadT<coop_mat16x16<f16, B>>(&sb[kk * 128u + {bc} + {}u], 128u);\n",
                16 * j
            );
        }
    } else {
        s += "    {\n";
        for i in 0..4 {
            s += &format!(
                "      let a{i} = coopLoadT<coop_mat16x16<f16, A>>(&a[(r0 + {}u) * N + k], N);\n",
                16 * i
            );
        }
        for j in 0..4 {
            s += &format!(
                "      let b{j} = coopLoadT<coop_mat16x16<f16, B>>(&b[k * N + c0 + {}u], N);\n",
                16 * j
            );
        }
    }
    for i in 0..4 {
        for j in 0..4 {
            s += &format!("      c{i}{j} = coopMultiplyAdd(a{i}, b{j}, c{i}{j});\n");
        }
    }
    s += "    }\n";
    if staged {
        s += "    workgroupBarrier();\n";
    }
    s += "  }\n";
    for i in 0..4 {
        for j in 0..4 {
            s += &format!(
                "  coopStoreT(c{i}{j}, &c[(r0 + {}u) * N + c0 + {}u], N);\n",
                16 * i,
                16 * j
            );
        }
    }
    s += "}\n";
    s
}

/// The exact kernel for `n`: 4 x 4 outputs an invocation, each a sum over
/// K in order, `acc = acc + a * b` with the product and the sum rounded
/// separately (exact mode's `NoContraction`).
fn exact_wgsl(n: u32) -> String {
    format!(
        "@group(0) @binding(0) var<storage, read> a: array<u32>; // two f16 a word
@group(0) @binding(1) var<storage, read> b: array<u32>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
const N: u32 = {n}u;
var<workgroup> sa: array<f32, 1024>; // 64 rows x 16
var<workgroup> sb: array<f32, 1024>; // 16 rows x 64
@compute @workgroup_size(16, 16)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_id) l: vec3<u32>) {{
  let li = l.y * 16u + l.x;
  var acc: array<array<f32, 4>, 4>;
  for (var k = 0u; k < N; k += 16u) {{
    for (var t = 0u; t < 2u; t++) {{
      let w = t * 256u + li;
      let ar = w / 8u; let ac = (w % 8u) * 2u;
      let va = unpack2x16float(a[((wg.y * 64u + ar) * N + k + ac) / 2u]);
      sa[ar * 16u + ac] = va.x; sa[ar * 16u + ac + 1u] = va.y;
      let br = w / 32u; let bc = (w % 32u) * 2u;
      let vb = unpack2x16float(b[((k + br) * N + wg.x * 64u + bc) / 2u]);
      sb[br * 64u + bc] = vb.x; sb[br * 64u + bc + 1u] = vb.y;
    }}
    workgroupBarrier();
    for (var kk = 0u; kk < 16u; kk++) {{
      var av: array<f32, 4>;
      var bv: array<f32, 4>;
      for (var i = 0u; i < 4u; i++) {{
        av[i] = sa[(l.y + 16u * i) * 16u + kk];
        bv[i] = sb[kk * 64u + l.x + 16u * i];
      }}
      for (var i = 0u; i < 4u; i++) {{
        for (var j = 0u; j < 4u; j++) {{
          acc[i][j] = acc[i][j] + av[i] * bv[j];
        }}
      }}
    }}
    workgroupBarrier();
  }}
  for (var i = 0u; i < 4u; i++) {{
    for (var j = 0u; j < 4u; j++) {{
      c[(wg.y * 64u + l.y + 16u * i) * N + wg.x * 64u + l.x + 16u * j] = acc[i][j];
    }}
  }}
}}
"
    )
}

fn entry(binding: u32, buffer: &wgpu::Buffer) -> wgpu::BindGroupEntry<'_> {
    wgpu::BindGroupEntry {
        binding,
        resource: buffer.as_entire_binding(),
    }
}
