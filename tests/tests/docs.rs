//! The examples of `docs/language.md` are real (the page is read once, by
//! `phobos_tests::docs`). Every fenced `ph` block:
//! - either is the standard library's own text (each of its lines appears
//!   in `stdlib/std/*.ph`, so the page cannot drift from the source),
//! - or is followed by a `console` block showing diagnostics (`Error`), and
//!   then must fail to check,
//! - or checks cleanly, and each of its kernels runs on the interpreter and
//!   on the CPU backend with identical bits, with the dims and scalars of
//!   the `$ phobosc run` line of the console block after it (every dim 37
//!   and generated scalars where it gives none); its `// check` lines
//!   evaluate without error, and each one that console reports `(all)`
//!   holds on every element.

use phobos_core::launch::Arg;
use phobos_core::types::Value;
use phobos_core::{Program, render};
use phobos_runtime::checks;
use phobos_tests::docs::{RunFlags, blocks};
use phobos_tests::{make_args, root};

#[test]
fn the_examples_in_language_md_check_and_run() {
    let text = std::fs::read_to_string(root().join("docs/language.md")).expect("the docs");
    let stdlib: String = ["random", "math", "tandem"]
        .iter()
        .map(|f| {
            std::fs::read_to_string(root().join(format!("stdlib/std/{f}.ph")))
                .unwrap_or_else(|e| panic!("stdlib/std/{f}.ph: {e}"))
        })
        .collect();
    let blocks = blocks(&text);
    assert!(blocks.len() > 20, "only {} ph blocks found", blocks.len());
    let (mut ran, mut quoted, mut failing, mut claims) = (0, 0, 0, 0);
    for b in &blocks {
        let at = format!("docs/language.md:{}", b.line);
        let fns_only = !b.code.contains("kernel ");
        if fns_only
            && b.code
                .lines()
                .filter(|l| !l.trim().is_empty())
                .all(|l| stdlib.lines().any(|s| s == l))
        {
            quoted += 1;
            continue;
        }
        let (program, mut diags) = Program::parse(&at, &b.code);
        diags.extend(program.check());
        let console = b.console.as_deref().unwrap_or_default();
        if console.contains("Error") || console.contains("error") {
            assert!(
                !diags.is_empty(),
                "{at}: the page shows an error, but it checks"
            );
            failing += 1;
            continue;
        }
        assert!(
            diags.is_empty(),
            "{at}:\n{}",
            render(&diags, &program.sources, false)
        );
        let flags = RunFlags::of(console);
        for name in program.kernel_names() {
            let kernel = program
                .kernel(name, &[])
                .unwrap_or_else(|d| panic!("{at}: {}", render(&d, &program.sources, false)));
            let scalars: Vec<(&str, Value)> = kernel
                .params
                .iter()
                .filter_map(|param| {
                    let (_, v) = flags.scalars.iter().find(|(n, _)| *n == param.name)?;
                    let phobos_core::ir::ParamKind::Scalar(t) = param.kind else {
                        return None;
                    };
                    Some((
                        param.name.as_str(),
                        phobos_core::interp::ops::cast(Value::I64(*v), t),
                    ))
                })
                .collect();
            let mut args: Vec<Arg> = make_args(&kernel, &flags.dims, &scalars);
            phobos_tests::run_everywhere(&kernel, &mut args);
            let results = checks::evaluate(&program, name, &kernel, &args)
                .unwrap_or_else(|e| panic!("{at}: {e}"));
            for c in results {
                let claimed = console.lines().any(|l| {
                    l.contains(&format!("check `{}`", c.name)) && l.trim_end().ends_with("(all)")
                });
                claims += usize::from(claimed);
                assert!(
                    !claimed || c.all(),
                    "{at}: check `{}` holds for {} of {}, but the page says (all)",
                    c.name,
                    c.holds,
                    c.total
                );
            }
            ran += 1;
        }
    }
    eprintln!(
        "{ran} kernels ran, {claims} checks claimed (all) held, {quoted} blocks quote the \
         stdlib, {failing} show errors"
    );
    assert!(ran >= 10, "only {ran} kernels ran");
    assert!(claims >= 15, "only {claims} checks were claimed to hold");
    assert!(quoted >= 10, "only {quoted} blocks quote the stdlib");
}

/// The page's diagnostics table has one row for each code of
/// `phobos_core::diag::code`, and no row for a code that does not exist.
#[test]
fn every_diagnostic_code_has_a_row() {
    let text = std::fs::read_to_string(root().join("docs/language.md")).expect("the docs");
    let source =
        std::fs::read_to_string(root().join("compiler/core/src/diag.rs")).expect("diag.rs");
    let mut codes: Vec<&str> = source
        .lines()
        .filter_map(|l| l.trim().strip_prefix("pub const "))
        .filter_map(|l| l.split('"').nth(1))
        .collect();
    codes.sort_unstable();
    let mut rows: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("| `E"))
        .filter_map(|l| l.split('`').next())
        .collect();
    rows.sort_unstable();
    let rows: Vec<String> = rows.iter().map(|r| format!("E{r}")).collect();
    assert!(
        codes.len() > 30,
        "only {} codes found in diag.rs",
        codes.len()
    );
    assert_eq!(codes, rows, "diag.rs's codes against the page's table");
}
