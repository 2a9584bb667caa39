//! The WGSL that `phobosc build` writes is valid by the WGSL spec, not only
//! by naga: every example and fixture, in exact and fast mode, among them
//! `tests/fixtures/ok/edge_constants.ph`, whose constants have values that
//! WGSL refuses to evaluate (and which every backend runs bit for bit); and
//! the Tandem fills that need no f64.
//!
//! WGSL evaluates constant expressions when a shader is created, and a NaN
//! or infinite result there, a left shift that loses bits or an integer
//! division by zero is a shader-creation error. naga does not evaluate
//! `bitcast` and accepts such modules; Tint, the WGSL compiler of Chromium
//! and Dawn, refuses them (`lower/fold.rs` says how the lowering avoids
//! them). Two checks:
//! - `tint_accepts_every_module`: Tint itself, through dawn.node (the npm
//!   package `webgpu`, installed by `npm ci` in `tests/tint/`, which CI
//!   runs) on Dawn's null backend, so no GPU is needed. Without node or the
//!   package it skips and says so, unless `PHOBOS_REQUIRE_TINT` is set.
//! - `no_constant_expression_fails`: always runs. The WGSL is parsed back
//!   with naga, which folds most constant expressions and refuses a
//!   non-finite result, and what naga leaves unfolded (bitcasts and what
//!   uses them) is evaluated here by WGSL's rules: `let`-bound values are
//!   not constant expressions. Any NaN, infinity, division by zero or
//!   lossy shift found is an error.

use naga::{BinaryOperator as B, Expression, Literal, ScalarKind, UnaryOperator as U};
use phobos_core::Program;
use phobos_gpu::tandem::{FillMap, fill_compiled, misses_compiled};
use phobos_gpu::{GpuOptions, LowerError, Precision, compile, wgsl};
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn sources() -> Vec<(String, String)> {
    let mut out = Vec::new();
    for dir in ["tests/fixtures/ok", "examples"] {
        for e in std::fs::read_dir(root().join(dir)).expect("the directory exists") {
            let p = e.expect("a directory entry").path();
            if p.extension().is_some_and(|x| x == "ph") {
                let text = std::fs::read_to_string(&p).expect("readable source");
                let stem = p.file_stem().unwrap().to_string_lossy().to_string();
                out.push((stem, text));
            }
        }
    }
    out.sort();
    out
}

/// (label, WGSL) for every kernel and configuration of every source, in
/// exact mode with `phobosc build`'s options and in fast mode. A kernel
/// that needs its dims first (a self-reading store over a symbolic extent)
/// is specialized with every dim 64, as a runtime would.
fn modules() -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (stem, text) in sources() {
        let (program, diags) = Program::parse(&stem, &text);
        assert!(diags.is_empty(), "{stem}: {diags:?}");
        for name in program.kernel_names() {
            for config in program.configs(name) {
                let kernel = program
                    .kernel(name, &config)
                    .unwrap_or_else(|d| panic!("{stem}/{name}: {d:?}"));
                let values: Vec<String> = config.iter().map(|(k, v)| format!("{k}{v}")).collect();
                for precision in [Precision::Exact, Precision::Fast] {
                    let options = GpuOptions {
                        precision,
                        ..GpuOptions::for_kernel(&kernel)
                    };
                    let compiled = match compile(&kernel, &options) {
                        Err(LowerError::Unsupported(_)) => {
                            let dims = vec![64; kernel.dims.len()];
                            compile(&phobos_gpu::specialize(&kernel, &dims), &options)
                        }
                        other => other,
                    }
                    .unwrap_or_else(|e| panic!("{stem}/{name}: {e}"));
                    let label = [stem.as_str(), name]
                        .into_iter()
                        .chain(values.iter().map(String::as_str))
                        .chain([format!("{precision:?}").to_lowercase().as_str()])
                        .collect::<Vec<_>>()
                        .join(".");
                    out.push((label, compiled.wgsl()));
                }
            }
        }
    }
    // The Tandem fills of `phobosc fill`, those a device without f64 runs.
    for map in FillMap::ALL.into_iter().filter(|m| !m.needs_f64()) {
        let (module, info) = fill_compiled(map, 32).expect("the fill lowers");
        out.push((format!("fill.{}", map.name()), wgsl(&module, &info)));
        if map.has_misses() {
            let (module, info) = misses_compiled(map).expect("the misses kernel lowers");
            out.push((format!("fill.{}.misses", map.name()), wgsl(&module, &info)));
        }
    }
    assert!(out.len() >= 30, "only {} modules", out.len());
    out
}

#[test]
fn no_constant_expression_fails() {
    let mut problems = Vec::new();
    for (label, text) in modules() {
        for p in constant_expression_errors(&text) {
            problems.push(format!("{label}: {p}"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The checker is not vacuous: it finds what Tint refused in the WGSL that
/// the lowering wrote for `randn` before `fold.rs`, and respects `let`.
#[test]
fn the_constant_expression_check_finds_what_tint_refuses() {
    let module = |body: &str| format!("@compute @workgroup_size(1) fn main() {{ {body} }}\n");
    let bad = [
        "let x = bitcast<f32>(2143289344i); _ = x;",
        "let x = -(bitcast<f32>(2139095040i)); _ = x;",
        "let x = bitcast<u32>(bitcast<f32>(4286578688u)) & 1u; _ = x;",
        "let x = (1i << (bitcast<u32>(31i) & 31u)); _ = x;",
        "let x = 3u << bitcast<u32>(31i); _ = x;",
        "let x = 7i / bitcast<i32>(0u); _ = x;",
    ];
    for body in bad {
        let errors = constant_expression_errors(&module(body));
        assert!(!errors.is_empty(), "not found in `{body}`");
    }
    let good = [
        "let bits = u32(2143289344u); let x = bitcast<f32>(bits); _ = x;",
        "let x = bitcast<f32>(1065353216u) + 1f; _ = x;",
        "let x = (1i << (bitcast<u32>(16i) & 31u)) - 1i; _ = x;",
    ];
    for body in good {
        let errors = constant_expression_errors(&module(body));
        assert!(errors.is_empty(), "`{body}`: {errors:?}");
    }
}

#[test]
fn tint_accepts_every_module() {
    let dir = root().join("compiler/gpu/tests/tint");
    let installed = dir.join("node_modules/webgpu/package.json").exists();
    let node = Command::new("node").arg("--version").output().is_ok();
    if !(installed && node) {
        let why = if node {
            "dawn.node is not installed (`npm ci --prefix compiler/gpu/tests/tint`)"
        } else {
            "node is not installed"
        };
        assert!(
            std::env::var_os("PHOBOS_REQUIRE_TINT").is_none(),
            "PHOBOS_REQUIRE_TINT is set but {why}"
        );
        eprintln!("skipped: Tint is not available here: {why}");
        return;
    }
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("wgsl_valid");
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir_all(&out).expect("a scratch directory");
    let mut files = Vec::new();
    for (label, text) in modules() {
        let file = out.join(format!("{label}.wgsl"));
        std::fs::write(&file, text).expect("writable scratch file");
        files.push(file);
    }
    // What the lowering wrote for `_nan()` before `fold.rs`: Tint must
    // refuse it, or the check proves nothing.
    let refused = out.join("refused.wgsl");
    std::fs::write(
        &refused,
        "@compute @workgroup_size(1) fn main() { let x = bitcast<f32>(2143289344i); _ = x; }\n",
    )
    .expect("writable scratch file");
    let run = |files: &[PathBuf]| {
        let o = Command::new("node")
            .arg(dir.join("check.mjs"))
            .args(files)
            .output()
            .expect("node runs");
        let text =
            String::from_utf8_lossy(&o.stdout).to_string() + &String::from_utf8_lossy(&o.stderr);
        (o.status.success(), text)
    };
    let (ok, text) = run(&[refused]);
    assert!(!ok && text.contains("nan"), "Tint accepted a NaN: {text}");
    let (ok, text) = run(&files);
    let accepted = text.lines().filter(|l| l.starts_with("ok ")).count();
    let refusals: Vec<&str> = text.lines().filter(|l| !l.starts_with("ok ")).collect();
    assert!(
        ok && accepted == files.len(),
        "Tint refused WGSL:\n{}",
        refusals.join("\n")
    );
    eprintln!("Tint accepted {accepted} modules");
}

/// A scalar value of a WGSL constant expression.
#[derive(Clone, Copy, Debug)]
enum C {
    Bool(bool),
    I32(i32),
    U32(u32),
    F32(f32),
}

impl C {
    fn bits(self) -> Option<u32> {
        match self {
            C::I32(x) => Some(x as u32),
            C::U32(x) => Some(x),
            C::F32(x) => Some(x.to_bits()),
            C::Bool(_) => None,
        }
    }
}

/// Every constant expression of `wgsl`'s functions whose evaluation WGSL
/// makes a shader-creation error: a NaN or infinite f32, an integer
/// division by zero, a shift by 32 or more, a left shift that loses bits.
/// naga has folded what it evaluates (and refused non-finite results); what
/// it leaves is evaluated here for scalars. An expression is constant when
/// all its operands are, and a `let`-bound one is not (WGSL 7.3; naga's
/// parser records `let`s as named expressions).
fn constant_expression_errors(wgsl: &str) -> Vec<String> {
    let module = match naga::front::wgsl::parse_str(wgsl) {
        Ok(m) => m,
        Err(e) => return vec![format!("naga refuses the WGSL: {}", e.emit_to_string(wgsl))],
    };
    let mut errors = Vec::new();
    let functions = module
        .functions
        .iter()
        .map(|(_, f)| f)
        .chain(module.entry_points.iter().map(|ep| &ep.function));
    for f in functions {
        let fname = f.name.as_deref().unwrap_or("?");
        // The value of each expression that is a constant expression.
        let mut value: Vec<Option<C>> = Vec::with_capacity(f.expressions.len());
        for (h, e) in f.expressions.iter() {
            let operand = |x: naga::Handle<Expression>| {
                value[x.index()].filter(|_| !f.named_expressions.contains_key(&x))
            };
            let mut fail = |what: String| errors.push(format!("{fname}: {what} in {e:?}"));
            let v = match *e {
                Expression::Literal(l) => match l {
                    Literal::Bool(b) => Some(C::Bool(b)),
                    Literal::I32(x) => Some(C::I32(x)),
                    Literal::U32(x) => Some(C::U32(x)),
                    Literal::F32(x) => Some(C::F32(x)),
                    _ => None,
                },
                Expression::As {
                    expr,
                    kind,
                    convert,
                } => operand(expr).and_then(|x| match convert {
                    None => {
                        let bits = x.bits()?;
                        Some(match kind {
                            ScalarKind::Sint => C::I32(bits as i32),
                            ScalarKind::Uint => C::U32(bits),
                            ScalarKind::Float => C::F32(f32::from_bits(bits)),
                            _ => return None,
                        })
                    }
                    Some(_) => match (x, kind) {
                        (C::I32(a), ScalarKind::Float) => Some(C::F32(a as f32)),
                        (C::U32(a), ScalarKind::Float) => Some(C::F32(a as f32)),
                        (C::I32(a), ScalarKind::Uint) => Some(C::U32(a as u32)),
                        (C::U32(a), ScalarKind::Sint) => Some(C::I32(a as i32)),
                        (C::U32(_), ScalarKind::Uint)
                        | (C::I32(_), ScalarKind::Sint)
                        | (C::F32(_), ScalarKind::Float) => Some(x),
                        _ => None,
                    },
                }),
                Expression::Unary { op, expr } => operand(expr).and_then(|x| match (op, x) {
                    (U::Negate, C::F32(a)) => Some(C::F32(-a)),
                    (U::Negate, C::I32(a)) => {
                        if a == i32::MIN {
                            fail("-i32::MIN".into());
                        }
                        Some(C::I32(a.wrapping_neg()))
                    }
                    (U::BitwiseNot, C::I32(a)) => Some(C::I32(!a)),
                    (U::BitwiseNot, C::U32(a)) => Some(C::U32(!a)),
                    (U::LogicalNot, C::Bool(a)) => Some(C::Bool(!a)),
                    _ => None,
                }),
                Expression::Binary { op, left, right } => match (operand(left), operand(right)) {
                    (Some(a), Some(b)) => binary(op, a, b, &mut fail),
                    _ => None,
                },
                Expression::Select {
                    condition,
                    accept,
                    reject,
                } => match (operand(condition), operand(accept), operand(reject)) {
                    (Some(C::Bool(c)), Some(a), Some(b)) => Some(if c { a } else { b }),
                    _ => None,
                },
                _ => None,
            };
            if let Some(C::F32(x)) = v
                && !x.is_finite()
            {
                fail(format!(
                    "the non-finite f32 {x} (bits {:#010x})",
                    x.to_bits()
                ));
            }
            debug_assert_eq!(h.index(), value.len());
            value.push(v);
        }
    }
    errors
}

/// A binary operation on constants, reporting what WGSL makes an error.
fn binary(op: B, a: C, b: C, fail: &mut impl FnMut(String)) -> Option<C> {
    let mut shift = |n: u32| {
        if n >= 32 {
            fail(format!("a shift by {n}"));
        }
        n & 31
    };
    Some(match (a, b) {
        (C::F32(x), C::F32(y)) => match op {
            B::Add => C::F32(x + y),
            B::Subtract => C::F32(x - y),
            B::Multiply => C::F32(x * y),
            B::Divide => C::F32(x / y),
            B::Equal => C::Bool(x == y),
            B::NotEqual => C::Bool(x != y),
            B::Less => C::Bool(x < y),
            B::LessEqual => C::Bool(x <= y),
            B::Greater => C::Bool(x > y),
            B::GreaterEqual => C::Bool(x >= y),
            _ => return None,
        },
        (C::I32(x), C::U32(n)) if matches!(op, B::ShiftLeft | B::ShiftRight) => {
            let n = shift(n);
            if op == B::ShiftRight {
                C::I32(x >> n)
            } else {
                let r = x << n;
                if r >> n != x || (r < 0) != (x < 0) {
                    fail(format!("{x} << {n} loses bits"));
                }
                C::I32(r)
            }
        }
        (C::U32(x), C::U32(n)) if matches!(op, B::ShiftLeft | B::ShiftRight) => {
            let n = shift(n);
            if op == B::ShiftRight {
                C::U32(x >> n)
            } else {
                if (x << n) >> n != x {
                    fail(format!("{x}u << {n} loses bits"));
                }
                C::U32(x << n)
            }
        }
        (C::I32(x), C::I32(y)) => {
            if matches!(op, B::Divide | B::Modulo) && (y == 0 || (x == i32::MIN && y == -1)) {
                fail(format!("{x} {op:?} {y}"));
                return None;
            }
            match op {
                B::Add => C::I32(x.wrapping_add(y)),
                B::Subtract => C::I32(x.wrapping_sub(y)),
                B::Multiply => C::I32(x.wrapping_mul(y)),
                B::Divide => C::I32(x / y),
                B::Modulo => C::I32(x % y),
                B::And => C::I32(x & y),
                B::InclusiveOr => C::I32(x | y),
                B::ExclusiveOr => C::I32(x ^ y),
                B::Equal => C::Bool(x == y),
                B::NotEqual => C::Bool(x != y),
                B::Less => C::Bool(x < y),
                B::LessEqual => C::Bool(x <= y),
                B::Greater => C::Bool(x > y),
                B::GreaterEqual => C::Bool(x >= y),
                _ => return None,
            }
        }
        (C::U32(x), C::U32(y)) => {
            if matches!(op, B::Divide | B::Modulo) && y == 0 {
                fail(format!("{x}u {op:?} 0u"));
                return None;
            }
            match op {
                B::Add => C::U32(x.wrapping_add(y)),
                B::Subtract => C::U32(x.wrapping_sub(y)),
                B::Multiply => C::U32(x.wrapping_mul(y)),
                B::Divide => C::U32(x / y),
                B::Modulo => C::U32(x % y),
                B::And => C::U32(x & y),
                B::InclusiveOr => C::U32(x | y),
                B::ExclusiveOr => C::U32(x ^ y),
                B::Equal => C::Bool(x == y),
                B::NotEqual => C::Bool(x != y),
                B::Less => C::Bool(x < y),
                B::LessEqual => C::Bool(x <= y),
                B::Greater => C::Bool(x > y),
                B::GreaterEqual => C::Bool(x >= y),
                _ => return None,
            }
        }
        (C::Bool(x), C::Bool(y)) => match op {
            B::LogicalAnd | B::And => C::Bool(x && y),
            B::LogicalOr | B::InclusiveOr => C::Bool(x || y),
            B::Equal => C::Bool(x == y),
            B::NotEqual => C::Bool(x != y),
            _ => return None,
        },
        _ => return None,
    })
}
