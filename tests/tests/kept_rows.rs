//! The whole-row examples on a device told to compile reductions for
//! subgroups of 16 lanes (`Gpu::set_subgroup_width`), which neither
//! lavapipe (8 lanes) nor NVIDIA (32) has: each block's check at its start
//! fails, so the reductions go through workgroup memory, and the values a
//! row keeps in registers across statements (`compiler/gpu/src/lower/
//! row_cache.rs`) are filled by the loop beside that path (`row_fill`)
//! instead of by the subgroup path. Every output must be the interpreter's,
//! bit for bit. Without an adapter each test skips and says so
//! (`PHOBOS_REQUIRE_GPU=1` makes that a failure).

use phobos_core::launch::Arg;
use phobos_core::tensor::{Data, Tensor};
use phobos_core::types::Value;
use phobos_runtime::gpu::Gpu;
use phobos_tests::{example_kernel, gpu_available, same_bits_on};
use std::sync::OnceLock;

/// The subgroup width no device here has.
const WIDTH: u32 = 16;

fn gpu() -> &'static Gpu {
    static GPU: OnceLock<Gpu> = OnceLock::new();
    GPU.get_or_init(|| {
        let gpu = Gpu::new().expect("gpu_available said yes");
        gpu.set_subgroup_width(Some(WIDTH));
        gpu
    })
}

fn f32s(shape: &[usize], seed: u32) -> Arg {
    let n: usize = shape.iter().product();
    let data = (0..n)
        .map(|i| {
            let h = (i as u32 ^ seed).wrapping_mul(0x9E37_79B9) >> 8;
            -8.0 + 16.0 * h as f32 / 16_777_216.0
        })
        .collect();
    Arg::Tensor(Tensor {
        shape: shape.to_vec(),
        data: Data::F32(data),
    })
}

fn same_as_interp(name: &str, args: Vec<Arg>) {
    let what = format!("the GPU with subgroups of {WIDTH}");
    same_bits_on(gpu(), &what, &example_kernel(name), args);
}

/// Rows of 8192 and 4096 at R = 1 in workgroups of 256: blocks of 32 and
/// 16 elements a lane, which keep `X` and `exp(X - m)` (`rows:` notes).
#[test]
fn softmax_keeps_its_rows_through_the_workgroup_memory_path() {
    if !gpu_available() {
        return;
    }
    for (m, n) in [(3, 8192), (5, 4096)] {
        let args = vec![
            f32s(&[m, n], 1),
            f32s(&[m, n], 2),
            Arg::Scalar(Value::I32(77)),
        ];
        same_as_interp("softmax_dropout", args);
    }
}

#[test]
fn layernorm_keeps_its_rows_through_the_workgroup_memory_path() {
    if !gpu_available() {
        return;
    }
    for (m, n) in [(3, 8192), (5, 4096)] {
        let args = vec![
            f32s(&[m, n], 3),
            f32s(&[n], 4),
            f32s(&[n], 5),
            f32s(&[m, n], 6),
            Arg::Scalar(Value::I32(78)),
        ];
        same_as_interp("layernorm_dropout", args);
    }
}

/// The Tandem twins: their store draws words whose counters run along the
/// row, so the words are stepped into workgroup memory by chunk for the
/// whole tile and each kept leaf reads its own (`with_row_words` in
/// `compiler/gpu/src/lower/tandem_draw/staged.rs`). Rows of 1024 take
/// that path; rows of 2048 and 8192 are longer than it takes, so their
/// words are stepped by the store's own loop (`stepped.rs`).
#[test]
fn tandem_twins_stage_their_words_for_the_kept_rows() {
    if !gpu_available() {
        return;
    }
    const KEY: Value = Value::U32(0x5eed_1234);
    for (m, n) in [(5, 1024), (3, 2048), (2, 8192)] {
        let args = vec![f32s(&[m, n], 7), f32s(&[m, n], 8), Arg::Scalar(KEY)];
        same_as_interp("softmax_dropout_tandem", args);
        let args = vec![
            f32s(&[m, n], 9),
            f32s(&[n], 10),
            f32s(&[n], 11),
            f32s(&[m, n], 12),
            Arg::Scalar(KEY),
        ];
        same_as_interp("layernorm_dropout_tandem", args);
    }
}
