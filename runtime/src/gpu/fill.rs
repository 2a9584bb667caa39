//! Tandem fills on the GPU: the module of `phobos_gpu::tandem`, dispatched in
//! pieces that respect the device's limits.
//!
//! A fill of elements `start .. start + count` of `size` bytes is stream
//! bytes `size * start ..` of the same length (every GPU map keeps
//! positions), so it is the whole 16-byte blocks that cover them, cut at the
//! edges. Pieces: at most `max_storage_buffer_binding_size` bytes (and a
//! multiple of 256 bytes, so that a piece's binding offset is aligned) per
//! dispatch, each dispatch a 2-D grid of workgroups when it has more than
//! 65,535 of them.

use super::{Gpu, GpuError};
use phobos_gpu::tandem::{FILL_OUTPUT_BINDING, FillMap, FillParams};
use phobos_tandem::{Dist, Tandem};
use std::borrow::Cow;
use std::sync::Arc;

pub(crate) struct FillPipeline {
    pipeline: wgpu::ComputePipeline,
    layout: wgpu::BindGroupLayout,
}

/// The GPU map of `dist`, or an error naming the CPU backend for the fills
/// that have no GPU port yet.
pub fn fill_map(dist: &Dist) -> Result<FillMap, GpuError> {
    match dist {
        Dist::U8 | Dist::U16 | Dist::U32 | Dist::U64 => Ok(FillMap::Raw),
        Dist::F16Bits => Ok(FillMap::F16),
        Dist::F32 => Ok(FillMap::F32),
        Dist::F64 => Ok(FillMap::F64),
        other => Err(GpuError::Fill(format!(
            "the Tandem fill {other:?} has no GPU port yet (the GPU fills u8, u16, u32, u64, \
             f16, f32 and f64); use --backend cpu"
        ))),
    }
}

/// Host pieces: at most this many bytes of scratch per dispatch.
const HOST_PIECE_BYTES: u64 = 256 << 20;

/// Blocks of 16 bytes.
const BLOCK: u64 = 16;

/// What one fill covers: blocks `b0 .. b0 + n_blocks` of the stream, and
/// where the elements' bytes start inside the first block.
struct Span {
    b0: u64,
    n_blocks: u64,
    lead: usize,
    bytes: u64,
}

fn span(dist: &Dist, start: u64, count: u64) -> Result<Span, GpuError> {
    dist.check()
        .map_err(|e| GpuError::Fill(format!("Tandem fill: {e}")))?;
    if u128::from(start) + u128::from(count) > 1u128 << 64 {
        return Err(GpuError::Fill(format!(
            "Tandem fill from element {start} of {count} elements passes the stream's 2^64 elements"
        )));
    }
    let size = dist.elem_size() as u128;
    let lo = u128::from(start) * size;
    let hi = lo + u128::from(count) * size;
    let b0 = lo / 16;
    let b1 = hi.div_ceil(16);
    let bytes = u64::try_from(hi - lo)
        .map_err(|_| GpuError::Fill(format!("{count} elements are more than 2^64 bytes")))?;
    Ok(Span {
        b0: b0 as u64,
        n_blocks: (b1 - b0) as u64,
        lead: (lo % 16) as usize,
        bytes,
    })
}

/// The parameters of the dispatch that writes stream blocks `pb0 .. pb0 + pn`
/// from index 0 of its binding.
fn params(rng: &Tandem, pb0: u64, pn: u64) -> FillParams {
    let per_group = 8 * u64::from(rng.k());
    let group = pb0 / per_group;
    let skip = pb0 % per_group;
    let groups = (skip + pn).div_ceil(per_group);
    FillParams {
        key: rng.key().words(),
        k: rng.k(),
        first_chunk: group * 8,
        n_chunks: u32::try_from(groups * 8).expect("pieces are below 2^28 blocks"),
        skip: skip as u32,
        n_blocks: u32::try_from(pn).expect("pieces are below 2^28 blocks"),
    }
}

/// A fill recorded as dispatches on one buffer, ready to encode (several
/// times, for benchmarks).
pub struct PreparedFill {
    pipeline: Arc<FillPipeline>,
    dispatches: Vec<(wgpu::BindGroup, [u32; 3])>,
}

impl PreparedFill {
    /// The dispatches in one compute pass, with timestamps at the pass's
    /// start and end when given.
    pub fn encode(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        timestamps: Option<(&wgpu::QuerySet, u32)>,
    ) {
        let timestamp_writes =
            timestamps.map(|(query_set, first)| wgpu::ComputePassTimestampWrites {
                query_set,
                beginning_of_pass_write_index: Some(first),
                end_of_pass_write_index: Some(first + 1),
            });
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("tandem fill"),
            timestamp_writes,
        });
        pass.set_pipeline(&self.pipeline.pipeline);
        for (bind, [x, y, z]) in &self.dispatches {
            pass.set_bind_group(0, bind, &[]);
            pass.dispatch_workgroups(*x, *y, *z);
        }
    }

    /// Dispatches in the fill.
    pub fn dispatch_count(&self) -> usize {
        self.dispatches.len()
    }
}

impl Gpu {
    fn fill_pipeline(&self, map: FillMap) -> Result<Arc<FillPipeline>, GpuError> {
        if let Some(p) = self.fills.lock().unwrap().get(&map) {
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
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("tandem fill"),
            entries: &[
                entry(
                    phobos_gpu::UNIFORM_BINDING,
                    wgpu::BufferBindingType::Uniform,
                ),
                entry(
                    FILL_OUTPUT_BINDING,
                    wgpu::BufferBindingType::Storage { read_only: false },
                ),
            ],
        });
        let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("tandem fill"),
            bind_group_layouts: &[Some(&layout)],
            immediate_size: 0,
        });
        let label = format!("tandem fill {}", map.name());
        // Exact mode's SPIR-V where the device loads it unchanged; the maps
        // are integer operations and one exact multiply by 2^-24, so the
        // naga module gives the same bits anywhere else.
        let shader = if self.can_run_exact() {
            let words = phobos_gpu::tandem::fill_spirv(map, phobos_gpu::Precision::Exact)
                .map_err(|e| GpuError::Lower(e.to_string()))?;
            let entry = wgpu::PassthroughShaderEntryPoint {
                name: Cow::Borrowed(phobos_gpu::ENTRY_POINT),
                workgroup_size: (phobos_gpu::tandem::FILL_WORKGROUP_SIZE, 1, 1),
            };
            // SAFETY: naga's SPIR-V for a module naga validated, with only
            // the exact-mode decorations added (spirv-val checks it in tests).
            unsafe {
                device.create_shader_module_passthrough(wgpu::ShaderModuleDescriptorPassthrough {
                    label: Some(&label),
                    entry_points: Cow::Owned(vec![entry]),
                    spirv: Some(Cow::Owned(words)),
                    ..Default::default()
                })
            }
        } else {
            let (module, _) = phobos_gpu::tandem::fill_compiled(map)
                .map_err(|e| GpuError::Lower(e.to_string()))?;
            device.create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some(&label),
                source: wgpu::ShaderSource::Naga(Cow::Owned(module)),
            })
        };
        let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some(&label),
            layout: Some(&pipeline_layout),
            module: &shader,
            entry_point: Some(phobos_gpu::ENTRY_POINT),
            compilation_options: Default::default(),
            cache: None,
        });
        if let Some(e) = pollster::block_on(scope.pop()) {
            return Err(GpuError::Wgpu(format!(
                "creating the {label} pipeline: {e}"
            )));
        }
        self.check_lost()?;
        let p = Arc::new(FillPipeline { pipeline, layout });
        self.fills.lock().unwrap().insert(map, p.clone());
        Ok(p)
    }

    /// The most blocks one dispatch writes: the binding limit, a multiple of
    /// 16 blocks (256 bytes, the strictest binding offset alignment), and at
    /// most `cap_bytes`.
    fn piece_blocks(&self, cap_bytes: u64) -> u64 {
        let l = self.device.limits();
        let bytes = l
            .max_storage_buffer_binding_size
            .min(l.max_buffer_size)
            .min(cap_bytes)
            .min(1 << 32);
        let align = u64::from(l.min_storage_buffer_offset_alignment).max(256) / BLOCK;
        (bytes / BLOCK / align * align).max(align)
    }

    fn fill_bind_group(
        &self,
        pipeline: &FillPipeline,
        p: &FillParams,
        dst: &wgpu::Buffer,
        offset: u64,
    ) -> wgpu::BindGroup {
        let ubuf = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("tandem fill params"),
            size: FillParams::SIZE as u64,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        self.queue.write_buffer(&ubuf, 0, &p.bytes());
        self.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("tandem fill"),
            layout: &pipeline.layout,
            entries: &[
                wgpu::BindGroupEntry {
                    binding: phobos_gpu::UNIFORM_BINDING,
                    resource: ubuf.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: FILL_OUTPUT_BINDING,
                    resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                        buffer: dst,
                        offset,
                        size: wgpu::BufferSize::new(u64::from(p.n_blocks) * BLOCK),
                    }),
                },
            ],
        })
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
        let map = fill_map(dist)?;
        let s = span(dist, start, count)?;
        if s.lead != 0 {
            return Err(GpuError::Fill(format!(
                "a fill into a buffer must start on a 16-byte block of the stream (element \
                 {start} of {} bytes starts at byte {} of its block); Gpu::fill writes any cut \
                 into host memory",
                dist.elem_size(),
                s.lead
            )));
        }
        let whole = s.n_blocks * BLOCK;
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
        let pipeline = self.fill_pipeline(map)?;
        let piece = self.piece_blocks(u64::MAX);
        let max = self.device.limits().max_compute_workgroups_per_dimension;
        let mut dispatches = Vec::new();
        let mut done = 0;
        while done < s.n_blocks {
            let pn = piece.min(s.n_blocks - done);
            let p = params(&rng, s.b0 + done, pn);
            let bind = self.fill_bind_group(&pipeline, &p, dst, done * BLOCK);
            dispatches.push((bind, p.workgroups(max)));
            done += pn;
        }
        Ok(PreparedFill {
            pipeline,
            dispatches,
        })
    }

    /// Fills `dst` from byte 0 with `count` elements of `dist` from element
    /// `start`, little-endian (the bytes of `Bulk::fill_bytes`), and submits
    /// the work (wait with [`Gpu::wait`] or by mapping a buffer).
    ///
    /// Whole blocks are written: `dst` needs `ceil(count * size / 16) * 16`
    /// bytes, and the start must be on a 16-byte block of the stream
    /// (`start * size` a multiple of 16); [`Gpu::fill`] takes any cut.
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

    /// [`Gpu::fill`] with at most `piece_bytes` per dispatch (rounded to 256
    /// bytes): for tests of the piece boundaries.
    #[doc(hidden)]
    pub fn fill_in_pieces(
        &self,
        dist: &Dist,
        rng: Tandem,
        start: u64,
        out: &mut [u8],
        piece_bytes: u64,
    ) -> Result<(), GpuError> {
        self.check_lost()?;
        let map = fill_map(dist)?;
        let size = dist.elem_size();
        if !out.len().is_multiple_of(size) {
            return Err(GpuError::Fill(format!(
                "the output is {} bytes, not a whole number of {size}-byte elements",
                out.len()
            )));
        }
        let s = span(dist, start, (out.len() / size) as u64)?;
        if s.bytes == 0 {
            return Ok(());
        }
        let pipeline = self.fill_pipeline(map)?;
        let piece = self.piece_blocks(piece_bytes).min(s.n_blocks);
        let scratch = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("tandem fill scratch"),
            size: piece * BLOCK,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        let staging = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("tandem fill readback"),
            size: piece * BLOCK,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let max = self.device.limits().max_compute_workgroups_per_dimension;
        // Bytes of the blocks read so far, counted from the first block's
        // start, and bytes of `out` written.
        let mut done_blocks = 0u64;
        let mut written = 0usize;
        while done_blocks < s.n_blocks {
            let pn = piece.min(s.n_blocks - done_blocks);
            let p = params(&rng, s.b0 + done_blocks, pn);
            let bind = self.fill_bind_group(&pipeline, &p, &scratch, 0);
            let mut encoder = self.device.create_command_encoder(&Default::default());
            {
                let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                    label: Some("tandem fill"),
                    timestamp_writes: None,
                });
                pass.set_pipeline(&pipeline.pipeline);
                pass.set_bind_group(0, &bind, &[]);
                let [x, y, z] = p.workgroups(max);
                pass.dispatch_workgroups(x, y, z);
            }
            encoder.copy_buffer_to_buffer(&scratch, 0, &staging, 0, pn * BLOCK);
            self.queue.submit([encoder.finish()]);
            staging.map_async(wgpu::MapMode::Read, ..pn * BLOCK, |_| {});
            self.wait()?;
            {
                let view = staging
                    .get_mapped_range(..pn * BLOCK)
                    .map_err(|e| GpuError::Wgpu(format!("mapping the fill's readback: {e}")))?;
                // This piece holds stream bytes from `done_blocks * 16` of the
                // span; `out` starts at byte `lead` of the span.
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
