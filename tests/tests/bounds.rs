//! The resource bounds of `phobos_core::bounds`, each tested at its edge:
//! tuning spaces (`MAX_TUNE_CONFIGS`, `E0124`) and `let`/`var` tiles
//! (`MAX_TILE_BYTES`, `E0123` when the checker sees the extents, a launch
//! error when they are dims).

use phobos_core::bounds::{
    MAX_BLOCKS, MAX_CALL_DEPTH, MAX_CHECK_NODES, MAX_TILE_BYTES, MAX_TUNE_CONFIGS,
};
use phobos_core::diag::code;
use phobos_core::launch::{ArgShape, LaunchError, bind_shapes};
use phobos_core::types::Scalar;
use phobos_core::{Diagnostic, Program};
use std::time::{Duration, Instant};

fn check(text: &str) -> (Program, Vec<Diagnostic>) {
    let (p, mut d) = Program::parse("bounds.ph", text);
    d.extend(p.check());
    (p, d)
}

fn codes(d: &[Diagnostic]) -> Vec<&str> {
    d.iter().map(|d| d.code).collect()
}

fn list(n: usize) -> String {
    (1..=n)
        .map(|v| v.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// A kernel that uses both tuning parameters in shapes.
fn two_params(a: usize, b: usize) -> String {
    format!(
        "@autotune(A in [{}], B in [{}])
kernel k(X: tensor<f32>[M, 512], Y: tensor<f32>[M, 512]) {{
  let r = ctx.block.x * A
  Y[r :+ A, 0 :+ B] = X[r :+ A, 0 :+ B]
}}",
        list(a),
        list(b)
    )
}

#[test]
fn a_tuning_space_at_the_bound_is_checked_whole() {
    assert_eq!(MAX_TUNE_CONFIGS, 16 * 256);
    let (p, d) = check(&two_params(16, 256));
    assert_eq!(codes(&d), Vec::<&str>::new());
    let configs = p.configs("k");
    assert_eq!(configs.len(), 4096);
    assert_eq!(configs[0], [("A".to_string(), 1), ("B".to_string(), 1)]);
    assert_eq!(configs[1], [("A".to_string(), 1), ("B".to_string(), 2)]);
    assert_eq!(
        configs[4095],
        [("A".to_string(), 16), ("B".to_string(), 256)]
    );
    assert!(p.kernel("k", &configs[4095]).is_ok());
}

#[test]
fn a_tuning_space_one_over_the_bound_is_refused_with_its_count() {
    // 17 × 241 = 4097.
    let (p, d) = check(&two_params(17, 241));
    assert_eq!(codes(&d), [code::TUNE_SPACE_TOO_LARGE]);
    assert!(
        d[0].message.contains("4097 configurations"),
        "{}",
        d[0].message
    );
    assert!(d[0].message.contains("limit of 4096"), "{}", d[0].message);
    assert_eq!(d[0].labels[0].message, "17 × 241 = 4097 configurations");
    assert!(p.configs("k").is_empty());
    let e = p.kernel("k", &[]).unwrap_err();
    assert_eq!(codes(&e), [code::TUNE_SPACE_TOO_LARGE]);
}

/// The input of issue 16: 10^8 configurations in 1.6 KB of source used to
/// be enumerated whole (over 4 GB). Now it is counted, not built.
#[test]
fn a_huge_tuning_space_is_counted_not_built() {
    let l = list(100);
    let text = format!(
        "@autotune(A in [{l}], B in [{l}], C in [{l}], D in [{l}])
kernel k(X: tensor<f32>[M, 256], Y: tensor<f32>[M, 256]) {{
  let r = ctx.block.x * A
  Y[r :+ A, 0 :+ B] = X[r :+ A, C :+ B] + f32(D)
}}"
    );
    let start = Instant::now();
    let (p, d) = check(&text);
    assert_eq!(codes(&d), [code::TUNE_SPACE_TOO_LARGE]);
    assert!(d[0].message.contains("100000000 configurations"));
    assert!(p.configs("k").is_empty());
    assert!(p.kernel("k", &[("A".to_string(), 7)]).is_err());
    // Far more than it takes, far less than enumerating 10^8.
    assert!(start.elapsed() < Duration::from_secs(10));

    // Past u128: the count saturates and still names the limit.
    let many: Vec<String> = (0..130).map(|i| format!("P{i} in [1, 2]")).collect();
    let text = format!(
        "@autotune({})
kernel k(Y: tensor<f32>[M]) {{
  Y[ctx.block.x * P0 :+ P0] = 1.0
}}",
        many.join(", ")
    );
    let (_, d) = check(&text);
    let space: Vec<_> = d
        .iter()
        .filter(|d| d.code == code::TUNE_SPACE_TOO_LARGE)
        .collect();
    assert_eq!(space.len(), 1);
    assert!(
        space[0].message.contains("more than"),
        "{}",
        space[0].message
    );
    assert_eq!(
        space[0].labels[0].message,
        "130 parameters, more than 340282366920938463463374607431768211455 configurations"
    );
}

/// A problem of some configurations names them by the parameters that
/// decide it; parameters the checker never reads do not multiply the work.
#[test]
fn a_problem_of_some_configurations_names_the_values_that_decide_it() {
    let text = "@autotune(R in [16, 300], W in [1, 2, 3, 4])
kernel k(X: tensor<f32>[M, 256], Y: tensor<f32>[M, 256]) {
  let r = ctx.block.x * R
  Y[r :+ R, 0 :+ R] = X[r :+ R, 0 :+ R]
}";
    let (_, d) = check(text);
    let notes: Vec<(&str, &[String])> = d.iter().map(|d| (d.code, &d.notes[..])).collect();
    assert_eq!(
        notes,
        [
            (code::UNUSED_TUNE_PARAM, &[][..]),
            (
                code::SLICE_OUT_OF_BOUNDS,
                &["only in the configurations with R=300 (4 of 8)".to_string()][..]
            ),
            (
                code::SLICE_OUT_OF_BOUNDS,
                &["only in the configurations with R=300 (4 of 8)".to_string()][..]
            ),
        ]
    );
}

/// A space within `MAX_TUNE_CONFIGS` is still refused when its
/// configurations times its kernel's IR exceed `MAX_CHECK_NODES`: the edge
/// is found with repeated values (which are checked once, so the accepted
/// side costs one check).
#[test]
fn a_space_times_its_kernel_is_bounded_at_its_edge() {
    let kernel = |values: &str, statements: usize| {
        let body =
            "  Y[r :+ A, :] = dropout(X[r :+ A, :], 0.1, seed, (r + iota(0)) * 256 + iota(1))\n"
                .repeat(statements);
        format!(
            "@autotune(A in [{values}])
kernel k(X: tensor<f32>[M, 256], Y: tensor<f32>[M, 256], seed: i32) {{
  let r = ctx.block.x * A
{body}}}"
        )
    };
    let (p, d) = check(&kernel("16", 40));
    assert!(d.is_empty());
    let nodes = p.kernel("k", &[]).unwrap().exprs.len() as u64;
    let most = MAX_CHECK_NODES / nodes;
    assert!((2..MAX_TUNE_CONFIGS).contains(&most), "{most}");
    let repeated = |n: u64| vec!["16"; n as usize].join(", ");
    let (_, d) = check(&kernel(&repeated(most), 40));
    assert_eq!(codes(&d), Vec::<&str>::new());
    let start = Instant::now();
    let (p, d) = check(&kernel(&repeated(most + 1), 40));
    assert_eq!(codes(&d), [code::TUNE_SPACE_TOO_LARGE]);
    assert!(start.elapsed() < Duration::from_secs(10));
    let rendered = phobos_core::render(&d, &p.sources, false);
    assert!(
        rendered.contains(&format!(
            "{} configurations × {nodes} IR nodes each",
            most + 1
        )),
        "{rendered}"
    );
}

fn tile_kernel(elem: &str, extents: &str) -> String {
    let value = match elem {
        "bool" => "true",
        "f32" | "f64" => "1.0",
        _ => "1",
    };
    let first = if extents.contains(',') { "0, " } else { "" };
    format!(
        "kernel k(Y: tensor<{elem}>[N]) {{
  var t: tile<{elem}>[{extents}] = {value}
  Y[0 :+ 1] = t[{first}0 :+ 1]
}}"
    )
}

#[test]
fn a_tile_at_the_bound_checks_and_one_over_is_refused() {
    assert_eq!(MAX_TILE_BYTES, 1 << 30);
    for (elem, most) in [
        ("f32", 1u64 << 28),
        ("i32", 1 << 28),
        ("u32", 1 << 28),
        ("bool", 1 << 28),
        ("f64", 1 << 27),
        ("i64", 1 << 27),
    ] {
        let (_, d) = check(&tile_kernel(elem, &most.to_string()));
        assert_eq!(codes(&d), Vec::<&str>::new(), "{elem}[{most}]");
        let (p, d) = check(&tile_kernel(elem, &(most + 1).to_string()));
        assert_eq!(codes(&d), [code::TILE_TOO_LARGE], "{elem}[{}]", most + 1);
        let rendered = phobos_core::render(&d, &p.sources, false);
        assert!(
            rendered.contains(&format!("{most} {elem} elements")),
            "{rendered}"
        );
        // Two axes, and an axis that is a dim (counted as 1 by the checker).
        let (_, d) = check(&tile_kernel(elem, &format!("2, {}", most / 2 + 1)));
        assert_eq!(codes(&d), [code::TILE_TOO_LARGE], "{elem}");
        let (_, d) = check(&tile_kernel(elem, &format!("N, {}", most + 1)));
        assert_eq!(codes(&d), [code::TILE_TOO_LARGE], "{elem}");
    }
    // The tile: 2^30 f32 elements.
    let (_, d) = check(&tile_kernel("f32", "1073741824"));
    assert_eq!(codes(&d), [code::TILE_TOO_LARGE]);
}

/// A tile whose extent is a dim is refused when the launch binds it, with
/// the same bound, before any backend runs: `bind_shapes` is where the
/// interpreter, Cranelift and the GPU runtime all start.
#[test]
fn a_tile_of_dim_extent_is_refused_at_launch_on_every_backend() {
    let text = "kernel k(Y: tensor<f32>[N]) {
  var t: tile<f32>[N, 16384] = 1.0
  Y[0 :+ 1] = t[0, 0 :+ 1]
}";
    let (p, d) = check(text);
    assert!(d.is_empty());
    let k = p.kernel("k", &[]).unwrap();
    let bind = |n: usize| {
        bind_shapes(
            &k,
            &[ArgShape::Tensor {
                elem: Scalar::F32,
                shape: &[n],
            }],
        )
    };
    assert!(bind(16384).is_ok());
    let e = bind(16385).unwrap_err();
    assert!(
        matches!(&e, LaunchError::TileTooLarge { name, shape } if name == "t" && *shape == [16385, 16384]),
        "{e}"
    );
    assert!(e.to_string().contains("too large to hold"), "{e}");
    // An empty axis counts as one element: the GPU holds it so.
    let text = "kernel k(Y: tensor<f32>[N], Z: tensor<f32>[M]) {
  var t: tile<f32>[N, M] = 1.0
  Y[0 :+ 1] = t[0, 0 :+ 1]
}";
    let k = check(text).0.kernel("k", &[]).unwrap();
    let e = bind_shapes(
        &k,
        &[
            ArgShape::Tensor {
                elem: Scalar::F32,
                shape: &[0],
            },
            ArgShape::Tensor {
                elem: Scalar::F32,
                shape: &[(1 << 28) + 1],
            },
        ],
    );
    assert!(matches!(e, Err(LaunchError::TileTooLarge { .. })), "{e:?}");
}

/// `MAX_BLOCKS` counts all the grid's axes together: a launch of exactly
/// 2^40 blocks binds (nothing is allocated to bind shapes), one more is
/// refused with the count and the limit.
#[test]
fn a_grid_at_the_bound_binds_and_one_over_is_refused() {
    assert_eq!(MAX_BLOCKS, 1 << 40);
    let text = "kernel k(X: tensor<f32>[M, N], Y: tensor<f32>[M, N]) {
  Y[ctx.block.y :+ 1, ctx.block.x :+ 1] = X[ctx.block.y :+ 1, ctx.block.x :+ 1]
}";
    let (p, d) = check(text);
    assert!(d.is_empty(), "{d:?}");
    let k = p.kernel("k", &[]).unwrap();
    let bind = |m: usize, n: usize| {
        let shape = [m, n];
        let t = ArgShape::Tensor {
            elem: Scalar::F32,
            shape: &shape,
        };
        bind_shapes(&k, &[t, t])
    };
    let b = bind(1 << 20, 1 << 20).unwrap();
    assert_eq!(b.grid, [1 << 20, 1 << 20, 1]);
    let e = bind((1 << 20) + 1, 1 << 20).unwrap_err();
    assert!(
        matches!(&e, LaunchError::GridTooLarge { grid, blocks }
            if *grid == [1 << 20, (1 << 20) + 1, 1] && *blocks == (1 << 40) + (1 << 20)),
        "{e:?}"
    );
    let msg = e.to_string();
    assert!(msg.contains("1099512676352 blocks"), "{msg}");
    assert!(msg.contains("limit of 1099511627776"), "{msg}");
    // Each axis alone within the bound, their product over it.
    assert!(matches!(
        bind(1 << 30, 1 << 30),
        Err(LaunchError::GridTooLarge { .. })
    ));
}

/// A chain of `fn` calls `depth` deep from the kernel.
fn call_chain(depth: usize) -> String {
    let mut s = String::new();
    for i in 0..depth - 1 {
        s += &format!("fn g{i}(x) = g{}(x) + 1\n", i + 1);
    }
    s += &format!("fn g{}(x) = x\n", depth - 1);
    s + "kernel k(Y: tensor<i32>[N]) {\n  Y[0 :+ 1] = g0(1)\n}\n"
}

/// `fn` calls nest at most `MAX_CALL_DEPTH` deep: at the bound the kernel
/// computes the chain, one deeper is refused at the kernel's call (it used
/// to check clean and write nothing).
#[test]
fn calls_at_the_depth_bound_expand_and_one_deeper_is_refused() {
    let (p, d) = check(&call_chain(MAX_CALL_DEPTH));
    assert!(d.is_empty(), "{d:?}");
    let k = p.kernel("k", &[]).unwrap();
    let mut args = vec![phobos_core::launch::Arg::Tensor(
        phobos_core::tensor::Tensor::zeros(Scalar::I32, &[1]),
    )];
    phobos_core::interp::run(&k, &mut args).unwrap();
    let phobos_core::launch::Arg::Tensor(y) = &args[0] else {
        unreachable!()
    };
    assert_eq!(
        y.get(0),
        phobos_core::types::Value::I32(MAX_CALL_DEPTH as i32)
    );
    let (p, d) = check(&call_chain(MAX_CALL_DEPTH + 1));
    assert_eq!(codes(&d), [code::CALLS_TOO_DEEP]);
    assert!(
        d[0].message.contains("more than 64 deep"),
        "{}",
        d[0].message
    );
    let span = d[0].span().unwrap();
    assert_eq!(span.src, p.user);
    let before = &p.sources.text(p.user)[..span.range().start];
    assert_eq!(
        before.lines().count(),
        MAX_CALL_DEPTH + 3,
        "the kernel's call"
    );
    assert!(p.kernel("k", &[]).is_err());
}
