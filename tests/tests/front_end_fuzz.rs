//! The front end never panics: random token streams and mutated fixtures
//! go through parsing, checking and IR building, and only produce diagnostics.

use phobos_core::Program;
use phobos_tests::{ph_files, root};
use proptest::prelude::*;

const VOCAB: &[&str] = &[
    "fn",
    "kernel",
    "let",
    "var",
    "tensor",
    "tile",
    "bitcast",
    "in",
    "for",
    "..",
    "sum",
    "max",
    "argmax",
    "axis",
    "true",
    "false",
    "x",
    "X",
    "Y",
    "M",
    "R",
    "seed",
    "ctx",
    "block",
    "iota",
    "where",
    "hash32",
    "uniform",
    "dropout",
    "f32",
    "i32",
    "u32",
    "0",
    "1",
    "16",
    "256",
    "-2073254261",
    "0xFF",
    "1.5e-3",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    ",",
    ":+",
    ":",
    ";",
    ".",
    "@",
    "autotune",
    "grid",
    "=",
    "==",
    "!=",
    "<",
    "<=",
    ">",
    ">=",
    "+",
    "-",
    "*",
    "/",
    "%",
    "&",
    "|",
    "^",
    "~",
    "!",
    "&&",
    "||",
    "<<",
    ">>",
    "\n",
    " ",
    "// c\n",
    "$",
];

fn front_end(text: &str) {
    let (program, _) = Program::parse("fuzz.ph", text);
    let _ = program.check();
    for name in program.kernel_names() {
        // Whatever the checker accepts must verify: no internal errors.
        if let Err(d) = program.kernel(name, &[]) {
            let ice = d
                .iter()
                .find(|d| d.code == phobos_core::diag::code::INTERNAL);
            assert!(ice.is_none(), "{text}\n{ice:?}");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    #[test]
    fn random_token_streams(tokens in prop::collection::vec(prop::sample::select(VOCAB), 0..80)) {
        front_end(&tokens.join(" "));
    }

    #[test]
    fn mutated_fixtures(file in 0usize..64, edits in prop::collection::vec((any::<usize>(), 0u8..4, prop::sample::select(VOCAB)), 1..6)) {
        let mut files = ph_files(&root().join("tests/fixtures/ok"));
        files.extend(ph_files(&root().join("examples")));
        let mut text = std::fs::read_to_string(&files[file % files.len()]).unwrap();
        for (at, kind, tok) in edits {
            let mut at = at % (text.len() + 1);
            while !text.is_char_boundary(at) {
                at -= 1;
            }
            let end = (at + 1..=text.len()).find(|&e| text.is_char_boundary(e)).unwrap_or(at);
            match kind {
                0 => text.insert_str(at, tok),
                1 => text.replace_range(at..end, ""),
                2 => text.replace_range(at..end, tok),
                _ => text.truncate(at),
            }
        }
        front_end(&text);
    }
}

#[test]
fn deep_nesting_and_huge_literals() {
    front_end(&format!(
        "kernel k(Y: tensor<i32>[N]) {{ Y = {}1{} }}",
        "(".repeat(200),
        ")".repeat(200)
    ));
    front_end("kernel k(Y: tensor<i32>[N]) { Y = 99999999999999999999999999999999999999999999 }");
    front_end("kernel k(Y: tensor<f32>[N]) { Y = 1e999 }");
    front_end("kernel k(Y: tensor<f32>[4294967296]) { Y = 1.0 }");
    front_end(
        "@autotune(R in [2147483647]) kernel k(Y: tensor<f32>[N]) { Y[0 :+ R * R * R] = 1.0 }",
    );
}
