//! The front end on arbitrary text: parse (with the prelude), `check`, and
//! the IR of every kernel in every configuration of its tuning space. Any
//! input must give a result or diagnostics; a panic is a finding.

#![no_main]

use libfuzzer_sys::fuzz_target;
use phobos_core::{Diagnostic, Program, render};

/// Rendering (ariadne) costs about 90% of the time on mutated inputs, most of
/// which carry many syntax errors, and a few ms a call: the first few
/// diagnostics of each list are rendered, and only the first few lists (a
/// space of thousands of configurations that each fail would otherwise take
/// seconds, in this harness only: `phobosc` renders once).
const RENDERED: usize = 3;
const RENDER_CALLS: usize = 8;

fn render_some(diags: &[Diagnostic], program: &Program, calls: &mut usize) {
    if *calls < RENDER_CALLS {
        *calls += 1;
        let _ = render(&diags[..diags.len().min(RENDERED)], &program.sources, false);
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (program, diags) = Program::parse("fuzz.ph", text);
    let mut calls = 0;
    // Rendering is part of the front end: every diagnostic's spans must lie
    // in its source.
    render_some(&diags, &program, &mut calls);
    let checked = program.check();
    render_some(&checked, &program, &mut calls);
    for name in program.kernel_names() {
        for config in program.configs(name) {
            match program.kernel(name, &config) {
                Ok(kernel) => {
                    let _ = kernel.print();
                    for check in program.checks_for(name) {
                        if let Err(d) = program.check_kernel(name, &config, check) {
                            render_some(&d, &program, &mut calls);
                        }
                    }
                }
                Err(d) => {
                    render_some(&d, &program, &mut calls);
                }
            }
        }
    }
});
