//! Whether this device lays out subgroups as reductions want them, learned
//! once by dispatching `phobos_gpu::subgroup_probe` (the conditions of the
//! kernels' own check, read back per invocation), so that kernels can be built without
//! checking it in every workgroup (`GpuOptions::subgroup_layout_known`).

use super::Gpu;

impl Gpu {
    /// Whether every workgroup's subgroups here are
    /// [`Gpu::subgroup_width`] lanes in invocation order: the device's
    /// subgroups have that one width, no width is forced
    /// ([`Gpu::set_subgroup_width`]), `PHOBOS_SUBGROUP_LAYOUT` is not
    /// `check`, and the probe found every invocation in order in a
    /// workgroup of the most invocations and in one of two subgroups. Asked
    /// once; any error answers `false` (kernels then check for themselves).
    pub fn subgroup_layout_known(&self) -> bool {
        *self.layout_known.get_or_init(|| {
            let g = self.subgroup_width();
            let forced = self.forced_subgroup_width.lock().unwrap().is_some();
            if g < 2 || forced || std::env::var("PHOBOS_SUBGROUP_LAYOUT").as_deref() == Ok("check")
            {
                return false;
            }
            let most = self
                .device
                .limits()
                .max_compute_invocations_per_workgroup
                .min(phobos_gpu::MAX_WORKGROUP_SIZE);
            let most = most - most % g;
            most >= g && [most, 2 * g].iter().all(|&w| self.probe(w.min(most), g))
        })
    }

    /// One dispatch of the probe at `workgroup_size` invocations: whether
    /// every invocation found its subgroup in order.
    fn probe(&self, workgroup_size: u32, g: u32) -> bool {
        let device = &self.device;
        let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("subgroup probe"),
            source: wgpu::ShaderSource::Naga(std::borrow::Cow::Owned(phobos_gpu::subgroup_probe(
                workgroup_size,
                g,
            ))),
        });
        let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some("subgroup probe"),
            layout: None,
            module: &module,
            entry_point: Some(phobos_gpu::ENTRY_POINT),
            compilation_options: Default::default(),
            cache: None,
        });
        let bytes = u64::from(workgroup_size) * 4;
        let out = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("subgroup probe"),
            size: bytes,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        let read = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("subgroup probe read-back"),
            size: bytes,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("subgroup probe"),
            layout: &pipeline.get_bind_group_layout(0),
            entries: &[wgpu::BindGroupEntry {
                binding: 0,
                resource: out.as_entire_binding(),
            }],
        });
        let mut enc = device.create_command_encoder(&Default::default());
        {
            let mut pass = enc.begin_compute_pass(&Default::default());
            pass.set_pipeline(&pipeline);
            pass.set_bind_group(0, &group, &[]);
            pass.dispatch_workgroups(1, 1, 1);
        }
        enc.copy_buffer_to_buffer(&out, 0, &read, 0, bytes);
        self.queue.submit([enc.finish()]);
        if pollster::block_on(scope.pop()).is_some() {
            return false;
        }
        read.map_async(wgpu::MapMode::Read, .., |_| {});
        if self.wait().is_err() {
            return false;
        }
        let Ok(view) = read.get_mapped_range(..) else {
            return false;
        };
        let words: &[u32] = bytemuck::cast_slice(&view);
        words.len() == workgroup_size as usize && words.iter().all(|&w| w == 0)
    }
}
