//! Check lines are spread over a grid of blocks (`sema::check_grid`), and
//! count exactly what a plain-Rust count of the same elements says, on
//! every backend: rows that do not fill the last block, a rank-1 check, a
//! tensor broadcast along the rows, an integer value, a float value that
//! is -0.0 in places (which does not hold), a
//! reduction along the other axis (spread) and one along the spread axis
//! (left in one block).

use phobos_core::Program;
use phobos_core::ir::{GridExpr, Index, Stmt};
use phobos_core::launch::Arg;
use phobos_core::tensor::Tensor;
use phobos_core::types::{Dim, Scalar, Value};
use phobos_runtime::checks::{self, CheckResult};
use phobos_runtime::{Backend, Options, launch_kept};

const SRC: &str = "\
// check ragged rows: Y > 1.5
// check rank one: A < 1.25
// check broadcast: Y >= B
// check odd values: I % 2
// check row sums: sum(I, axis = 1) % 3 == 0
// check column sums: sum(I, axis = 0) % 3 == 0
// check signed zero: (B - 1.5) * (Y - Y - 1.0)
kernel copy(X: tensor<f32>[M, 256], B: tensor<f32>[256], A: tensor<f32>[N], I: tensor<i32>[M, 256], Y: tensor<f32>[M, 256]) {
  Y = X
}
";

/// Rows that leave the last block of 16 rows (256 columns) a quarter full,
/// and a rank-1 tensor that leaves its last block of 4096 part full.
const M: usize = 1000;
const N: usize = 10_003;

fn x(i: usize) -> f32 {
    1.0 + (i as f32 * 0.618).fract()
}

fn b(j: usize) -> f32 {
    1.0 + j as f32 / 256.0
}

fn a(i: usize) -> f32 {
    1.0 + (i as f32 * 0.377).fract() * 0.5
}

fn iv(i: usize) -> i32 {
    (i % 7) as i32 + (i / 256 % 5) as i32
}

/// Each check's count, by a plain loop over the elements.
fn expected() -> Vec<usize> {
    let rows = |r: usize| (0..256).map(move |j| r * 256 + j);
    let row_sums = (0..M).map(|r| rows(r).map(iv).sum::<i32>());
    let column_sums = (0..256).map(|j| (0..M).map(|r| iv(r * 256 + j)).sum::<i32>());
    vec![
        (0..M * 256).filter(|&i| x(i) > 1.5).count(),
        (0..N).filter(|&i| a(i) < 1.25).count(),
        (0..M * 256).filter(|&i| x(i) >= b(i % 256)).count(),
        (0..M * 256).filter(|&i| iv(i) % 2 != 0).count(),
        row_sums.filter(|s| s % 3 == 0).count(),
        column_sums.filter(|s| s % 3 == 0).count(),
        // -0.0 at column 128 holds no more than 0.0 would.
        M * 255,
    ]
}

fn checks_on(backend: Backend) -> Vec<CheckResult> {
    let (program, diags) = Program::parse("copy.ph", SRC);
    assert!(diags.is_empty(), "{diags:?}");
    let kernel = program.kernel("copy", &[]).expect("checks");
    let mut args = vec![
        Arg::Tensor(Tensor::from_fn(Scalar::F32, &[M, 256], |i| {
            Value::F32(x(i))
        })),
        Arg::Tensor(Tensor::from_fn(Scalar::F32, &[256], |j| Value::F32(b(j)))),
        Arg::Tensor(Tensor::from_fn(Scalar::F32, &[N], |i| Value::F32(a(i)))),
        Arg::Tensor(Tensor::from_fn(Scalar::I32, &[M, 256], |i| {
            Value::I32(iv(i))
        })),
        Arg::Tensor(Tensor::zeros(Scalar::F32, &[M, 256])),
    ];
    let options = Options {
        backend,
        ..Options::default()
    };
    let (prov, resident) = launch_kept(&kernel, &mut args, &options).expect("runs");
    assert_eq!(prov.backend, backend);
    checks::evaluate_kept(
        &program,
        "copy",
        &kernel,
        &mut args,
        &options,
        resident.as_ref(),
    )
    .expect("checks evaluate")
}

fn assert_counts(results: &[CheckResult], backend: Backend) {
    let want = expected();
    let totals = [M * 256, N, M * 256, M * 256, M, 256, M * 256];
    for ((c, want), total) in results.iter().zip(&want).zip(totals) {
        assert_eq!(
            (c.holds, c.total),
            (*want, total),
            "`{}` on {}",
            c.name,
            backend.name()
        );
        assert_eq!(c.backend, backend, "`{}`: {:?}", c.name, c.fallback);
    }
    assert_eq!(results.len(), want.len());
    // Not vacuous: every check holds for some elements and fails for others
    // (but `column sums`, which may hold everywhere or nowhere).
    for (c, want) in results.iter().zip(&want).take(5) {
        assert!(*want > 0 && *want < c.total, "`{}`: {want}", c.name);
    }
}

#[test]
fn spread_checks_count_what_a_plain_count_says_on_interp_and_cpu() {
    for backend in [Backend::Interp, Backend::Cpu] {
        assert_counts(&checks_on(backend), backend);
    }
}

#[test]
fn spread_checks_count_what_a_plain_count_says_on_the_gpu() {
    if let Err(e) = phobos_runtime::gpu::Gpu::shared() {
        if std::env::var_os("PHOBOS_REQUIRE_GPU").is_some() {
            panic!("PHOBOS_REQUIRE_GPU is set and there is no adapter: {e}");
        }
        eprintln!("skipped: no GPU adapter ({e})");
        return;
    }
    assert_counts(&checks_on(Backend::Gpu), Backend::Gpu);
}

/// The checks' kernels: a grid of blocks of rows (a block's tile of at
/// most 4096 elements, so an invocation's loop is short whatever the
/// tensor's size), except the one that reduces along the rows.
#[test]
fn check_kernels_are_spread_over_blocks_of_rows() {
    let (program, diags) = Program::parse("copy.ph", SRC);
    assert!(diags.is_empty(), "{diags:?}");
    let checks = program.checks_for("copy");
    let mut grids = Vec::new();
    for check in &checks {
        let k = program
            .check_kernel("copy", &[], check)
            .expect("the check kernel checks");
        let [Stmt::Store { index, .. }] = k.body.as_slice() else {
            panic!("`{}`: one store, got {:?}", check.name, k.body)
        };
        let tile: Option<u64> = index.iter().try_fold(1, |n, i| match i {
            Index::Range {
                len: Dim::Const(l), ..
            } => Some(n * l),
            _ => None,
        });
        grids.push((k.grid[0].clone(), tile));
    }
    let sym = |name: &str| {
        let k = program.kernel("copy", &[]).expect("checks");
        k.dims.iter().position(|d| d == name).expect("a dim")
    };
    let cdiv =
        |d: usize, r: i64| GridExpr::Cdiv(Box::new(GridExpr::Dim(d)), Box::new(GridExpr::Const(r)));
    let m_rows = (cdiv(sym("M"), 16), Some(16 * 256));
    assert_eq!(
        grids,
        [
            m_rows.clone(),
            (cdiv(sym("N"), 4096), Some(4096)),
            m_rows.clone(),
            m_rows.clone(),
            (cdiv(sym("M"), 4096), Some(4096)),
            // Reduced along the spread axis: one block, the whole tile.
            (GridExpr::Const(1), Some(256)),
            m_rows,
        ]
    );
}
