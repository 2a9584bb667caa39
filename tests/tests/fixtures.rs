//! Golden fixtures. `fixtures/ok` and `examples/` parse, check and run on the
//! interpreter, and their `// check` lines hold; `fixtures/err` fail with the
//! diagnostics written under the offending lines as `//~ CODE`. Parses, IR
//! and rendered diagnostics are snapshots.

use phobos_core::launch::Arg;
use phobos_core::syntax::print_file;
use phobos_core::{Program, render};
use phobos_runtime::{Backend, Options, checks, launch};
use phobos_tests::{fixture_dims, make_args, ph_files, root, stem};
use std::path::Path;

fn snapshot(name: &str, content: &str) {
    insta::with_settings!({
        snapshot_path => root().join("tests/snapshots"),
        prepend_module_to_snapshot => false,
        omit_expression => true,
    }, {
        insta::assert_snapshot!(name, content);
    });
}

/// Parses, checks and runs one good file; returns its parse and IR text.
fn run_ok(path: &Path, require_checks: bool) -> String {
    let text = std::fs::read_to_string(path).expect("fixture");
    let name = path.display().to_string();
    let (program, mut diags) = Program::parse(&name, &text);
    diags.extend(program.check());
    assert!(
        diags.is_empty(),
        "{name}:\n{}",
        render(&diags, &program.sources, false)
    );
    let mut out = format!("{text}\n---- parse\n{}", print_file(&program.file));
    let dims = fixture_dims(&text);
    for kname in program.kernel_names() {
        let kernel = program.kernel(kname, &[]).expect("checks");
        out.push_str(&format!("---- ir\n{}", kernel.print()));
        let inputs = make_args(&kernel, &dims, &[]);
        let mut args = inputs.clone();
        phobos_core::interp::run(&kernel, &mut args).unwrap_or_else(|e| panic!("{name}: {e}"));
        // The CPU backend gives the same bits on one thread and on many.
        for threads in [Some(1), None] {
            let mut cpu = inputs.clone();
            let options = Options {
                backend: Backend::Cpu,
                threads,
                ..Options::default()
            };
            launch(&kernel, &mut cpu, &options).unwrap_or_else(|e| panic!("{name} on cpu: {e}"));
            for (i, (a, b)) in args.iter().zip(&cpu).enumerate() {
                if let (Arg::Tensor(a), Arg::Tensor(b)) = (a, b) {
                    assert!(
                        a.bits_eq(b),
                        "{name}: `{}` differs between interp and cpu ({threads:?} threads)",
                        kernel.params[i].name
                    );
                }
            }
        }
        if phobos_tests::gpu_available() {
            phobos_tests::matches_on_gpu(&kernel, &inputs, &args)
                .unwrap_or_else(|e| panic!("{name}: {e}"));
        }
        for c in checks::evaluate(&program, kname, &kernel, &args).expect("checks evaluate") {
            assert!(
                !require_checks || c.all(),
                "{name}: check `{}` holds for {} of {}",
                c.name,
                c.holds,
                c.total
            );
        }
    }
    out
}

#[test]
fn ok_fixtures_parse_check_and_run() {
    let files = ph_files(&root().join("tests/fixtures/ok"));
    assert!(files.len() >= 8);
    for path in files {
        snapshot(&format!("ok__{}", stem(&path)), &run_ok(&path, true));
    }
}

#[test]
fn examples_parse_check_and_run() {
    let files = ph_files(&root().join("examples"));
    assert!(files.len() >= 2);
    for path in files {
        snapshot(&format!("example__{}", stem(&path)), &run_ok(&path, false));
    }
}

/// The `//~ CODE` markers of a fixture: (line of the code above, code).
fn expected(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut target = 0;
    for (i, line) in text.lines().enumerate() {
        match line.trim().strip_prefix("//~") {
            Some(code) => out.push((target, code.trim().to_string())),
            None => target = i + 1,
        }
    }
    out.sort();
    out
}

#[test]
fn err_fixtures_report_what_they_mark() {
    let files = ph_files(&root().join("tests/fixtures/err"));
    assert!(files.len() >= 25);
    let mut codes = std::collections::BTreeSet::new();
    let mut failures = Vec::new();
    for path in files {
        let text = std::fs::read_to_string(&path).expect("fixture");
        let name = format!("err/{}", path.file_name().unwrap().to_string_lossy());
        let (program, mut diags) = Program::parse(&name, &text);
        diags.extend(program.check());
        diags.sort();
        diags.dedup();
        let line_of = |offset: u32| text[..offset as usize].matches('\n').count() + 1;
        let mut actual: Vec<(usize, String)> = diags
            .iter()
            .filter_map(|d| {
                let l = d.labels.iter().find(|l| l.span.src == program.user)?;
                Some((line_of(l.span.lo), d.code.to_string()))
            })
            .collect();
        actual.sort();
        let rendered = render(&diags, &program.sources, false);
        if actual != expected(&text) {
            failures.push(format!(
                "{name}: reported {actual:?}, marked {:?}\n{rendered}",
                expected(&text)
            ));
        }
        codes.extend(diags.iter().map(|d| d.code));
        snapshot(
            &format!("err__{}", stem(&path)),
            &format!("{text}\n---- diagnostics\n{rendered}"),
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    use phobos_core::diag::code::*;
    for c in [
        LEX,
        PARSE,
        UNKNOWN_NAME,
        UNKNOWN_FN,
        ARITY,
        TYPE_MISMATCH,
        SHAPE_MISMATCH,
        IOTA_OUTSIDE,
        IOTA_IN_LET,
        SLICE_OUT_OF_BOUNDS,
        STORE_TO_INPUT,
        RECURSION,
        UNUSED_TUNE_PARAM,
        UNDECLARED_TUNE_PARAM,
        INT_OUT_OF_RANGE,
        GRID_NOT_INFERRED,
        DUPLICATE,
        ANNOTATION,
        NOT_A_PLACE,
        BAD_OPERAND,
        RANK,
        NOT_CONSTANT,
        UNKNOWN_TYPE,
        BAD_FIELD,
        NO_KERNEL,
        TILE_TOO_LARGE,
        TUNE_SPACE_TOO_LARGE,
        BAD_AXIS,
        EMPTY_REDUCTION,
        IOTA_IN_REDUCTION,
        LOOP_BOUND,
        ACCUMULATOR_TYPE,
    ] {
        assert!(codes.contains(c), "no fixture produces {c}");
    }
}

#[test]
fn the_stdlib_parses_cleanly() {
    let (program, diags) = Program::parse("empty.ph", "");
    assert!(
        diags.is_empty(),
        "{}",
        render(&diags, &program.sources, false)
    );
    for f in [
        "hash32", "_mix", "uniform", "randn", "dropout", "log", "cos",
    ] {
        assert!(program.fns.contains_key(f), "the prelude lacks {f}");
    }
}

/// The GPU plan of every example's kernels, as `phobosc build --explain`
/// prints it for WebGPU's default limits: where each value lives and why,
/// how each statement is emitted, each loop's barriers, the workgroup
/// memory item by item. A kernel that keeps a tile over a dim in
/// workgroup memory (attention's `acc: tile<f32>[BM, D]`) is planned as a
/// launch at the file's `// dims:` plans it (`phobosc build --dim`). A
/// change to the plan shows here as a diff.
#[test]
fn example_plans_are_snapshots() {
    for path in ph_files(&root().join("examples")) {
        let text = std::fs::read_to_string(&path).expect("example");
        let name = path.display().to_string();
        let (program, _) = Program::parse(&name, &text);
        let dims = fixture_dims(&text);
        let mut out = String::new();
        for kname in program.kernel_names() {
            let mut kernel = program.kernel(kname, &[]).expect("checks");
            if phobos_gpu::plan::symbolic_tiles_diagnostic(&kernel).is_some() {
                let given: Vec<String> = dims.iter().map(|(d, v)| format!("{d}={v}")).collect();
                out.push_str(&format!("(as a launch at {} plans it)\n", given.join(", ")));
                let extents: Vec<u64> = kernel
                    .dims
                    .iter()
                    .map(|d| {
                        let v = dims.iter().find(|(n, _)| n == d);
                        v.unwrap_or_else(|| panic!("{name}: `// dims:` lacks {d}"))
                            .1 as u64
                    })
                    .collect();
                kernel = phobos_gpu::specialize(&kernel, &extents).into_owned();
            }
            let options = phobos_gpu::GpuOptions::for_kernel(&kernel);
            match phobos_gpu::compile(&kernel, &options) {
                Ok(c) => out.push_str(&c.explain()),
                Err(e) => out.push_str(&format!("kernel {kname}: not built ahead of time: {e}\n")),
            }
        }
        snapshot(&format!("plan__{}", stem(&path)), &out);
    }
}
