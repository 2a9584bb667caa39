//! What several of the runtime's tests share.

use phobos_runtime::gpu::Gpu;

/// A GPU, or `None` with a note on stderr where there is no adapter, unless
/// `PHOBOS_REQUIRE_GPU` is set: then a missing adapter fails the test.
pub fn gpu_or_skip() -> Option<Gpu> {
    match Gpu::new() {
        Ok(gpu) => Some(gpu),
        Err(e) if std::env::var_os("PHOBOS_REQUIRE_GPU").is_none() => {
            eprintln!("skipped: no GPU adapter ({e})");
            None
        }
        Err(e) => panic!("PHOBOS_REQUIRE_GPU is set and there is no adapter: {e}"),
    }
}
