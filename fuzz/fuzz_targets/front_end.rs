//! The front end on arbitrary text: parse (with the prelude), `check`, and
//! the IR of every kernel in every configuration of its tuning space. Any
//! input must give a result or diagnostics; a panic is a finding.

#![no_main]

use libfuzzer_sys::fuzz_target;
use phobos_core::{Diagnostic, Program, render};

/// Rendering (ariadne) costs about 90% of the time on mutated inputs, most of
/// which carry many syntax errors; the first few of each list are rendered.
const RENDERED: usize = 3;

fn render_some(diags: &[Diagnostic], program: &Program) {
    let _ = render(&diags[..diags.len().min(RENDERED)], &program.sources, false);
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (program, diags) = Program::parse("fuzz.ph", text);
    // Rendering is part of the front end: every diagnostic's spans must lie
    // in its source.
    render_some(&diags, &program);
    let checked = program.check();
    render_some(&checked, &program);
    for name in program.kernel_names() {
        for config in program.configs(name) {
            match program.kernel(name, &config) {
                Ok(kernel) => {
                    let _ = kernel.print();
                    for check in program.checks_for(name) {
                        if let Err(d) = program.check_kernel(name, &config, check) {
                            render_some(&d, &program);
                        }
                    }
                }
                Err(d) => {
                    render_some(&d, &program);
                }
            }
        }
    }
});
