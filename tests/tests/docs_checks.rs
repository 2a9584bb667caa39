//! (Beside `docs.rs`, which checks the same blocks against the stdlib and
//! for errors; the two parsers of the page are to be made one.)
//!
//! The examples of `docs/language.md` run: every ```` ```ph ```` block that
//! holds a kernel parses and checks, runs on the interpreter and the CPU
//! backend with the same bits, with the dims and scalars of the
//! `$ phobosc run` line of the console block after it (every dim 37 and
//! every scalar 0 where there is none), and each of its `// check` lines
//! holds on every element when that console block reports it `(all)`.

use phobos_core::launch::Arg;
use phobos_core::types::Value;
use phobos_runtime::checks;
use phobos_tests::{make_args, program, root};

/// Each ph block with the console block that follows it, if any.
fn blocks(text: &str) -> Vec<(String, Option<String>)> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("```ph\n") {
        let body = &rest[at + 6..];
        let end = body.find("```").expect("a closed block");
        let code = body[..end].to_string();
        rest = &body[end + 3..];
        let console = rest.trim_start().strip_prefix("```console\n").map(|c| {
            let end = c.find("```").expect("a closed block");
            c[..end].to_string()
        });
        out.push((code, console));
    }
    out
}

/// The `--dim NAME=N` and the `--arg NAME=V` of a `$ phobosc run` line.
struct Flags {
    dims: Vec<(String, usize)>,
    scalars: Vec<(String, i64)>,
}

fn run_flags(console: &str) -> Flags {
    let mut dims = Vec::new();
    let mut scalars = Vec::new();
    let Some(line) = console.lines().find(|l| l.starts_with("$ phobosc run")) else {
        return Flags { dims, scalars };
    };
    let words: Vec<&str> = line.split_whitespace().collect();
    for w in words.windows(2) {
        let Some((k, v)) = w[1].split_once('=') else {
            continue;
        };
        match w[0] {
            "--dim" => dims.push((k.to_string(), v.parse().expect("a dim"))),
            "--arg" => scalars.push((k.to_string(), v.parse().expect("an integer scalar"))),
            _ => {}
        }
    }
    Flags { dims, scalars }
}

#[test]
fn the_language_reference_examples_run() {
    let text = std::fs::read_to_string(root().join("docs/language.md")).expect("the docs");
    let mut ran = 0;
    let mut claims = 0;
    for (i, (code, console)) in blocks(&text).into_iter().enumerate() {
        if !code.contains("kernel ") {
            continue;
        }
        let name = format!("docs block {i}");
        let p = program(&name, &code);
        let console = console.unwrap_or_default();
        let Flags { dims, scalars } = run_flags(&console);
        for kname in p.kernel_names() {
            let k = p.kernel(kname, &[]).expect("checks");
            let scalars: Vec<(&str, Value)> = k
                .params
                .iter()
                .filter_map(|param| {
                    let (_, v) = scalars.iter().find(|(n, _)| *n == param.name)?;
                    let t = match param.kind {
                        phobos_core::ir::ParamKind::Scalar(t) => t,
                        _ => return None,
                    };
                    Some((
                        param.name.as_str(),
                        phobos_core::interp::ops::cast(Value::I64(*v), t),
                    ))
                })
                .collect();
            let mut args: Vec<Arg> = make_args(&k, &dims, &scalars);
            phobos_tests::run_everywhere(&k, &mut args);
            for c in checks::evaluate(&p, kname, &k, &args).expect("checks evaluate") {
                let claimed = console.contains(&format!("check `{}`", c.name))
                    && console.lines().any(|l| {
                        l.contains(&format!("check `{}`", c.name)) && l.ends_with("(all)")
                    });
                claims += usize::from(claimed);
                assert!(
                    !claimed || c.all(),
                    "{name}: check `{}` holds for {} of {}",
                    c.name,
                    c.holds,
                    c.total
                );
            }
            ran += 1;
        }
    }
    eprintln!("{ran} kernels ran, {claims} checks claimed (all) held");
    assert!(ran >= 10, "only {ran} kernels ran");
    assert!(claims >= 15, "only {claims} checks were claimed to hold");
}
