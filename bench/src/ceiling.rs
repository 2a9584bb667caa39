//! The ceilings every GPU benchmark measures against (issue 11): the
//! fastest zero fill and copy known to us through wgpu, measured in the same
//! run as the rows they judge, and the ablations that say why the kernels
//! the harness used before were slower.
//!
//! The shape (PERFORMANCE.md, "The kernel shape that reaches it"): one
//! `vec4<u32>` store (zero fill) or load and store (copy) per invocation,
//! no loop, `@workgroup_size(256)`, a 2-D grid of 512 x ceil(N / 2^17)
//! workgroups for N vec4 elements (512 x 512 for 1 GiB), the index
//! `(wg.y * 512 + wg.x) * 256 + local_index`, an early return past the end,
//! and buffers created `STORAGE | COPY_SRC`. An output larger than one
//! storage binding is bound in pieces of at most 1 GiB, each piece one
//! dispatch of that shape, all in one timed pass.
//!
//! Every binary includes this file by path next to `common.rs`
//! (`#[path = "ceiling.rs"] mod ceiling;`), so that there is one ceiling
//! kernel in the benchmarks, not one per binary.

use crate::common::{gib, timestamps};
use phobos_runtime::gpu::Gpu;
use std::collections::BTreeMap;
use std::num::NonZeroU64;

/// The zero fill of the true shape.
pub const ZERO: &str = "
@group(0) @binding(1) var<storage, read_write> dst: array<vec4<u32>>;
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
  let i = (wg.y * 512u + wg.x) * 256u + li;
  if i >= arrayLength(&dst) { return; }
  dst[i] = vec4<u32>(0u);
}
";

/// The copy of the true shape: `dst = src`.
pub const COPY: &str = "
@group(0) @binding(0) var<storage, read> src: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read_write> dst: array<vec4<u32>>;
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
  let i = (wg.y * 512u + wg.x) * 256u + li;
  if i >= arrayLength(&dst) { return; }
  dst[i] = src[i];
}
";

/// The zero fill the harness used before issue 11 (ablations only): the
/// index from `global_invocation_id` and `num_workgroups`, so any grid
/// shape works, and the store inside an `if`.
const ZERO_OLD: &str = "
@group(0) @binding(1) var<storage, read_write> dst: array<vec4<u32>>;
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) g: vec3<u32>, @builtin(num_workgroups) n: vec3<u32>) {
  let i = g.x + g.y * n.x * 256u;
  if i < arrayLength(&dst) { dst[i] = vec4<u32>(0u); }
}
";

/// The copy the harness used before issue 11 (ablations only).
const COPY_OLD: &str = "
@group(0) @binding(0) var<storage, read> src: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read_write> dst: array<vec4<u32>>;
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) g: vec3<u32>, @builtin(num_workgroups) n: vec3<u32>) {
  let i = g.x + g.y * n.x * 256u;
  if i < arrayLength(&dst) { dst[i] = src[i]; }
}
";

/// The true zero fill with a loop: 16 vec4 stores per invocation, each
/// step a whole workgroup's 4 KiB (coalesced), 16 times fewer workgroups.
const ZERO_LOOP: &str = "
@group(0) @binding(1) var<storage, read_write> dst: array<vec4<u32>>;
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
  let base = (wg.y * 512u + wg.x) * 4096u + li;
  for (var k = 0u; k < 16u; k++) {
    let i = base + k * 256u;
    if i >= arrayLength(&dst) { return; }
    dst[i] = vec4<u32>(0u);
  }
}
";

/// The true copy with the same loop.
const COPY_LOOP: &str = "
@group(0) @binding(0) var<storage, read> src: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read_write> dst: array<vec4<u32>>;
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
  let base = (wg.y * 512u + wg.x) * 4096u + li;
  for (var k = 0u; k < 16u; k++) {
    let i = base + k * 256u;
    if i >= arrayLength(&dst) { return; }
    dst[i] = src[i];
  }
}
";

/// The true zero fill with 4-byte stores: one `u32` per invocation, four
/// times the workgroups.
const ZERO_SCALAR: &str = "
@group(0) @binding(1) var<storage, read_write> dst: array<u32>;
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
  let i = (wg.y * 512u + wg.x) * 256u + li;
  if i >= arrayLength(&dst) { return; }
  dst[i] = 0u;
}
";

/// How the workgroups of one piece are laid out, for `g` workgroups.
#[derive(Clone, Copy, Debug)]
enum Grid {
    /// 512 x ceil(g / 512): the true shape (its kernels hard-code the 512).
    Rows512,
    /// min(g, 65535) x ceil(g / 65535), as the harness dispatched before
    /// issue 11: at 2^18 workgroups (1 GiB of vec4 stores) that is
    /// 65535 x 5, a quarter more workgroups than needed, all idle.
    Split65535,
    /// The fewest rows of at most 65535, as even as they go:
    /// ceil(g / y) x y for y = ceil(g / 65535), fewer than y idle.
    Even,
}

impl Grid {
    fn of(self, g: u32) -> [u32; 2] {
        let g = g.max(1);
        match self {
            Grid::Rows512 => [512, g.div_ceil(512)],
            Grid::Split65535 => [g.min(65535), g.div_ceil(65535)],
            Grid::Even => {
                let y = g.div_ceil(65535);
                [g.div_ceil(y), y]
            }
        }
    }
}

/// One kernel, grid and buffer usage: a ceiling or one of its ablations.
pub struct Variant {
    /// What this row is, for the table.
    pub name: &'static str,
    /// What it changes against which other row.
    pub isolates: &'static str,
    wgsl: &'static str,
    copy: bool,
    usage: wgpu::BufferUsages,
    grid: Grid,
    /// Output bytes one workgroup writes.
    group_bytes: u64,
}

const STORAGE: wgpu::BufferUsages = wgpu::BufferUsages::STORAGE;
const SRC: wgpu::BufferUsages = wgpu::BufferUsages::COPY_SRC;
const DST: wgpu::BufferUsages = wgpu::BufferUsages::COPY_DST;

/// The zero-fill ceiling.
pub const TRUE_ZERO: Variant = Variant {
    name: "zero fill, true shape",
    isolates: "the ceiling: vec4 store, no loop, 512 x N/2^17 grid, STORAGE + COPY_SRC",
    wgsl: ZERO,
    copy: false,
    usage: STORAGE.union(SRC),
    grid: Grid::Rows512,
    group_bytes: 256 * 16,
};

/// The copy ceiling.
pub const TRUE_COPY: Variant = Variant {
    name: "copy, true shape",
    isolates: "the ceiling: vec4 load + store, no loop, 512 x N/2^17 grid, STORAGE + COPY_SRC",
    wgsl: COPY,
    copy: true,
    usage: STORAGE.union(SRC),
    grid: Grid::Rows512,
    group_bytes: 256 * 16,
};

/// The ablations of the zero fill and the copy: each row changes one
/// factor of the true shape (or of the row it names), so that one run says
/// which of usage flags, kernel text, grid, loop and store width costs what.
/// The true shape comes first and again last: the spread between the two
/// is the run's noise.
pub fn ablations() -> Vec<Variant> {
    let v = |name, isolates, wgsl, copy, usage, grid, group_bytes| Variant {
        name,
        isolates,
        wgsl,
        copy,
        usage,
        grid,
        group_bytes,
    };
    let vec4 = 256 * 16;
    vec![
        TRUE_ZERO,
        v(
            "zero: usage STORAGE",
            "drops COPY_SRC (the old phobos-bench-gpu ceiling's buffers)",
            ZERO,
            false,
            STORAGE,
            Grid::Rows512,
            vec4,
        ),
        v(
            "zero: usage STORAGE + COPY_DST",
            "COPY_DST instead of COPY_SRC (wgpu-core adds COPY_DST to every buffer itself, for zero-initialisation)",
            ZERO,
            false,
            STORAGE.union(DST),
            Grid::Rows512,
            vec4,
        ),
        v(
            "zero: usage STORAGE + COPY_SRC + COPY_DST",
            "adds COPY_DST (the runtime's tensor buffers, the old tandem-gpu ceiling's)",
            ZERO,
            false,
            STORAGE.union(SRC).union(DST),
            Grid::Rows512,
            vec4,
        ),
        v(
            "zero: old kernel text, 512 x N/2^17 grid",
            "the index from global_invocation_id and num_workgroups, store inside an if",
            ZERO_OLD,
            false,
            STORAGE.union(SRC),
            Grid::Rows512,
            vec4,
        ),
        v(
            "zero: old kernel text, old grid 65535 x ceil(G/65535)",
            "against the row above: the old grid (at 1 GiB 65535 x 5, a quarter of the workgroups idle)",
            ZERO_OLD,
            false,
            STORAGE.union(SRC),
            Grid::Split65535,
            vec4,
        ),
        v(
            "zero: old kernel text, even wide grid",
            "against the row above: the same 1-D-like wide rows without the idle workgroups",
            ZERO_OLD,
            false,
            STORAGE.union(SRC),
            Grid::Even,
            vec4,
        ),
        v(
            "zero: 16 vec4 stores per invocation in a loop",
            "a loop (coalesced 4 KiB steps), 16 times fewer workgroups",
            ZERO_LOOP,
            false,
            STORAGE.union(SRC),
            Grid::Rows512,
            16 * vec4,
        ),
        v(
            "zero: one u32 store per invocation",
            "4-byte stores instead of 16, four times the workgroups",
            ZERO_SCALAR,
            false,
            STORAGE.union(SRC),
            Grid::Rows512,
            256 * 4,
        ),
        v(
            "zero: the old phobos-bench-gpu ceiling",
            "old text, old grid, usage STORAGE: should reproduce its old figure (3512 on the H200)",
            ZERO_OLD,
            false,
            STORAGE,
            Grid::Split65535,
            vec4,
        ),
        v(
            "zero: the old phobos-bench-tandem-gpu ceiling",
            "old text, old grid, usage STORAGE + COPY_SRC + COPY_DST",
            ZERO_OLD,
            false,
            STORAGE.union(SRC).union(DST),
            Grid::Split65535,
            vec4,
        ),
        Variant {
            name: "zero fill, true shape (again)",
            isolates: "the first row measured again: the run's noise",
            ..TRUE_ZERO
        },
        TRUE_COPY,
        v(
            "copy: usage STORAGE",
            "drops COPY_SRC (the old copy ceilings' buffers)",
            COPY,
            true,
            STORAGE,
            Grid::Rows512,
            vec4,
        ),
        v(
            "copy: usage STORAGE + COPY_SRC + COPY_DST",
            "adds COPY_DST (the runtime's tensor buffers)",
            COPY,
            true,
            STORAGE.union(SRC).union(DST),
            Grid::Rows512,
            vec4,
        ),
        v(
            "copy: old kernel text, 512 x N/2^17 grid",
            "the index from global_invocation_id and num_workgroups, store inside an if",
            COPY_OLD,
            true,
            STORAGE.union(SRC),
            Grid::Rows512,
            vec4,
        ),
        v(
            "copy: old kernel text, old grid 65535 x ceil(G/65535)",
            "against the row above: the old grid",
            COPY_OLD,
            true,
            STORAGE.union(SRC),
            Grid::Split65535,
            vec4,
        ),
        v(
            "copy: old kernel text, even wide grid",
            "against the row above: wide rows without the idle workgroups",
            COPY_OLD,
            true,
            STORAGE.union(SRC),
            Grid::Even,
            vec4,
        ),
        v(
            "copy: 16 vec4 loads + stores per invocation in a loop",
            "a loop (coalesced 4 KiB steps), 16 times fewer workgroups",
            COPY_LOOP,
            true,
            STORAGE.union(SRC),
            Grid::Rows512,
            16 * vec4,
        ),
        v(
            "copy: the old copy ceiling",
            "old text, old grid, usage STORAGE: should reproduce its old figure (3712 on the H200)",
            COPY_OLD,
            true,
            STORAGE,
            Grid::Split65535,
            vec4,
        ),
        Variant {
            name: "copy, true shape (again)",
            isolates: "the copy measured again: the run's noise",
            ..TRUE_COPY
        },
    ]
}

/// The most bytes of one piece: 1 GiB, or the largest power of two that
/// one storage binding holds where that is less (the H200's bindings hold
/// 2^31 - 4 bytes, so 2 GiB is two pieces).
fn piece_bytes(gpu: &Gpu) -> u64 {
    let max = gpu.max_binding().max(256);
    (1u64 << 30).min(1u64 << (63 - max.leading_zeros()))
}

/// Median and fastest seconds of `variant` writing `bytes` (and reading as
/// many when it copies), on buffers made for this measurement.
pub fn measure(gpu: &Gpu, variant: &Variant, bytes: u64) -> (f64, f64) {
    let device = gpu.device();
    let bytes = bytes.next_multiple_of(16).max(16);
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some(variant.name),
        source: wgpu::ShaderSource::Wgsl(variant.wgsl.into()),
    });
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some(variant.name),
        layout: None,
        module: &module,
        entry_point: Some("main"),
        compilation_options: Default::default(),
        cache: None,
    });
    let buffer = |label| {
        device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size: bytes,
            usage: variant.usage,
            mapped_at_creation: false,
        })
    };
    let dst = buffer("dst");
    let src = variant.copy.then(|| buffer("src"));
    let layout = pipeline.get_bind_group_layout(0);
    let piece = piece_bytes(gpu);
    let mut pieces = Vec::new();
    let mut off = 0;
    while off < bytes {
        let len = (bytes - off).min(piece);
        let range = |buffer| {
            wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                buffer,
                offset: off,
                size: NonZeroU64::new(len),
            })
        };
        let mut entries = vec![wgpu::BindGroupEntry {
            binding: 1,
            resource: range(&dst),
        }];
        if let Some(src) = &src {
            entries.push(wgpu::BindGroupEntry {
                binding: 0,
                resource: range(src),
            });
        }
        let bind = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: None,
            layout: &layout,
            entries: &entries,
        });
        let groups = len.div_ceil(variant.group_bytes) as u32;
        pieces.push((bind, variant.grid.of(groups)));
        off += len;
    }
    let t = timestamps(gpu, |enc, ts| {
        let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some(variant.name),
            timestamp_writes: ts.map(|(q, i)| wgpu::ComputePassTimestampWrites {
                query_set: q,
                beginning_of_pass_write_index: Some(i),
                end_of_pass_write_index: Some(i + 1),
            }),
        });
        pass.set_pipeline(&pipeline);
        for (bind, [x, y]) in &pieces {
            pass.set_bind_group(0, bind, &[]);
            pass.dispatch_workgroups(*x, *y, 1);
        }
    });
    (t[t.len() / 2], t[0])
}

/// The zero-fill and copy ceilings of this run, measured once per byte
/// count.
pub struct Ceilings<'g> {
    gpu: &'g Gpu,
    measured: BTreeMap<(bool, u64), (f64, f64)>,
}

impl<'g> Ceilings<'g> {
    pub fn new(gpu: &'g Gpu) -> Ceilings<'g> {
        Ceilings {
            gpu,
            measured: BTreeMap::new(),
        }
    }

    /// Median and fastest seconds of the zero fill of `bytes`.
    pub fn zero(&mut self, bytes: u64) -> (f64, f64) {
        let gpu = self.gpu;
        *self
            .measured
            .entry((false, bytes))
            .or_insert_with(|| measure(gpu, &TRUE_ZERO, bytes))
    }

    /// Median and fastest seconds of the copy of `bytes` (as many read as
    /// written: GiB/s of it count `2 * bytes`).
    #[allow(dead_code)] // not every binary copies
    pub fn copy(&mut self, bytes: u64) -> (f64, f64) {
        let gpu = self.gpu;
        *self
            .measured
            .entry((true, bytes))
            .or_insert_with(|| measure(gpu, &TRUE_COPY, bytes))
    }
}

/// Measures every ablation over `bytes` of output and prints them as a
/// table: GiB/s of bytes read + written, and each as a share of the true
/// shape's first measurement of the same kind.
#[allow(dead_code)] // not every binary prints them
pub fn print_ablations(gpu: &Gpu, bytes: u64) {
    println!(
        "Experiments: the ceilings' ablations over {bytes} bytes of output (each row changes one factor; \
         GiB/s of bytes read + written, median (fastest) of the run's timestamps)\n"
    );
    println!("| experiment | what it isolates | GiB/s median (fastest) | % of the true shape |");
    println!("|---|---|---|---|");
    let mut base: [Option<f64>; 2] = [None, None];
    for v in ablations() {
        let moved = if v.copy { 2 * bytes } else { bytes };
        let (median, fastest) = measure(gpu, &v, bytes);
        let g = gib(moved, median);
        let b = *base[usize::from(v.copy)].get_or_insert(g);
        println!(
            "| {} | {} | {g:.0} ({:.0}) | {:.1}% |",
            v.name,
            v.isolates,
            gib(moved, fastest),
            100.0 * g / b
        );
    }
    println!();
}
