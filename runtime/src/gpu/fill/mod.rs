//! Tandem fills on the GPU: the modules of `phobos_gpu::tandem`, dispatched
//! in pieces that respect the device's limits.
//!
//! A fill of elements `start .. start + count` is the output of the stream
//! blocks that hold their draws (element `i` reads block `i / per_block`),
//! cut at the edges. Pieces: at most `max_storage_buffer_binding_size`
//! bytes of output (at a 256-byte aligned binding offset) per dispatch, each
//! dispatch a 2-D grid of workgroups when it has more than 65,535 of them.
//! Bounded fills follow each piece's fill dispatch with its misses dispatch
//! in the same pass (wgpu orders the two), with one miss counter per piece
//! cleared before the pass; choice binds the alias table and `normal_f64`
//! the ziggurat table (the reference's, checked against SPEC.md's checksum),
//! uploaded once per fill (`plan.rs` has the geometry and the parameters).
//! The f64 maps need `SHADER_F64`; a device without it is refused, naming
//! `--backend cpu`.

mod plan;

pub use plan::fill_map;

use super::{Gpu, GpuError};
use phobos_gpu::tandem::{
    FILL_AUX_BINDING, FILL_LIST_BINDING, FILL_OUTPUT_BINDING, FILL_ZIGGURAT_BINDING, FillMap,
    FillParams, Kernel, ZIGGURAT_TABLE_LEN,
};
use phobos_tandem::{Dist, Tandem};
use plan::{Shape, span};
use std::borrow::Cow;
use std::sync::Arc;

pub(crate) struct FillPipeline {
    fill: wgpu::ComputePipeline,
    misses: Option<wgpu::ComputePipeline>,
    layout: wgpu::BindGroupLayout,
}

/// Host pieces: at most this many bytes of scratch per dispatch.
const HOST_PIECE_BYTES: u64 = 256 << 20;

/// The buffers a fill's dispatches share besides the output: the miss
/// counters (one per piece) and list, the alias table, the ziggurat table.
struct Aux {
    counters: Option<wgpu::Buffer>,
    list: Option<wgpu::Buffer>,
    table: Option<wgpu::Buffer>,
    ziggurat: Option<wgpu::Buffer>,
}

/// FNV-1a of the ziggurat table's `x` then `f` bits (SPEC.md section 10).
const ZIGGURAT_CHECKSUM: u64 = 0x32c7_07f6_1b23_0e32;

/// The reference's ziggurat table as the GPU reads it: `x[0..=1024]` then
/// `f[0..=1024]`, little-endian f64 bits, checked against SPEC.md's
/// checksum.
fn ziggurat_bytes() -> Result<Vec<u8>, GpuError> {
    let t = phobos_tandem::ziggurat::table();
    let values: Vec<u64> = t.x.iter().chain(t.f.iter()).map(|v| v.to_bits()).collect();
    debug_assert_eq!(values.len(), ZIGGURAT_TABLE_LEN);
    let sum = phobos_tandem::kat::fnv1a64(values.iter().copied());
    if sum != ZIGGURAT_CHECKSUM {
        return Err(GpuError::Fill(format!(
            "the reference's ziggurat table has checksum {sum:016x}, not SPEC.md's \
             {ZIGGURAT_CHECKSUM:016x}"
        )));
    }
    Ok(values.iter().flat_map(|v| v.to_le_bytes()).collect())
}

struct Dispatch {
    bind: wgpu::BindGroup,
    groups: [u32; 3],
    miss_groups: Option<[u32; 3]>,
}

/// A fill recorded as dispatches on one buffer, ready to encode (several
/// times, for benchmarks).
pub struct PreparedFill {
    pipeline: Arc<FillPipeline>,
    dispatches: Vec<Dispatch>,
    aux: Aux,
}

fn encode_pass(
    encoder: &mut wgpu::CommandEncoder,
    pipeline: &FillPipeline,
    aux: &Aux,
    dispatches: &[Dispatch],
    timestamps: Option<(&wgpu::QuerySet, u32)>,
) {
    if let Some(c) = &aux.counters {
        encoder.clear_buffer(c, 0, None);
    }
    let timestamp_writes = timestamps.map(|(query_set, first)| wgpu::ComputePassTimestampWrites {
        query_set,
        beginning_of_pass_write_index: Some(first),
        end_of_pass_write_index: Some(first + 1),
    });
    let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
        label: Some("tandem fill"),
        timestamp_writes,
    });
    for d in dispatches {
        pass.set_pipeline(&pipeline.fill);
        pass.set_bind_group(0, &d.bind, &[]);
        let [x, y, z] = d.groups;
        pass.dispatch_workgroups(x, y, z);
        if let (Some(misses), Some([x, y, z])) = (&pipeline.misses, d.miss_groups) {
            pass.set_pipeline(misses);
            pass.dispatch_workgroups(x, y, z);
        }
    }
}

impl PreparedFill {
    /// The dispatches in one compute pass (after clearing the miss
    /// counters), with timestamps at the pass's start and end when given.
    pub fn encode(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        timestamps: Option<(&wgpu::QuerySet, u32)>,
    ) {
        encode_pass(
            encoder,
            &self.pipeline,
            &self.aux,
            &self.dispatches,
            timestamps,
        );
    }

    /// Fill dispatches in the fill (each bounded one followed by its misses
    /// dispatch).
    pub fn dispatch_count(&self) -> usize {
        self.dispatches.len()
    }
}

impl Gpu {
    fn fill_shader(
        &self,
        map: FillMap,
        kernel: Kernel,
        k: u32,
    ) -> Result<wgpu::ShaderModule, GpuError> {
        let label = format!("tandem {} {kernel:?}", map.name());
        if map.needs_f64() && !self.device.features().contains(wgpu::Features::SHADER_F64) {
            return Err(GpuError::NotExact(format!(
                "{} has no f64 arithmetic (SHADER_F64), which the {} fill needs; use --backend \
                 cpu",
                self.describe(),
                map.name()
            )));
        }
        // Exact mode's SPIR-V where the device loads it unchanged. Without
        // passthrough, the integer maps give the same bits from the naga
        // module; the float maps need `NoContraction` and are refused.
        if self.can_run_exact() {
            // As kernels (`pipeline.rs`): lavapipe hangs on the branch, and
            // f64 checks the division where the device has it.
            let options = phobos_gpu::GpuOptions {
                precision: phobos_gpu::Precision::Exact,
                branch_fallback: !self.info.name.contains("llvmpipe"),
                wide_div: self.device.features().contains(wgpu::Features::SHADER_F64)
                    && std::env::var_os("PHOBOS_NARROW_DIV").is_none(),
                int64: self.fill_int64(),
                subgroup_shuffle: self.subgroup_shuffle(),
                ..Default::default()
            };
            let words = phobos_gpu::tandem::kernel_spirv(map, kernel, k, &options)
                .map_err(|e| GpuError::Lower(e.to_string()))?;
            if let Some(dir) = std::env::var_os("PHOBOS_DUMP_SPIRV") {
                super::pipeline::dump_spirv(
                    std::path::Path::new(&dir),
                    &format!("tandem_{}_{kernel:?}", map.name()),
                    map.workgroup_size(kernel, k),
                    &words,
                );
            }
            let entry = wgpu::PassthroughShaderEntryPoint {
                name: Cow::Borrowed(phobos_gpu::ENTRY_POINT),
                workgroup_size: (map.workgroup_size(kernel, k), 1, 1),
            };
            // SAFETY: naga's SPIR-V for a module naga validated, with only
            // the exact-mode decorations added (spirv-val checks it in tests).
            return Ok(unsafe {
                self.device.create_shader_module_passthrough(
                    wgpu::ShaderModuleDescriptorPassthrough {
                        label: Some(&label),
                        entry_points: Cow::Owned(vec![entry]),
                        spirv: Some(Cow::Owned(words)),
                        ..Default::default()
                    },
                )
            });
        }
        if map.needs_exact() {
            return Err(GpuError::NotExact(format!(
                "the {} fill needs exact mode, which cannot run here: {}; use --backend cpu",
                map.name(),
                self.exact_support()
                    .why_not()
                    .unwrap_or("no SPIR-V passthrough")
            )));
        }
        let (module, _) = match kernel {
            Kernel::Fill => phobos_gpu::tandem::fill_compiled(map, k),
            Kernel::Misses => phobos_gpu::tandem::misses_compiled(map),
        }
        .map_err(|e| GpuError::Lower(e.to_string()))?;
        Ok(self
            .device
            .create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some(&label),
                source: wgpu::ShaderSource::Naga(Cow::Owned(module)),
            }))
    }

    /// Whether the fill kernels form their 64-bit products with 64-bit
    /// integers (`GpuOptions::int64`): where the device has them, unless
    /// `PHOBOS_NO_INT64` is set (16-bit limbs then; the same bits).
    fn fill_int64(&self) -> bool {
        self.device
            .features()
            .contains(wgpu::Features::SHADER_INT64)
            && std::env::var_os("PHOBOS_NO_INT64").is_none()
    }

    /// The pipelines of `map` for a stream of chunks of `k` blocks (the
    /// workgroup size depends on both, [`FillMap::workgroup_size`]).
    fn fill_pipeline(&self, map: FillMap, k: u32) -> Result<Arc<FillPipeline>, GpuError> {
        let key = (map, map.workgroup_size(Kernel::Fill, k));
        if let Some(p) = self.fills.lock().unwrap().get(&key) {
            return Ok(p.clone());
        }
        let device = &self.device;
        let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
        let entry = |binding, ty| wgpu::BindGroupLayoutEntry {
            binding,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty,
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        };
        let rw = wgpu::BufferBindingType::Storage { read_only: false };
        let mut entries = vec![
            entry(
                phobos_gpu::UNIFORM_BINDING,
                wgpu::BufferBindingType::Uniform,
            ),
            entry(FILL_OUTPUT_BINDING, rw),
        ];
        if map.has_ziggurat() {
            entries.push(entry(
                FILL_ZIGGURAT_BINDING,
                wgpu::BufferBindingType::Storage { read_only: true },
            ));
        }
        if map.has_misses() {
            entries.push(entry(FILL_AUX_BINDING, rw));
            entries.push(entry(FILL_LIST_BINDING, rw));
        } else if map.has_table() {
            entries.push(entry(
                FILL_AUX_BINDING,
                wgpu::BufferBindingType::Storage { read_only: true },
            ));
        }
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("tandem fill"),
            entries: &entries,
        });
        let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("tandem fill"),
            bind_group_layouts: &[Some(&layout)],
            immediate_size: 0,
        });
        let pipeline = |kernel| -> Result<wgpu::ComputePipeline, GpuError> {
            let shader = self.fill_shader(map, kernel, k)?;
            Ok(
                device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                    label: Some(&format!("tandem {} {kernel:?}", map.name())),
                    layout: Some(&pipeline_layout),
                    module: &shader,
                    entry_point: Some(phobos_gpu::ENTRY_POINT),
                    // As `kernel_spirv`: the kernels read only the workgroup
                    // memory that their workgroup wrote first.
                    compilation_options: wgpu::PipelineCompilationOptions {
                        zero_initialize_workgroup_memory: false,
                        ..Default::default()
                    },
                    cache: self.disk_cache(),
                }),
            )
        };
        let built = pipeline(Kernel::Fill).and_then(|fill| {
            let misses = match map.has_misses() {
                true => Some(pipeline(Kernel::Misses)?),
                false => None,
            };
            Ok((fill, misses))
        });
        let error = pollster::block_on(scope.pop());
        let (fill, misses) = built?;
        if let Some(e) = error {
            return Err(GpuError::Wgpu(format!(
                "creating the Tandem {} fill pipeline: {e}",
                map.name()
            )));
        }
        self.check_lost()?;
        self.note_pipeline_built(None);
        self.flush_disk_cache();
        let p = Arc::new(FillPipeline {
            fill,
            misses,
            layout,
        });
        self.fills.lock().unwrap().insert(key, p.clone());
        Ok(p)
    }

    /// The most stream blocks one dispatch covers: output within the
    /// binding limit and at most `cap_bytes`, a multiple of the blocks
    /// whose output is 256 bytes (the strictest binding offset alignment),
    /// and few enough that the expected misses fit the list.
    fn piece_blocks(&self, shape: &Shape, cap_bytes: u64) -> u64 {
        let l = self.device.limits();
        let bytes = l
            .max_storage_buffer_binding_size
            .min(l.max_buffer_size)
            .min(cap_bytes)
            .min(1 << 32);
        let align =
            (u64::from(l.min_storage_buffer_offset_alignment).max(256) / shape.block_bytes).max(1);
        let blocks = (bytes / shape.block_bytes).min(shape.miss_piece_blocks());
        (blocks / align * align).max(align)
    }

    /// The miss counters and list, or the alias table, of a fill of `pieces`
    /// dispatches of at most `piece` blocks.
    fn fill_aux(
        &self,
        shape: &Shape,
        dist: &Dist,
        pieces: u64,
        piece: u64,
    ) -> Result<Aux, GpuError> {
        let storage = |label, size: u64, extra| {
            self.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: size.next_multiple_of(16).max(16),
                usage: wgpu::BufferUsages::STORAGE | extra,
                mapped_at_creation: false,
            })
        };
        let mut aux = Aux {
            counters: None,
            list: None,
            table: None,
            ziggurat: None,
        };
        if shape.map.has_misses() {
            aux.counters = Some(storage(
                "tandem miss counters",
                4 * pieces,
                wgpu::BufferUsages::COPY_DST,
            ));
            let cap = u64::from(shape.cap(piece));
            aux.list = Some(storage(
                "tandem miss list",
                4 * cap * u64::from(shape.map.list_words()),
                wgpu::BufferUsages::empty(),
            ));
        }
        if shape.map.has_table() {
            let words = Shape::table_words(dist);
            let bytes = 4 * words.len() as u64;
            let limit = self.device.limits().max_storage_buffer_binding_size;
            if bytes > limit {
                return Err(GpuError::Fill(format!(
                    "invalid parameter `weights`: {} weights make a {bytes}-byte alias table, \
                     more than this device binds ({limit} bytes); use --backend cpu",
                    words.len() / 4
                )));
            }
            let t = storage("tandem alias table", bytes, wgpu::BufferUsages::COPY_DST);
            let raw: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
            self.queue.write_buffer(&t, 0, &raw);
            aux.table = Some(t);
        }
        if shape.map.has_ziggurat() {
            let raw = ziggurat_bytes()?;
            let t = storage(
                "tandem ziggurat table",
                raw.len() as u64,
                wgpu::BufferUsages::COPY_DST,
            );
            self.queue.write_buffer(&t, 0, &raw);
            aux.ziggurat = Some(t);
        }
        Ok(aux)
    }

    fn fill_bind_group(
        &self,
        pipeline: &FillPipeline,
        p: &FillParams,
        dst: &wgpu::Buffer,
        offset: u64,
        out_bytes: u64,
        aux: &Aux,
    ) -> wgpu::BindGroup {
        let ubuf = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("tandem fill params"),
            size: FillParams::SIZE as u64,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        self.queue.write_buffer(&ubuf, 0, &p.bytes());
        let mut entries = vec![
            wgpu::BindGroupEntry {
                binding: phobos_gpu::UNIFORM_BINDING,
                resource: ubuf.as_entire_binding(),
            },
            wgpu::BindGroupEntry {
                binding: FILL_OUTPUT_BINDING,
                resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                    buffer: dst,
                    offset,
                    size: wgpu::BufferSize::new(out_bytes),
                }),
            },
        ];
        if let Some(b) = aux.counters.as_ref().or(aux.table.as_ref()) {
            entries.push(wgpu::BindGroupEntry {
                binding: FILL_AUX_BINDING,
                resource: b.as_entire_binding(),
            });
        }
        if let Some(b) = &aux.list {
            entries.push(wgpu::BindGroupEntry {
                binding: FILL_LIST_BINDING,
                resource: b.as_entire_binding(),
            });
        }
        if let Some(b) = &aux.ziggurat {
            entries.push(wgpu::BindGroupEntry {
                binding: FILL_ZIGGURAT_BINDING,
                resource: b.as_entire_binding(),
            });
        }
        self.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("tandem fill"),
            layout: &pipeline.layout,
            entries: &entries,
        })
    }

    /// The dispatch of the piece of `pn` blocks from stream block `pb0`,
    /// written at byte `offset` of `dst`.
    #[allow(clippy::too_many_arguments)]
    fn fill_dispatch(
        &self,
        pipeline: &FillPipeline,
        shape: &Shape,
        rng: &Tandem,
        (pb0, pn, piece): (u64, u64, u32),
        dst: &wgpu::Buffer,
        offset: u64,
        aux: &Aux,
    ) -> Dispatch {
        let max = self.device.limits().max_compute_workgroups_per_dimension;
        let p = shape.params(rng, pb0, pn, piece);
        let bind = self.fill_bind_group(pipeline, &p, dst, offset, pn * shape.block_bytes, aux);
        Dispatch {
            bind,
            groups: p.workgroups(shape.map, max),
            miss_groups: shape
                .map
                .has_misses()
                .then(|| p.miss_workgroups(shape.map, max)),
        }
    }

    /// Readies a fill of `count` elements of `dist` from element `start` into
    /// `dst` from byte 0, as [`Gpu::fill_buffer`] writes it; encode it with
    /// [`PreparedFill::encode`].
    pub fn prepare_fill(
        &self,
        dist: &Dist,
        rng: Tandem,
        start: u64,
        count: u64,
        dst: &wgpu::Buffer,
    ) -> Result<PreparedFill, GpuError> {
        self.check_lost()?;
        let shape = Shape::new(dist, &rng)?;
        let s = span(&shape, start, count)?;
        if s.lead != 0 {
            return Err(GpuError::Fill(format!(
                "a fill into a buffer must start at the first element of a stream block (element \
                 {start} starts at byte {} of its block's {} output bytes); Gpu::fill writes any \
                 cut into host memory",
                s.lead, shape.block_bytes
            )));
        }
        let whole = s.n_blocks * shape.block_bytes;
        if dst.size() < whole {
            return Err(GpuError::TooLarge {
                param: "the fill's buffer".into(),
                bytes: whole,
                limit: dst.size(),
            });
        }
        if !dst.usage().contains(wgpu::BufferUsages::STORAGE) {
            return Err(GpuError::Fill(
                "the fill's buffer lacks BufferUsages::STORAGE".into(),
            ));
        }
        let pipeline = self.fill_pipeline(shape.map, rng.k())?;
        let piece = self.piece_blocks(&shape, u64::MAX).min(s.n_blocks.max(1));
        let pieces = s.n_blocks.div_ceil(piece);
        let aux = self.fill_aux(&shape, dist, pieces, piece)?;
        let mut dispatches = Vec::new();
        let mut done = 0;
        while done < s.n_blocks {
            let pn = piece.min(s.n_blocks - done);
            let at = (s.b0 + done, pn, dispatches.len() as u32);
            let offset = done * shape.block_bytes;
            dispatches.push(self.fill_dispatch(&pipeline, &shape, &rng, at, dst, offset, &aux));
            done += pn;
        }
        Ok(PreparedFill {
            pipeline,
            dispatches,
            aux,
        })
    }

    /// Fills `dst` from byte 0 with `count` elements of `dist` from element
    /// `start`, little-endian (the bytes of `Bulk::fill_bytes`), and submits
    /// the work (wait with [`Gpu::wait`] or by mapping a buffer).
    ///
    /// Whole stream blocks are written: `dst` needs the output of every
    /// block the elements touch (`count * size` rounded up to 16 bytes for
    /// most types, to 128 for bools, 32 for `below_i64_u32`, 8 for choice),
    /// and the start must be a block's first element; [`Gpu::fill`] takes
    /// any cut.
    pub fn fill_buffer(
        &self,
        dist: &Dist,
        rng: Tandem,
        start: u64,
        count: u64,
        dst: &wgpu::Buffer,
    ) -> Result<(), GpuError> {
        let prepared = self.prepare_fill(dist, rng, start, count, dst)?;
        let mut encoder = self.device.create_command_encoder(&Default::default());
        prepared.encode(&mut encoder, None);
        self.queue.submit([encoder.finish()]);
        self.check_lost()
    }

    /// Elements `start ..` of `dist` as little-endian bytes into `out`
    /// (`out.len()` a multiple of `dist.elem_size()`): the same bytes as
    /// `phobos_tandem::Bulk::fill_bytes`, for any start and length.
    pub fn fill(
        &self,
        dist: &Dist,
        rng: Tandem,
        start: u64,
        out: &mut [u8],
    ) -> Result<(), GpuError> {
        self.fill_in_pieces(dist, rng, start, out, HOST_PIECE_BYTES)
    }

    /// [`Gpu::fill`] with at most `piece_bytes` of output per dispatch
    /// (rounded to 256 bytes): for tests of the piece boundaries.
    #[doc(hidden)]
    pub fn fill_in_pieces(
        &self,
        dist: &Dist,
        rng: Tandem,
        start: u64,
        out: &mut [u8],
        piece_bytes: u64,
    ) -> Result<(), GpuError> {
        self.fill_host(dist, rng, start, out, piece_bytes, None)
    }

    /// [`Gpu::fill_in_pieces`] with a miss list of `cap` entries per piece,
    /// so that tests reach the fill kernel's in-place retries.
    #[doc(hidden)]
    pub fn fill_with_miss_cap(
        &self,
        dist: &Dist,
        rng: Tandem,
        start: u64,
        out: &mut [u8],
        piece_bytes: u64,
        cap: u32,
    ) -> Result<(), GpuError> {
        self.fill_host(dist, rng, start, out, piece_bytes, Some(cap))
    }

    fn fill_host(
        &self,
        dist: &Dist,
        rng: Tandem,
        start: u64,
        out: &mut [u8],
        piece_bytes: u64,
        cap: Option<u32>,
    ) -> Result<(), GpuError> {
        self.check_lost()?;
        let mut shape = Shape::new(dist, &rng)?;
        shape.cap_override = cap;
        let size = shape.size;
        if !out.len().is_multiple_of(size) {
            return Err(GpuError::Fill(format!(
                "the output is {} bytes, not a whole number of {size}-byte elements",
                out.len()
            )));
        }
        let s = span(&shape, start, (out.len() / size) as u64)?;
        if s.bytes == 0 {
            return Ok(());
        }
        let pipeline = self.fill_pipeline(shape.map, rng.k())?;
        let piece = self.piece_blocks(&shape, piece_bytes).min(s.n_blocks);
        let aux = self.fill_aux(&shape, dist, 1, piece)?;
        let piece_out = piece * shape.block_bytes;
        let scratch = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("tandem fill scratch"),
            size: piece_out,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        let staging = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("tandem fill readback"),
            size: piece_out,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut done_blocks = 0u64;
        let mut written = 0usize;
        while done_blocks < s.n_blocks {
            let pn = piece.min(s.n_blocks - done_blocks);
            let bytes = pn * shape.block_bytes;
            let at = (s.b0 + done_blocks, pn, 0);
            let d = self.fill_dispatch(&pipeline, &shape, &rng, at, &scratch, 0, &aux);
            let mut encoder = self.device.create_command_encoder(&Default::default());
            encode_pass(&mut encoder, &pipeline, &aux, &[d], None);
            encoder.copy_buffer_to_buffer(&scratch, 0, &staging, 0, bytes);
            self.queue.submit([encoder.finish()]);
            staging.map_async(wgpu::MapMode::Read, ..bytes, |_| {});
            self.wait()?;
            {
                let view = staging
                    .get_mapped_range(..bytes)
                    .map_err(|e| GpuError::Wgpu(format!("mapping the fill's readback: {e}")))?;
                // This piece holds the output of the span's blocks from
                // `done_blocks`; `out` starts at byte `lead` of the span.
                let from = if done_blocks == 0 { s.lead } else { 0 };
                let n = (view.len() - from).min(out.len() - written);
                out[written..written + n].copy_from_slice(&view[from..from + n]);
                written += n;
            }
            staging.unmap();
            done_blocks += pn;
        }
        debug_assert_eq!(written, out.len());
        Ok(())
    }
}
