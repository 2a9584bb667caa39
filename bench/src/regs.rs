//! What the driver made of a compute shader: the statistics of
//! `VK_KHR_pipeline_executable_properties` (on NVIDIA the registers per
//! invocation and the shared memory, which bound occupancy), for SPIR-V
//! files that `phobosc build --target spirv` wrote; `--dump DIR` also
//! writes the driver's internal representations of each (where it gives
//! any) into `DIR`.
//!
//! ```text
//! phobos-bench-regs [--dump DIR] FILE.spv ...
//! ```
//!
//! wgpu does not expose these statistics, so this talks to Vulkan through
//! `ash` (the crate wgpu's Vulkan backend is built on). The pipeline layout
//! is one descriptor set with binding 0 a uniform buffer and bindings 1 to
//! 31 storage buffers, a superset of every Phobos kernel's bindings
//! (`phobos_gpu::Layout`); the entry point is `main`.

use ash::vk;
use std::ffi::CStr;

const STORAGE_BINDINGS: u32 = 31;

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), String> {
    let mut files: Vec<String> = std::env::args().skip(1).collect();
    let dump = match files.iter().position(|a| a == "--dump") {
        Some(i) if i + 1 < files.len() => {
            let dir = files.remove(i + 1);
            files.remove(i);
            Some(dir)
        }
        Some(_) => return Err("--dump needs a directory".into()),
        None => None,
    };
    if files.is_empty() {
        return Err("usage: phobos-bench-regs [--dump DIR] FILE.spv ...".into());
    }
    // SAFETY: every Vulkan call below gets valid handles created here, and
    // the objects are destroyed before the device and instance.
    unsafe { stats(&files, dump.as_deref()) }
}

unsafe fn stats(files: &[String], dump: Option<&str>) -> Result<(), String> {
    let entry = unsafe { ash::Entry::load() }.map_err(|e| format!("no Vulkan loader: {e}"))?;
    let app = vk::ApplicationInfo::default().api_version(vk::API_VERSION_1_2);
    let instance = unsafe {
        entry.create_instance(
            &vk::InstanceCreateInfo::default().application_info(&app),
            None,
        )
    }
    .map_err(|e| format!("vkCreateInstance: {e}"))?;
    let physical = unsafe { instance.enumerate_physical_devices() }
        .map_err(|e| format!("vkEnumeratePhysicalDevices: {e}"))?;
    // The first adapter that is not a CPU, else the first.
    let pick = physical
        .iter()
        .copied()
        .find(|&p| {
            unsafe { instance.get_physical_device_properties(p) }.device_type
                != vk::PhysicalDeviceType::CPU
        })
        .or_else(|| physical.first().copied())
        .ok_or("no Vulkan device")?;
    let props = unsafe { instance.get_physical_device_properties(pick) };
    let name = unsafe { CStr::from_ptr(props.device_name.as_ptr()) };
    println!(
        "device: {} (driver version {:#x})",
        name.to_string_lossy(),
        props.driver_version
    );
    let queue = unsafe { instance.get_physical_device_queue_family_properties(pick) }
        .iter()
        .position(|q| q.queue_flags.contains(vk::QueueFlags::COMPUTE))
        .ok_or("no compute queue")? as u32;
    let priorities = [1.0];
    let queues = [vk::DeviceQueueCreateInfo::default()
        .queue_family_index(queue)
        .queue_priorities(&priorities)];
    let has_stats = unsafe { instance.enumerate_device_extension_properties(pick) }
        .map_err(|e| format!("vkEnumerateDeviceExtensionProperties: {e}"))?
        .iter()
        .any(|x| {
            let name = unsafe { CStr::from_ptr(x.extension_name.as_ptr()) };
            name == ash::khr::pipeline_executable_properties::NAME
        });
    if !has_stats {
        println!("(the device lacks VK_KHR_pipeline_executable_properties: creation times only)");
    }
    let extensions: Vec<*const std::ffi::c_char> = if has_stats {
        vec![ash::khr::pipeline_executable_properties::NAME.as_ptr()]
    } else {
        Vec::new()
    };
    let mut exec = vk::PhysicalDevicePipelineExecutablePropertiesFeaturesKHR::default()
        .pipeline_executable_info(true);
    let mut f12 = vk::PhysicalDeviceVulkan12Features::default();
    let mut f11 = vk::PhysicalDeviceVulkan11Features::default();
    let mut features = vk::PhysicalDeviceFeatures2::default()
        .push_next(&mut f11)
        .push_next(&mut f12);
    unsafe { instance.get_physical_device_features2(pick, &mut features) };
    // Every feature the device has, so that any capability a module
    // declares (Float64, Int64, ...) is enabled.
    let mut features = if has_stats {
        features.push_next(&mut exec)
    } else {
        features
    };
    let info = vk::DeviceCreateInfo::default()
        .queue_create_infos(&queues)
        .enabled_extension_names(&extensions)
        .push_next(&mut features);
    let device = unsafe { instance.create_device(pick, &info, None) }
        .map_err(|e| format!("vkCreateDevice: {e}"))?;
    let exe = ash::khr::pipeline_executable_properties::Device::new(&instance, &device);

    let mut bindings = vec![
        vk::DescriptorSetLayoutBinding::default()
            .binding(0)
            .descriptor_type(vk::DescriptorType::UNIFORM_BUFFER)
            .descriptor_count(1)
            .stage_flags(vk::ShaderStageFlags::COMPUTE),
    ];
    for b in 1..=STORAGE_BINDINGS {
        bindings.push(
            vk::DescriptorSetLayoutBinding::default()
                .binding(b)
                .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                .descriptor_count(1)
                .stage_flags(vk::ShaderStageFlags::COMPUTE),
        );
    }
    let set = unsafe {
        device.create_descriptor_set_layout(
            &vk::DescriptorSetLayoutCreateInfo::default().bindings(&bindings),
            None,
        )
    }
    .map_err(|e| format!("vkCreateDescriptorSetLayout: {e}"))?;
    let sets = [set];
    let layout = unsafe {
        device.create_pipeline_layout(
            &vk::PipelineLayoutCreateInfo::default().set_layouts(&sets),
            None,
        )
    }
    .map_err(|e| format!("vkCreatePipelineLayout: {e}"))?;

    for file in files {
        let bytes = std::fs::read(file).map_err(|e| format!("{file}: {e}"))?;
        if bytes.len() % 4 != 0 || bytes.len() < 20 {
            return Err(format!("{file}: not SPIR-V (length {})", bytes.len()));
        }
        let words: Vec<u32> = bytes
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        let module = unsafe {
            device.create_shader_module(&vk::ShaderModuleCreateInfo::default().code(&words), None)
        }
        .map_err(|e| format!("{file}: vkCreateShaderModule: {e}"))?;
        let stage = vk::PipelineShaderStageCreateInfo::default()
            .stage(vk::ShaderStageFlags::COMPUTE)
            .module(module)
            .name(c"main");
        let create = vk::ComputePipelineCreateInfo::default()
            .stage(stage)
            .layout(layout)
            .flags(if has_stats {
                vk::PipelineCreateFlags::CAPTURE_STATISTICS_KHR
                    | vk::PipelineCreateFlags::CAPTURE_INTERNAL_REPRESENTATIONS_KHR
            } else {
                vk::PipelineCreateFlags::empty()
            });
        let started = std::time::Instant::now();
        let pipeline =
            unsafe { device.create_compute_pipelines(vk::PipelineCache::null(), &[create], None) }
                .map_err(|(_, e)| format!("{file}: vkCreateComputePipelines: {e}"))?[0];
        let ms = started.elapsed().as_secs_f64() * 1e3;
        let mut line = format!("{file}: created in {ms:.1} ms");
        let executables = if !has_stats {
            Vec::new()
        } else {
            unsafe {
                exe.get_pipeline_executable_properties(
                    &vk::PipelineInfoKHR::default().pipeline(pipeline),
                )
            }
            .map_err(|e| format!("{file}: vkGetPipelineExecutablePropertiesKHR: {e}"))?
        };
        for index in 0..executables.len() as u32 {
            let info = vk::PipelineExecutableInfoKHR::default()
                .pipeline(pipeline)
                .executable_index(index);
            let stats = unsafe { exe.get_pipeline_executable_statistics(&info) }
                .map_err(|e| format!("{file}: vkGetPipelineExecutableStatisticsKHR: {e}"))?;
            for s in &stats {
                let name = unsafe { CStr::from_ptr(s.name.as_ptr()) }.to_string_lossy();
                let value = match s.format {
                    vk::PipelineExecutableStatisticFormatKHR::BOOL32 => {
                        (unsafe { s.value.b32 } != 0).to_string()
                    }
                    vk::PipelineExecutableStatisticFormatKHR::INT64 => {
                        unsafe { s.value.i64 }.to_string()
                    }
                    vk::PipelineExecutableStatisticFormatKHR::UINT64 => {
                        unsafe { s.value.u64 }.to_string()
                    }
                    _ => format!("{:.3}", unsafe { s.value.f64 }),
                };
                line.push_str(&format!("; {name} = {value}"));
            }
        }
        println!("{line}");
        if let Some(dir) = dump {
            for index in 0..executables.len() as u32 {
                let info = vk::PipelineExecutableInfoKHR::default()
                    .pipeline(pipeline)
                    .executable_index(index);
                let mut reps =
                    unsafe { exe.get_pipeline_executable_internal_representations(&info) }
                        .map_err(|e| format!("{file}: internal representations: {e}"))?;
                let mut buffers: Vec<Vec<u8>> =
                    reps.iter().map(|r| vec![0u8; r.data_size]).collect();
                for (r, b) in reps.iter_mut().zip(&mut buffers) {
                    r.p_data = b.as_mut_ptr().cast();
                }
                let mut count = reps.len() as u32;
                let result = unsafe {
                    (exe.fp()
                        .get_pipeline_executable_internal_representations_khr)(
                        exe.device(),
                        &info,
                        &mut count,
                        reps.as_mut_ptr(),
                    )
                };
                if result != vk::Result::SUCCESS {
                    return Err(format!("{file}: internal representations: {result}"));
                }
                for (r, b) in reps.iter().zip(&buffers) {
                    let name = unsafe { CStr::from_ptr(r.name.as_ptr()) }.to_string_lossy();
                    let stem = std::path::Path::new(file)
                        .file_name()
                        .map(|n| n.to_string_lossy().into_owned())
                        .unwrap_or_default();
                    let out = std::path::Path::new(dir).join(format!(
                        "{stem}.{index}.{}.txt",
                        name.replace(['/', ' '], "_")
                    ));
                    std::fs::write(&out, &b[..r.data_size.min(b.len())])
                        .map_err(|e| format!("{}: {e}", out.display()))?;
                    println!("  wrote {} ({} bytes)", out.display(), r.data_size);
                }
            }
        }
        unsafe {
            device.destroy_pipeline(pipeline, None);
            device.destroy_shader_module(module, None);
        }
    }
    unsafe {
        device.destroy_pipeline_layout(layout, None);
        device.destroy_descriptor_set_layout(set, None);
        device.destroy_device(None);
        instance.destroy_instance(None);
    }
    Ok(())
}
