//! Reading a source file into a checked program, rendering its diagnostics.

use anyhow::{Context, Result};
use phobos_core::{Diagnostic, Program, render};
use std::io::IsTerminal;
use std::path::Path;

pub fn load(path: &Path) -> Result<(Program, Vec<Diagnostic>)> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let (program, mut diags) = Program::parse(&path.display().to_string(), &text);
    diags.extend(program.check());
    diags.sort_by(|a, b| (a.span(), a).cmp(&(b.span(), b)));
    diags.dedup();
    Ok((program, diags))
}

pub fn print_diagnostics(program: &Program, diags: &[Diagnostic]) {
    let color = std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    eprint!("{}", render(diags, &program.sources, color));
}
