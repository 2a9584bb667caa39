//! The examples of `docs/language.md` are real: every fenced `ph` block
//! either is the standard library's own text (each of its lines appears in
//! `stdlib/std/*.ph`, so the page cannot drift from the source) or checks
//! cleanly, and each of its kernels runs on the interpreter and on the CPU
//! backend with identical bits, its `// check` lines evaluated (without
//! error; the page itself says for how many elements each holds). A block
//! followed by a `console` block showing diagnostics (`Error`) must fail to
//! check instead. Dims come from the `--dim N=V` flags of the `console`
//! block that follows, else 37.

use phobos_core::{Program, render};
use phobos_tests::{make_args, root};

struct Block {
    line: usize,
    code: String,
    /// The `console` block right after it, if any.
    console: Option<String>,
}

fn blocks(text: &str) -> Vec<Block> {
    let mut out: Vec<Block> = Vec::new();
    let mut lines = text.lines().enumerate().peekable();
    while let Some((i, l)) = lines.next() {
        let lang = match l.trim_start().strip_prefix("```") {
            Some(lang) if !lang.is_empty() => lang.trim().to_string(),
            _ => continue,
        };
        let mut body = String::new();
        for (_, l) in lines.by_ref() {
            if l.trim_start().starts_with("```") {
                break;
            }
            body.push_str(l);
            body.push('\n');
        }
        match lang.as_str() {
            "ph" => out.push(Block {
                line: i + 1,
                code: body,
                console: None,
            }),
            "console" => {
                if let Some(last) = out.last_mut()
                    && last.console.is_none()
                {
                    last.console = Some(body);
                }
            }
            _ => {}
        }
    }
    out
}

fn dims(console: Option<&str>) -> Vec<(String, usize)> {
    let Some(c) = console else { return Vec::new() };
    let words: Vec<&str> = c.split_whitespace().collect();
    let mut out = Vec::new();
    for w in words.windows(2) {
        if w[0] == "--dim"
            && let Some((k, v)) = w[1].split_once('=')
            && let Ok(v) = v.parse()
        {
            out.push((k.to_string(), v));
        }
    }
    out
}

#[test]
fn the_examples_in_language_md_check_and_run() {
    let path = root().join("docs/language.md");
    let text = std::fs::read_to_string(&path).expect("docs/language.md");
    let stdlib: String = ["random", "math", "tandem"]
        .iter()
        .filter_map(|f| std::fs::read_to_string(root().join(format!("stdlib/std/{f}.ph"))).ok())
        .collect();
    let blocks = blocks(&text);
    assert!(blocks.len() > 20, "only {} ph blocks found", blocks.len());
    let (mut ran, mut quoted, mut failing) = (0, 0, 0);
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
        let expect_error = b
            .console
            .as_deref()
            .is_some_and(|c| c.contains("Error") || c.contains("error"));
        if expect_error {
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
        let dims = dims(b.console.as_deref());
        for name in program.kernel_names() {
            let kernel = program
                .kernel(name, &[])
                .unwrap_or_else(|d| panic!("{at}: {}", render(&d, &program.sources, false)));
            let mut args = make_args(&kernel, &dims, &[]);
            phobos_tests::run_everywhere(&kernel, &mut args);
            phobos_runtime::checks::evaluate(&program, name, &kernel, &args)
                .unwrap_or_else(|e| panic!("{at}: {e}"));
            ran += 1;
        }
    }
    eprintln!("{ran} kernels ran, {quoted} blocks quote the stdlib, {failing} show errors");
    assert!(ran > 10);
}
