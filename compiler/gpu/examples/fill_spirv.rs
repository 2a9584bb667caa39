//! Writes every Tandem fill kernel's exact-mode SPIR-V, with the options
//! the runtime gives an NVIDIA device (`runtime/src/gpu/fill/mod.rs`:
//! branch fallback, f64 checks, 64-bit integers), as
//! `DIR/tandem_MAP_KERNEL.spv`, for instruction counts without a GPU
//! (`bench/spirv-mix.py`).
//!
//!     cargo run -p phobos-gpu --example fill_spirv -- DIR [K]

use phobos_gpu::tandem::{FillMap, Kernel, kernel_spirv};
use phobos_gpu::{GpuOptions, Precision};

fn main() {
    let mut args = std::env::args().skip(1);
    let dir = std::path::PathBuf::from(args.next().expect("usage: fill_spirv DIR [K]"));
    let k = args.next().map_or(32, |k| k.parse().expect("K"));
    let options = GpuOptions {
        precision: Precision::Exact,
        branch_fallback: true,
        wide_div: true,
        int64: true,
        ..Default::default()
    };
    std::fs::create_dir_all(&dir).expect("the output directory");
    for map in FillMap::ALL {
        for kernel in [Kernel::Fill, Kernel::Misses] {
            if kernel == Kernel::Misses && !map.has_misses() {
                continue;
            }
            let words = kernel_spirv(map, kernel, k, &options).expect("SPIR-V");
            let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
            let path = dir.join(format!("tandem_{}_{kernel:?}.spv", map.name()));
            std::fs::write(&path, bytes).expect("writing SPIR-V");
        }
    }
}
