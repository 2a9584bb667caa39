//! The web playground's compiler entry points: strings in, strings out, so
//! that a thin wasm wrapper and a static page can drive the compiler core.
//! The page, its assets and `phobosc serve` come with the playground issue.

use phobos_core::{Program, render};

/// Checks a source text and returns its diagnostics rendered as plain text
/// (empty when the program is clean).
pub fn diagnostics(name: &str, source: &str) -> String {
    let (program, mut diags) = Program::parse(name, source);
    diags.extend(program.check());
    render(&diags, &program.sources, false)
}

#[cfg(test)]
mod tests {
    #[test]
    fn reports_and_accepts() {
        assert!(super::diagnostics("a.ph", "kernel k(Y: tensor<f32>[4]) { Y = 1.0 }").is_empty());
        assert!(
            super::diagnostics("b.ph", "kernel k(Y: tensor<f32>[4]) { Y = 1 + true }")
                .contains("E0")
        );
    }
}
