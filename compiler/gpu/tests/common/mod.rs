//! What several of the GPU crate's test files share.

use phobos_core::ir::Kernel;

/// `kernel` as a launch at its source's `// dims:` line builds it, where it
/// keeps a tile over a dim in workgroup memory (attention's `acc:
/// tile<f32>[BM, D]`), which no module of symbolic dims can hold; else as
/// it is.
pub fn as_launched(kernel: Kernel, text: &str) -> Kernel {
    if phobos_gpu::plan::symbolic_tiles_diagnostic(&kernel).is_none() {
        return kernel;
    }
    let line = text.lines().find_map(|l| l.strip_prefix("// dims:"));
    let given: Vec<(&str, u64)> = line
        .unwrap_or_else(|| panic!("`{}`: its source has no `// dims:` line", kernel.name))
        .split(',')
        .filter_map(|kv| kv.split_once('='))
        .map(|(d, v)| (d.trim(), v.trim().parse().expect("a number")))
        .collect();
    let values: Vec<u64> = kernel
        .dims
        .iter()
        .map(|d| {
            given
                .iter()
                .find(|(n, _)| n == d)
                .expect("every dim given")
                .1
        })
        .collect();
    phobos_gpu::specialize(&kernel, &values).into_owned()
}
