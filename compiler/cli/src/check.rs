//! `phobosc check FILE...`

use crate::source;
use anyhow::Result;
use std::path::PathBuf;
use std::process::ExitCode;

pub fn check(files: &[PathBuf]) -> Result<ExitCode> {
    let mut clean = true;
    for path in files {
        let (program, diags) = source::load(path)?;
        if !diags.is_empty() {
            clean = false;
            source::print_diagnostics(&program, &diags);
        }
    }
    Ok(if clean {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
