//! Buffers, the parameter block, dispatch and readback.

use super::pipeline::{BuildPhases, Pipeline};
use super::{Gpu, GpuError, GpuRun};
use crate::{Precision, RuntimeError};
use phobos_core::ir::{Kernel, ParamKind};
use phobos_core::launch::{Arg, ArgShape, Bound, bind, bind_shapes};
use phobos_core::tensor::Data;
use phobos_core::types::{Scalar, Value};
use std::sync::Arc;

/// An argument of [`Gpu::dispatch`]: a tensor already in a buffer of the
/// caller's (its usage must include `STORAGE`), or a scalar.
#[derive(Clone, Copy, Debug)]
pub enum GpuArg<'a> {
    Tensor {
        buffer: &'a wgpu::Buffer,
        elem: Scalar,
        shape: &'a [usize],
    },
    Scalar(Value),
}

/// A launch ready to dispatch: pipeline, uniform block and bind group.
pub struct Prepared {
    pipeline: Arc<Pipeline>,
    bind_group: wgpu::BindGroup,
    workgroups: [u32; 3],
    /// The buffers this launch owns (host tensors uploaded by [`Gpu::prepare`]),
    /// by parameter index.
    pub(super) owned: Vec<Option<wgpu::Buffer>>,
    pub bound: Bound,
    pub compile_ms: f64,
    /// Where `compile_ms` went (`None` when the pipeline was cached).
    pub build_phases: Option<BuildPhases>,
    pub cache_hit: bool,
    /// How the lowering took the kernel's Tandem draws.
    pub notes: Vec<String>,
    /// Invocations per workgroup.
    pub workgroup_size: u32,
}

/// The device buffers of a launch's tensors, kept after it ran
/// ([`Gpu::run_kept`]) so that kernels reading its results, such as the
/// check lines, bind them again instead of uploading the tensors anew.
/// Dropping it frees them.
pub struct Resident {
    /// By parameter index; `None` for scalars.
    pub(super) buffers: Vec<Option<wgpu::Buffer>>,
    /// The tensors (parameter index and name) whose host tensors in the
    /// launch's arguments do not hold what the launch left on the device
    /// until [`Gpu::read_back_stale`] reads them back: stored ones it
    /// handed to its sink only or left on the device, and ones generated
    /// on the device that it did not read back ([`crate::Transfers`]).
    pub(super) stale: std::sync::Mutex<Vec<(usize, String)>>,
}

impl Resident {
    /// Whether the launch's arguments hold every result (no tensor was
    /// left to the sink alone, or [`Gpu::read_back_stale`] brought them home).
    pub fn host_current(&self) -> bool {
        self.stale
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_empty()
    }

    /// The buffer holding tensor parameter `param`, as the launch left it.
    pub fn buffer(&self, param: usize) -> Option<&wgpu::Buffer> {
        self.buffers.get(param).and_then(Option::as_ref)
    }
}

/// A tensor's elements as the bytes in memory (native order), except bools.
pub(crate) fn bytes_of(data: &Data) -> Option<&[u8]> {
    Some(match data {
        Data::Bool(_) => return None,
        Data::I32(v) => bytemuck::cast_slice(v),
        Data::U32(v) => bytemuck::cast_slice(v),
        Data::I64(v) => bytemuck::cast_slice(v),
        Data::U64(v) => bytemuck::cast_slice(v),
        Data::F32(v) => bytemuck::cast_slice(v),
        Data::F64(v) => bytemuck::cast_slice(v),
        Data::F16(v) => bytemuck::cast_slice(v),
        Data::BF16(v) => bytemuck::cast_slice(v),
    })
}

pub(crate) fn bytes_of_mut(data: &mut Data) -> Option<&mut [u8]> {
    Some(match data {
        Data::Bool(_) => return None,
        Data::I32(v) => bytemuck::cast_slice_mut(v),
        Data::U32(v) => bytemuck::cast_slice_mut(v),
        Data::I64(v) => bytemuck::cast_slice_mut(v),
        Data::U64(v) => bytemuck::cast_slice_mut(v),
        Data::F32(v) => bytemuck::cast_slice_mut(v),
        Data::F64(v) => bytemuck::cast_slice_mut(v),
        Data::F16(v) => bytemuck::cast_slice_mut(v),
        Data::BF16(v) => bytemuck::cast_slice_mut(v),
    })
}

/// The uniform block as the lowering laid it out
/// (`phobos_gpu::Layout::uniform_block`, which the playground packs its
/// WebGPU launches with too); a field without its value is the lowering's
/// error, which the launch's binding rules out.
fn uniform_block(
    layout: &phobos_gpu::Layout,
    bound: &Bound,
    scalars: &[Option<Value>],
) -> Result<Vec<u8>, GpuError> {
    layout
        .uniform_block(scalars, &bound.dims, bound.grid)
        .map_err(|e| GpuError::Lower(e.to_string()))
}

impl Gpu {
    /// Binds, lowers (or takes the cached pipeline) and checks sizes: the
    /// part of a launch shared by host tensors and the caller's buffers.
    /// `workgroup_size` is the tuner's choice; `None` is
    /// [`Gpu::heuristic_workgroup_size`]'s.
    /// A tensor larger than [`Gpu::max_binding`] is split
    /// (`phobos_gpu::Split::plan`, pieces at offsets the device allows);
    /// one larger than a buffer may be is refused, naming it.
    fn plan(
        &self,
        kernel: &Kernel,
        shapes: &[ArgShape],
        precision: Precision,
        workgroup_size: Option<u32>,
    ) -> Result<(Arc<Pipeline>, Bound, [u32; 3], bool), RuntimeError> {
        crate::phases::time("compile", || {
            self.plan_untimed(kernel, shapes, precision, workgroup_size)
        })
    }

    fn plan_untimed(
        &self,
        kernel: &Kernel,
        shapes: &[ArgShape],
        precision: Precision,
        workgroup_size: Option<u32>,
    ) -> Result<(Arc<Pipeline>, Bound, [u32; 3], bool), RuntimeError> {
        self.check_lost()?;
        if precision == Precision::Exact
            && let Some(why) = self.exact_support().refusal()
        {
            return Err(GpuError::NotExact(why).into());
        }
        if let Some(w) = workgroup_size
            && !(1..=self.max_workgroup_size()).contains(&w)
        {
            return Err(GpuError::Lower(format!(
                "a workgroup size of {w}: this device and the lowering allow 1 to {}",
                self.max_workgroup_size()
            ))
            .into());
        }
        let bound = bind_shapes(kernel, shapes)?;
        let limits = self.device.limits();
        let max_binding = self.max_binding();
        let alignment = u64::from(limits.min_storage_buffer_offset_alignment);
        let mut splits = vec![None; kernel.params.len()];
        let mut storage_bindings: u64 = 0;
        for (i, (p, a)) in kernel.params.iter().zip(shapes).enumerate() {
            if let ArgShape::Tensor { elem, shape } = a {
                let elements = shape.iter().product::<usize>() as u64;
                let bytes = elements * elem.size() as u64;
                if bytes > limits.max_buffer_size {
                    return Err(GpuError::TooLarge {
                        param: p.name.clone(),
                        bytes,
                        limit: limits.max_buffer_size,
                    }
                    .into());
                }
                // Positions are u32 in the shader, and an i32 start that is
                // negative wraps to 2^31 or more, which must never be
                // below an extent (`lower::expr::locate`).
                if elements > 1 << 31 {
                    return Err(GpuError::Lower(format!(
                        "tensor `{}` has {elements} elements: not supported on the GPU \
                         backend yet (positions are 32-bit; at most 2^31 elements)",
                        p.name
                    ))
                    .into());
                }
                splits[i] =
                    phobos_gpu::Split::plan(elements, elem.size() as u64, max_binding, alignment);
                storage_bindings += splits[i].map_or(1, |s| u64::from(s.pieces));
            }
        }
        let most = u64::from(limits.max_storage_buffers_per_shader_stage);
        if storage_bindings > most {
            return Err(GpuError::Lower(format!(
                "the tensors of `{}` need {storage_bindings} storage bindings when cut into \
                 pieces of at most {max_binding} bytes, more than this device has ({most})",
                kernel.name
            ))
            .into());
        }
        // Blocks are numbered in u32 in the shader and dispatched as a 2-D
        // grid of workgroups.
        let max = limits.max_compute_workgroups_per_dimension;
        let total: u64 = bound.grid.iter().product();
        if total >= 1 << 32 || total > u64::from(max) * u64::from(max) {
            return Err(GpuError::Lower(format!(
                "the grid has {total} blocks, more than one dispatch runs here ({})",
                (u64::from(max) * u64::from(max)).min((1 << 32) - 1)
            ))
            .into());
        }
        let kernel = phobos_gpu::specialize(kernel, &bound.dims);
        let workgroup_size =
            workgroup_size.unwrap_or_else(|| self.heuristic_workgroup_size(&kernel, precision));
        let (pipeline, cache_hit) = self.pipeline(&kernel, precision, &splits, workgroup_size)?;
        // A workgroup may run several blocks (`Compiled::blocks_per_workgroup`).
        let per = u64::from(pipeline.blocks_per_workgroup);
        let workgroups = phobos_gpu::dispatch_size([total.div_ceil(per) as u32, 1, 1], max);
        Ok((pipeline, bound, workgroups, cache_hit))
    }

    fn bind_group(
        &self,
        pipeline: &Pipeline,
        uniform: &[u8],
        buffers: &[Option<&wgpu::Buffer>],
    ) -> wgpu::BindGroup {
        // Device-local and written through the queue: a buffer created
        // mapped may live in host memory, and every invocation reads it
        // (measured on the H200: 6x slower kernels).
        let ubuf = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("phobos params"),
            size: uniform.len() as u64,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        self.queue.write_buffer(&ubuf, 0, uniform);
        let mut entries = vec![wgpu::BindGroupEntry {
            binding: 0,
            resource: ubuf.as_entire_binding(),
        }];
        for t in &pipeline.bindings.tensors {
            let buffer = buffers[t.param_index].expect("every tensor parameter has a buffer");
            let Some(split) = t.split else {
                // A caller's buffer may be larger than one binding while
                // the tensor fits in one (else it would be split): bind the
                // buffer's first bytes, which hold it.
                let limit = self.device.limits().max_storage_buffer_binding_size & !15;
                let resource = if buffer.size() > limit {
                    wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                        buffer,
                        offset: 0,
                        size: wgpu::BufferSize::new(limit),
                    })
                } else {
                    buffer.as_entire_binding()
                };
                entries.push(wgpu::BindGroupEntry {
                    binding: t.binding,
                    resource,
                });
                continue;
            };
            // Piece `k` is the bytes from `k * piece` of the one buffer;
            // the last one ends with the buffer (`plan` made every piece
            // start inside the tensor).
            let piece = split.piece_bytes(t.elem.size() as u64);
            for k in 0..split.pieces {
                let offset = u64::from(k) * piece;
                entries.push(wgpu::BindGroupEntry {
                    binding: t.binding + k,
                    resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                        buffer,
                        offset,
                        size: wgpu::BufferSize::new(piece.min(buffer.size() - offset)),
                    }),
                });
            }
        }
        self.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("phobos"),
            layout: &pipeline.layout,
            entries: &entries,
        })
    }

    /// Uploads host tensors and readies the launch; [`Prepared::encode`]
    /// dispatches it and [`Gpu::read_back`] brings results home.
    pub fn prepare(
        &self,
        kernel: &Kernel,
        args: &[Arg],
        precision: Precision,
    ) -> Result<Prepared, RuntimeError> {
        self.prepare_with(kernel, args, precision, None)
    }

    /// [`Gpu::prepare`] with a workgroup size of the tuner's (`None`: the
    /// heuristic's).
    pub fn prepare_with(
        &self,
        kernel: &Kernel,
        args: &[Arg],
        precision: Precision,
        workgroup_size: Option<u32>,
    ) -> Result<Prepared, RuntimeError> {
        self.prepare_generating(kernel, args, precision, workgroup_size, &[], &[])
    }

    /// [`Gpu::prepare_with`], generating the tensors of `generated` on the
    /// device instead of uploading them ([`crate::Transfers::generated`]),
    /// and taking those of `zeroed` as zero ([`crate::Transfers::zeroed`]).
    fn prepare_generating(
        &self,
        kernel: &Kernel,
        args: &[Arg],
        precision: Precision,
        workgroup_size: Option<u32>,
        generated: &[usize],
        zeroed: &[usize],
    ) -> Result<Prepared, RuntimeError> {
        let shapes: Vec<ArgShape> = args
            .iter()
            .map(|a| match a {
                Arg::Tensor(t) => ArgShape::Tensor {
                    elem: t.elem(),
                    shape: &t.shape,
                },
                Arg::Scalar(v) => ArgShape::Scalar(*v),
            })
            .collect();
        bind(kernel, args)?;
        let (pipeline, bound, workgroups, cache_hit) =
            self.plan(kernel, &shapes, precision, workgroup_size)?;
        let mut owned = Vec::new();
        let mut scalars = Vec::new();
        for (i, (p, a)) in kernel.params.iter().zip(args).enumerate() {
            match a {
                Arg::Tensor(t) if generated.contains(&i) => {
                    owned.push(Some(crate::phases::scoped("generate", || {
                        self.generate_input(&p.name, t, precision)
                    })?));
                    scalars.push(None);
                }
                Arg::Tensor(t) if zeroed.contains(&i) => {
                    owned.push(Some(self.zeroed(&p.name, t)?));
                    scalars.push(None);
                }
                Arg::Tensor(t) => {
                    owned.push(Some(crate::phases::scoped("upload", || {
                        self.upload(&p.name, t)
                    })?));
                    scalars.push(None);
                }
                Arg::Scalar(v) => {
                    owned.push(None);
                    scalars.push(Some(*v));
                }
            }
        }
        let uniform = uniform_block(&pipeline.bindings, &bound, &scalars)?;
        let refs: Vec<Option<&wgpu::Buffer>> = owned.iter().map(Option::as_ref).collect();
        let bind_group = self.bind_group(&pipeline, &uniform, &refs);
        let compile_ms = if cache_hit { 0.0 } else { pipeline.build_ms };
        let build_phases = (!cache_hit).then_some(pipeline.phases);
        let notes = pipeline.notes.clone();
        let workgroup_size = pipeline.workgroup_size;
        Ok(Prepared {
            pipeline,
            bind_group,
            workgroups,
            owned,
            bound,
            compile_ms,
            build_phases,
            cache_hit,
            notes,
            workgroup_size,
        })
    }

    /// Readies a launch on the caller's buffers without submitting it, for
    /// [`Prepared::encode`]: what the tuner times, one [`Prepared`] per
    /// configuration over one set of buffers.
    pub fn prepare_on(
        &self,
        kernel: &Kernel,
        args: &[GpuArg],
        precision: Precision,
        workgroup_size: Option<u32>,
    ) -> Result<Prepared, RuntimeError> {
        let (pipeline, bound, workgroups, cache_hit, bind_group) =
            self.bind_caller_buffers(kernel, args, precision, workgroup_size)?;
        Ok(Prepared {
            compile_ms: if cache_hit { 0.0 } else { pipeline.build_ms },
            build_phases: (!cache_hit).then_some(pipeline.phases),
            notes: pipeline.notes.clone(),
            workgroup_size: pipeline.workgroup_size,
            pipeline,
            bind_group,
            workgroups,
            owned: vec![None; kernel.params.len()],
            bound,
            cache_hit,
        })
    }

    /// Plans a launch over the caller's buffers and makes its bind group,
    /// after checking the buffers' sizes and usages.
    #[allow(clippy::type_complexity)]
    fn bind_caller_buffers(
        &self,
        kernel: &Kernel,
        args: &[GpuArg],
        precision: Precision,
        workgroup_size: Option<u32>,
    ) -> Result<(Arc<Pipeline>, Bound, [u32; 3], bool, wgpu::BindGroup), RuntimeError> {
        let shapes: Vec<ArgShape> = args
            .iter()
            .map(|a| match *a {
                GpuArg::Tensor { elem, shape, .. } => ArgShape::Tensor { elem, shape },
                GpuArg::Scalar(v) => ArgShape::Scalar(v),
            })
            .collect();
        let (pipeline, bound, workgroups, cache_hit) =
            self.plan(kernel, &shapes, precision, workgroup_size)?;
        let mut buffers = Vec::new();
        let mut scalars = Vec::new();
        for (p, a) in kernel.params.iter().zip(args) {
            match *a {
                GpuArg::Tensor {
                    buffer,
                    elem,
                    shape,
                } => {
                    let bytes = shape.iter().product::<usize>() as u64 * elem.size() as u64;
                    if buffer.size() < bytes {
                        return Err(GpuError::TooLarge {
                            param: p.name.clone(),
                            bytes,
                            limit: buffer.size(),
                        }
                        .into());
                    }
                    if !buffer.usage().contains(wgpu::BufferUsages::STORAGE) {
                        return Err(RuntimeError::Gpu(GpuError::Wgpu(format!(
                            "the buffer of `{}` lacks BufferUsages::STORAGE",
                            p.name
                        ))));
                    }
                    buffers.push(Some(buffer));
                    scalars.push(None);
                }
                GpuArg::Scalar(v) => {
                    buffers.push(None);
                    scalars.push(Some(v));
                }
            }
        }
        let uniform = uniform_block(&pipeline.bindings, &bound, &scalars)?;
        // The caller's buffers can break rules checked only by wgpu
        // (binding sizes, usages): its error comes back here, never a
        // kernel that silently does nothing.
        let scope = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let bind_group = self.bind_group(&pipeline, &uniform, &buffers);
        if let Some(e) = pollster::block_on(scope.pop()) {
            return Err(GpuError::Wgpu(format!(
                "binding the caller's buffers to `{}`: {e}",
                kernel.name
            ))
            .into());
        }
        Ok((pipeline, bound, workgroups, cache_hit, bind_group))
    }

    /// Dispatches `kernel` on the caller's buffers and submits the work; the
    /// results are in the buffers once the queue has finished it (map one,
    /// or poll the device). Buffer sizes must be at least the tensors' bytes.
    pub fn dispatch(
        &self,
        kernel: &Kernel,
        args: &[GpuArg],
        precision: Precision,
    ) -> Result<GpuRun, RuntimeError> {
        let (pipeline, bound, workgroups, cache_hit, bind_group) =
            self.bind_caller_buffers(kernel, args, precision, None)?;
        let scope = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let mut encoder = self.device.create_command_encoder(&Default::default());
        record(&mut encoder, &pipeline, &bind_group, workgroups, None);
        self.queue.submit([encoder.finish()]);
        self.flush_disk_cache();
        if let Some(e) = pollster::block_on(scope.pop()) {
            return Err(GpuError::Wgpu(format!(
                "dispatching `{}` on the caller's buffers: {e}",
                kernel.name
            ))
            .into());
        }
        Ok(GpuRun {
            bound,
            compile_ms: if cache_hit { 0.0 } else { pipeline.build_ms },
            build_phases: (!cache_hit).then_some(pipeline.phases),
            cache_hit,
            notes: pipeline.notes.clone(),
            plan: pipeline.plan.clone(),
            workgroup_size: pipeline.workgroup_size,
        })
    }

    /// Uploads, dispatches, waits and reads every stored tensor back into
    /// `args`.
    pub fn run(
        &self,
        kernel: &Kernel,
        args: &mut [Arg],
        precision: Precision,
    ) -> Result<GpuRun, RuntimeError> {
        self.run_with(kernel, args, precision, None)
    }

    /// [`Gpu::run`] with a workgroup size of the tuner's (`None`: the
    /// heuristic's).
    pub fn run_with(
        &self,
        kernel: &Kernel,
        args: &mut [Arg],
        precision: Precision,
        workgroup_size: Option<u32>,
    ) -> Result<GpuRun, RuntimeError> {
        self.run_kept(kernel, args, precision, workgroup_size)
            .map(|(run, _)| run)
    }

    /// [`Gpu::run_with`], keeping the tensors' buffers on the device
    /// afterwards for kernels that read the results ([`Resident`]).
    pub fn run_kept(
        &self,
        kernel: &Kernel,
        args: &mut [Arg],
        precision: Precision,
        workgroup_size: Option<u32>,
    ) -> Result<(GpuRun, Resident), RuntimeError> {
        self.run_streaming(kernel, args, precision, workgroup_size, None)
    }

    /// [`Gpu::run_kept`], handing `streaming`'s sink each piece of every
    /// stored tensor as it is read back ([`crate::Transfers`]); the tensors
    /// it takes alone are not filled in `args` ([`Resident::stale`]).
    pub fn run_streaming(
        &self,
        kernel: &Kernel,
        args: &mut [Arg],
        precision: Precision,
        workgroup_size: Option<u32>,
        streaming: Option<crate::Transfers<'_>>,
    ) -> Result<(GpuRun, Resident), RuntimeError> {
        let none = Vec::new();
        let generated = streaming.as_ref().map_or(&none, |s| &s.generated);
        let zeroed = streaming.as_ref().map_or(&none, |s| &s.zeroed);
        let prepared =
            self.prepare_generating(kernel, args, precision, workgroup_size, generated, zeroed)?;
        // The host tensors that will not hold the results: stored ones the
        // read-back leaves to the sink or on the device, and generated ones
        // it does not fill.
        let stale: Vec<(usize, String)> = (0..kernel.params.len())
            .filter(|&p| prepared.owned[p].is_some())
            .filter(|&p| {
                let written = matches!(
                    kernel.params[p].kind,
                    ParamKind::Tensor { written: true, .. }
                );
                let not_read = streaming
                    .as_ref()
                    .is_some_and(|s| s.sink_only.contains(&p) || s.on_device.contains(&p));
                if written {
                    not_read
                } else {
                    generated.contains(&p)
                }
            })
            .map(|p| (p, kernel.params[p].name.clone()))
            .collect();
        let mut encoder = self.device.create_command_encoder(&Default::default());
        prepared.encode(&mut encoder, None);
        // Waiting for the kernel before reading back costs nothing the
        // read-back would not wait for, and separates the two phases.
        crate::phases::time("kernel", || {
            self.queue.submit([encoder.finish()]);
            self.wait()
        })?;
        crate::phases::scoped("readback", || {
            self.read_back_into(kernel, &prepared, args, streaming)
        })?;
        let run = GpuRun {
            bound: prepared.bound.clone(),
            compile_ms: prepared.compile_ms,
            build_phases: prepared.build_phases,
            cache_hit: prepared.cache_hit,
            notes: prepared.notes.clone(),
            plan: prepared.pipeline.plan.clone(),
            workgroup_size: prepared.workgroup_size,
        };
        Ok((
            run,
            Resident {
                buffers: prepared.owned,
                stale: std::sync::Mutex::new(stale),
            },
        ))
    }

    /// Waits for all submitted work; a lost device is an error.
    pub fn wait(&self) -> Result<(), GpuError> {
        // Pipelines built for the work submitted are saved while it runs.
        self.flush_disk_cache();
        self.device
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| GpuError::Lost(e.to_string()))?;
        self.check_lost()
    }
}

impl Prepared {
    /// The buffer [`Gpu::prepare`] made for tensor parameter `param`
    /// (`None` for scalars and the caller's own buffers).
    pub fn buffer(&self, param: usize) -> Option<&wgpu::Buffer> {
        self.owned.get(param).and_then(Option::as_ref)
    }

    /// The workgroups each dispatch launches.
    pub fn workgroups(&self) -> [u32; 3] {
        self.workgroups
    }

    /// Records the dispatch into `encoder`, with timestamps written at the
    /// pass's start and end into `timestamps` (a query set and its first
    /// index) when given.
    pub fn encode(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        timestamps: Option<(&wgpu::QuerySet, u32)>,
    ) {
        record(
            encoder,
            &self.pipeline,
            &self.bind_group,
            self.workgroups,
            timestamps,
        );
    }
}

fn record(
    encoder: &mut wgpu::CommandEncoder,
    pipeline: &Pipeline,
    bind_group: &wgpu::BindGroup,
    workgroups: [u32; 3],
    timestamps: Option<(&wgpu::QuerySet, u32)>,
) {
    if workgroups.contains(&0) {
        return;
    }
    let timestamp_writes = timestamps.map(|(query_set, first)| wgpu::ComputePassTimestampWrites {
        query_set,
        beginning_of_pass_write_index: Some(first),
        end_of_pass_write_index: Some(first + 1),
    });
    let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
        label: Some("phobos"),
        timestamp_writes,
    });
    pass.set_pipeline(&pipeline.pipeline);
    pass.set_bind_group(0, bind_group, &[]);
    let [x, y, z] = workgroups;
    pass.dispatch_workgroups(x, y, z);
}
