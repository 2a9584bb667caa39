//! Finding an adapter and opening a device on it.

use super::GpuError;

/// The features Phobos asks for when the adapter has them: SPIR-V
/// passthrough (exact mode loads post-processed SPIR-V through it),
/// timestamps (benchmarks), f64 arithmetic (exact division's check,
/// `GpuOptions::wide_div`, and the f64 Tandem fills), 64-bit integers (the
/// Tandem fills' products, `GpuOptions::int64`), pipeline caches
/// (compiled pipelines kept on disk, `disk_cache.rs`) and subgroup
/// operations (stepped Tandem draws in tile order,
/// `GpuOptions::subgroup_shuffle`), and f16 arithmetic with cooperative
/// matrices (tensor cores: `dot` in fast mode, and the GEMM ceiling of
/// `phobos-bench-gemm`).
pub(crate) fn wanted_features(adapter: wgpu::Features) -> wgpu::Features {
    adapter
        & (wgpu::Features::PASSTHROUGH_SHADERS
            | wgpu::Features::TIMESTAMP_QUERY
            | wgpu::Features::SHADER_F64
            | wgpu::Features::SHADER_INT64
            | wgpu::Features::PIPELINE_CACHE
            | wgpu::Features::SUBGROUP
            | wgpu::Features::SHADER_F16
            | wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX)
}

/// The limits Phobos asks for: the defaults raised to what the adapter has
/// where kernels use them (storage bindings per stage, binding and buffer
/// sizes, workgroup memory). Asking for the adapter's limits wholesale can
/// fail on some backends, so only these are raised.
pub(crate) fn wanted_limits(adapter: &wgpu::Limits) -> wgpu::Limits {
    let base = wgpu::Limits::default();
    wgpu::Limits {
        max_storage_buffers_per_shader_stage: adapter.max_storage_buffers_per_shader_stage,
        max_storage_buffer_binding_size: adapter.max_storage_buffer_binding_size,
        max_buffer_size: adapter.max_buffer_size,
        max_compute_workgroup_storage_size: adapter.max_compute_workgroup_storage_size,
        max_compute_invocations_per_workgroup: adapter
            .max_compute_invocations_per_workgroup
            .max(base.max_compute_invocations_per_workgroup),
        max_compute_workgroup_size_x: adapter.max_compute_workgroup_size_x,
        max_compute_workgroups_per_dimension: adapter.max_compute_workgroups_per_dimension,
        ..base
    }
}

/// Every adapter wgpu finds, in its order (`WGPU_BACKEND` narrows the
/// backends searched, as for [`open`]): the numbering of
/// `--devices gpu0,gpu1,...` (`crate::split`).
pub(crate) fn adapters() -> Vec<wgpu::Adapter> {
    let instance =
        wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
    pollster::block_on(instance.enumerate_adapters(wgpu::Backends::all()))
}

/// The best adapter: a discrete or integrated GPU before a software one.
/// `WGPU_BACKEND` narrows the backends searched (CI sets `vulkan`, so that
/// wgpu never falls back to GL).
pub(crate) fn open() -> Result<(wgpu::Adapter, wgpu::Device, wgpu::Queue), GpuError> {
    let instance =
        wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
    let adapter = pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions {
        power_preference: wgpu::PowerPreference::HighPerformance,
        ..Default::default()
    }))
    .map_err(|e| GpuError::NoAdapter(e.to_string()))?;
    let (device, queue) = open_on(&adapter)?;
    Ok((adapter, device, queue))
}

/// A new device on `adapter`, with [`wanted_features`] and
/// [`wanted_limits`]; an adapter may have several open at once.
pub(crate) fn open_on(adapter: &wgpu::Adapter) -> Result<(wgpu::Device, wgpu::Queue), GpuError> {
    let info = adapter.get_info();
    let features = wanted_features(adapter.features());
    let request = |features: wgpu::Features| {
        let coop = features.contains(wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX);
        pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("phobos"),
            required_features: features,
            required_limits: wanted_limits(&adapter.limits()),
            experimental_features: match coop {
                // SAFETY: wgpu asks callers of its experimental features to
                // accept that misuse may be undefined; the only one asked
                // for is cooperative matrices, used only by modules whose
                // shapes come from the adapter's own list.
                true => unsafe { wgpu::ExperimentalFeatures::enabled() },
                false => wgpu::ExperimentalFeatures::disabled(),
            },
            ..Default::default()
        }))
    };
    // A driver that lists cooperative matrices but will not open a device
    // with them still gets a device, without them.
    let coop = wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX;
    let (device, queue) = match request(features) {
        Err(_) if features.contains(coop) => request(features - coop),
        opened => opened,
    }
    .map_err(|e| GpuError::Device(format!("{} ({:?}): {e}", info.name, info.backend)))?;
    Ok((device, queue))
}
