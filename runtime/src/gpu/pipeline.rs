//! Lowering a kernel and turning it into a wgpu compute pipeline.

use super::{Gpu, GpuError};
use crate::Precision;
use phobos_core::ir::Kernel;
use std::borrow::Cow;
use std::path::Path;
use std::time::Instant;

pub(crate) struct Pipeline {
    pub pipeline: wgpu::ComputePipeline,
    pub layout: wgpu::BindGroupLayout,
    /// Where the lowering put the uniform fields and the tensors.
    pub bindings: phobos_gpu::Layout,
    pub build_ms: f64,
    /// Where `build_ms` went.
    pub phases: BuildPhases,
    /// How the lowering took the kernel's Tandem draws (`Compiled::notes`).
    pub notes: Vec<String>,
    /// The plan this pipeline's module follows, as `phobosc build
    /// --explain` prints it (`Compiled::explain`), for this device's
    /// options.
    pub plan: std::sync::Arc<str>,
    /// Invocations per workgroup.
    pub workgroup_size: u32,
    /// `Compiled::blocks_per_workgroup`.
    pub blocks_per_workgroup: u32,
}

/// Where the building of a pipeline went, in milliseconds: what a warm
/// start is made of, measured where it happens (bench `phobos-bench-table`'s
/// compile rows print it).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct BuildPhases {
    /// The lowering to a naga module (`phobos_gpu::compile_split`).
    pub lower_ms: f64,
    /// Writing the module's SPIR-V (exact mode, or the disk cache's key).
    pub spirv_ms: f64,
    /// Creating the bind group layout and the pipeline layout.
    pub layout_ms: f64,
    /// Creating the shader module.
    pub module_ms: f64,
    /// Creating the compute pipeline (the driver's compiler, or its cache).
    pub pipeline_ms: f64,
}

impl Pipeline {
    pub fn build(
        gpu: &Gpu,
        kernel: &Kernel,
        precision: Precision,
        splits: &[Option<phobos_gpu::Split>],
        workgroup_size: u32,
    ) -> Result<Pipeline, GpuError> {
        let started = Instant::now();
        if precision == Precision::Exact && !gpu.can_run_exact() {
            return Err(GpuError::NotExact(format!(
                "{} cannot load SPIR-V unchanged (no PASSTHROUGH_SHADERS), so exact mode cannot stop \
                 the driver from fusing `a*b+c` or flushing subnormals; use `--precision fast` \
                 (native float operations) or another backend",
                gpu.describe()
            )));
        }
        let options = phobos_gpu::GpuOptions {
            precision,
            workgroup_size,
            // Lavapipe hangs on the branch (see `GpuOptions::branch_fallback`).
            branch_fallback: !gpu.info.name.contains("llvmpipe"),
            // `Gpu::set_wide_checks`: automatic unless asked. Lavapipe
            // (Mesa 22.3) gets the integer-only functions by default: its
            // optimiser folds float expressions around the f64-checked ones
            // despite `SignedZeroInfNanPreserve` (differential seed 6303:
            // `(0 / -0) * sqrt(0)` came out 0, not NaN), its known
            // `x * 0.0` fold reaching further than with the integer ones.
            wide_div: gpu.wide_checks(),
            heavy_groups: gpu.heavy_groups(),
            // Exact `/`'s reciprocal check reads an f64's bits through a
            // 64-bit integer (`phobos_gpu::DivCheck::Recip`).
            int64: gpu.device.features().contains(wgpu::Features::SHADER_INT64),
            subgroup_shuffle: gpu.subgroup_shuffle(),
            subgroup_width: gpu.subgroup_width(),
            subgroup_layout_known: gpu.subgroup_layout_known(),
            workgroup_memory: u64::from(gpu.device.limits().max_compute_workgroup_storage_size),
            cooperative: gpu.cooperative_f16() && gpu.can_run_exact(),
            knobs: gpu.knobs(),
        };
        match Pipeline::build_with(gpu, kernel, &options, splits, started) {
            // Tensor cores the driver would not take: the same kernel on
            // the ordinary cores, and the provenance says why.
            Err(e @ GpuError::Wgpu(_)) if options.cooperative => {
                let ordinary = phobos_gpu::GpuOptions {
                    cooperative: false,
                    ..options
                };
                let mut p = Pipeline::build_with(gpu, kernel, &ordinary, splits, started)?;
                p.notes.push(format!(
                    "the driver refused the cooperative-matrix pipeline ({e}); products run on the \
                     ordinary cores"
                ));
                Ok(p)
            }
            built => built,
        }
    }

    /// [`Pipeline::build`] with its options made.
    fn build_with(
        gpu: &Gpu,
        kernel: &Kernel,
        options: &phobos_gpu::GpuOptions,
        splits: &[Option<phobos_gpu::Split>],
        started: Instant,
    ) -> Result<Pipeline, GpuError> {
        let (options, precision, workgroup_size) =
            (*options, options.precision, options.workgroup_size);
        let compiled = phobos_gpu::compile_split(kernel, &options, splits)
            .map_err(|e| GpuError::Lower(e.to_string()))?;
        let lowered = Instant::now();
        if let Some(dir) = std::env::var_os("PHOBOS_DUMP_SPIRV") {
            dump_spirv(
                Path::new(&dir),
                &kernel.name,
                workgroup_size,
                &compiled.spirv(),
            );
        }
        check_workgroup_memory(gpu, &compiled)?;
        // The SPIR-V is the pipeline's key in the disk cache; fast mode
        // hands wgpu the module itself, whose SPIR-V stands for it there,
        // except a module with cooperative matrices, which wgpu's
        // validation would refuse (`phobos_gpu::uses_cooperative_matrices`).
        let passthrough = precision == Precision::Exact
            || phobos_gpu::uses_cooperative_matrices(&compiled.module);
        let key_words = match passthrough {
            true => Some(compiled.spirv()),
            false => gpu.disk_cache().map(|_| compiled.spirv()),
        };
        let spirv_written = Instant::now();
        let device = &gpu.device;
        let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);

        let mut entries = vec![wgpu::BindGroupLayoutEntry {
            binding: phobos_gpu::UNIFORM_BINDING,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Uniform,
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        }];
        for t in &compiled.layout.tensors {
            // A split tensor has one binding per piece.
            for k in 0..t.split.map_or(1, |s| s.pieces) {
                entries.push(wgpu::BindGroupLayoutEntry {
                    binding: t.binding + k,
                    visibility: wgpu::ShaderStages::COMPUTE,
                    ty: wgpu::BindingType::Buffer {
                        ty: wgpu::BufferBindingType::Storage {
                            read_only: t.read_only,
                        },
                        has_dynamic_offset: false,
                        min_binding_size: None,
                    },
                    count: None,
                });
            }
        }
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some(&kernel.name),
            entries: &entries,
        });
        let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some(&kernel.name),
            bind_group_layouts: &[Some(&layout)],
            immediate_size: 0,
        });
        let written = Instant::now();
        let shader = match passthrough {
            true => {
                let words = key_words.clone().expect("passthrough writes the SPIR-V");
                let entry = wgpu::PassthroughShaderEntryPoint {
                    name: Cow::Borrowed(phobos_gpu::ENTRY_POINT),
                    workgroup_size: (options.workgroup_size, 1, 1),
                };
                // SAFETY: the words are naga's SPIR-V for a module naga
                // validated, edited only by adding decorations and execution
                // modes that spirv-val accepts (tests check every fixture).
                unsafe {
                    device.create_shader_module_passthrough(
                        wgpu::ShaderModuleDescriptorPassthrough {
                            label: Some(&kernel.name),
                            entry_points: Cow::Owned(vec![entry]),
                            spirv: Some(Cow::Owned(words)),
                            ..Default::default()
                        },
                    )
                }
            }
            false => device.create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some(&kernel.name),
                source: wgpu::ShaderSource::Naga(Cow::Owned(compiled.module.clone())),
            }),
        };
        let moduled = Instant::now();
        let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some(&kernel.name),
            layout: Some(&pipeline_layout),
            module: &shader,
            entry_point: Some(phobos_gpu::ENTRY_POINT),
            compilation_options: Default::default(),
            cache: gpu.disk_cache(),
        });
        if let Some(e) = pollster::block_on(scope.pop()) {
            return Err(GpuError::Wgpu(format!(
                "creating the pipeline of `{}`: {e}",
                kernel.name
            )));
        }
        gpu.check_lost()?;
        let built = Instant::now();
        let ms = |a: Instant, b: Instant| (b - a).as_secs_f64() * 1e3;
        let phases = BuildPhases {
            lower_ms: ms(started, lowered),
            spirv_ms: ms(lowered, spirv_written),
            layout_ms: ms(spirv_written, written),
            module_ms: ms(written, moduled),
            pipeline_ms: ms(moduled, built),
        };
        gpu.note_pipeline_built(key_words.as_deref());
        let plan = compiled.explain().into();
        Ok(Pipeline {
            pipeline,
            layout,
            bindings: compiled.layout,
            build_ms: ms(started, built),
            phases,
            plan,
            notes: compiled.notes,
            workgroup_size,
            blocks_per_workgroup: compiled.blocks_per_workgroup,
        })
    }
}

/// Refuses a kernel whose workgroup memory (its `let`/`var` tiles, staging
/// tiles and staged Tandem words: the lowering's `Budget`) is more than the
/// device has, naming the arrays: SPIR-V passthrough skips wgpu's own
/// check, and some drivers then take minutes or run out of memory instead
/// of failing (lavapipe).
fn check_workgroup_memory(gpu: &Gpu, compiled: &phobos_gpu::Compiled) -> Result<(), GpuError> {
    let limit = u64::from(gpu.device.limits().max_compute_workgroup_storage_size);
    compiled.check_workgroup_memory(limit).map_err(|m| {
        GpuError::WorkgroupMemory(format!(
            "{m} {} has per workgroup; use smaller `let`/`var` tiles, or another backend",
            gpu.describe()
        ))
    })
}

/// `PHOBOS_DUMP_SPIRV=DIR`, for profiling: each pipeline's SPIR-V as
/// `DIR/NAME.wgN.HASH.spv` (a kernel's name, or `tandem_MAP_KERNEL` for a
/// fill's exact-mode module), the module this process lowered for the
/// device (subgroups, workgroup size and precision included), which
/// `phobos-bench-regs` reads. A file that cannot be written is a warning.
pub(super) fn dump_spirv(dir: &Path, name: &str, workgroup_size: u32, words: &[u32]) {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    words.hash(&mut h);
    let path = dir.join(format!("{name}.wg{workgroup_size}.{:016x}.spv", h.finish()));
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    if let Err(e) = std::fs::create_dir_all(dir).and_then(|()| std::fs::write(&path, bytes)) {
        eprintln!(
            "warning: PHOBOS_DUMP_SPIRV: cannot write {}: {e}",
            path.display()
        );
    }
}
