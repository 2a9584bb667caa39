//! Which graphics APIs can keep exact mode's contract, decided once from
//! the adapter's API and features (a pure function, tested over every API).
//!
//! Exact mode promises the interpreter's bits: no `a*b+c` fused into one
//! rounding, subnormals and signed zeros kept. Phobos keeps that promise by
//! decorating its own SPIR-V (`NoContraction` on every float operation, the
//! float-controls execution modes; `phobos_gpu::spirv_exact`) and handing it
//! to the driver unchanged through wgpu's SPIR-V passthrough. Only Vulkan
//! loads SPIR-V. On Metal and DX12 wgpu translates the module into MSL or
//! HLSL, and neither translation can say what the SPIR-V says: wgpu compiles
//! MSL with Metal's default fast math (contraction and reassociation
//! allowed), and naga's HLSL carries no `precise` while DXC is free to flush
//! f32 subnormals. Fast mode asks for none of this and runs on every API.
//!
//! What happens when exact mode cannot run (see `crate::launch`): a launch
//! that asked for the GPU is refused with [`ExactSupport::why_not`]'s
//! message; `Backend::Auto` runs on the CPU backend instead (same bits), and
//! the provenance says so.

/// Whether a device can run exact mode, and if not, why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExactSupport {
    /// Vulkan with SPIR-V passthrough: exact kernels run on the device.
    Yes,
    /// Why not, naming the device and its API.
    No(String),
}

impl ExactSupport {
    /// Decides for a device of graphics API `api` opened with `features`
    /// (its name, `device`, goes into the message).
    pub fn of(api: wgpu::Backend, features: wgpu::Features, device: &str) -> ExactSupport {
        let why = match api {
            wgpu::Backend::Vulkan if features.contains(wgpu::Features::PASSTHROUGH_SHADERS) => {
                return ExactSupport::Yes;
            }
            wgpu::Backend::Vulkan => format!(
                "{device} (Vulkan) does not offer SPIR-V passthrough, so exact mode cannot stop \
                 the driver from fusing `a*b+c` or flushing subnormals"
            ),
            wgpu::Backend::Metal => format!(
                "{device} runs Metal, where wgpu translates kernels to MSL compiled with fast \
                 math, which may fuse `a*b+c` and reassociate; exact mode needs Vulkan's \
                 SPIR-V passthrough"
            ),
            wgpu::Backend::Dx12 => format!(
                "{device} runs DX12, where wgpu translates kernels to HLSL, which cannot forbid \
                 fusing `a*b+c` (no `precise`) and may flush f32 subnormals; exact mode needs \
                 Vulkan's SPIR-V passthrough"
            ),
            other => format!(
                "{device} runs {}, which cannot load Phobos's exact SPIR-V; exact mode needs \
                 Vulkan's SPIR-V passthrough",
                other.to_str()
            ),
        };
        ExactSupport::No(why)
    }

    /// Why exact mode cannot run here, naming the device and its API.
    pub fn why_not(&self) -> Option<&str> {
        match self {
            ExactSupport::Yes => None,
            ExactSupport::No(why) => Some(why),
        }
    }

    /// The error of an exact kernel launched here: [`ExactSupport::why_not`]
    /// and what to do instead.
    pub fn refusal(&self) -> Option<String> {
        self.why_not().map(|why| {
            format!(
                "{why}; use `--precision fast` (native float operations) on the GPU, or \
                 `--backend cpu` for exact results"
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::ExactSupport;
    use wgpu::{Backend, Features};

    #[test]
    fn only_vulkan_with_passthrough_runs_exact() {
        let pass = Features::PASSTHROUGH_SHADERS;
        assert_eq!(
            ExactSupport::of(Backend::Vulkan, pass, "H200"),
            ExactSupport::Yes
        );
        // Passthrough on Metal and DX12 takes MSL and DXIL, not SPIR-V:
        // the feature alone is not enough.
        for (api, name) in [
            (Backend::Metal, "Metal"),
            (Backend::Dx12, "DX12"),
            (Backend::Gl, "gl"),
            (Backend::BrowserWebGpu, "webgpu"),
            (Backend::Noop, "noop"),
        ] {
            for features in [pass, Features::empty()] {
                let s = ExactSupport::of(api, features, "Some GPU");
                let why = s.refusal().unwrap_or_else(|| panic!("{api:?} refused"));
                assert!(why.contains(name), "{api:?}: {why}");
                assert!(
                    why.contains("Some GPU") && why.contains("--precision fast"),
                    "{why}"
                );
            }
        }
        let no_pass = ExactSupport::of(Backend::Vulkan, Features::empty(), "lavapipe");
        let why = no_pass.why_not().expect("refused without passthrough");
        assert!(
            why.contains("Vulkan") && why.contains("passthrough"),
            "{why}"
        );
    }
}
