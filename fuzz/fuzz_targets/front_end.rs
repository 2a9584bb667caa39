//! The front end on arbitrary text: parse (with the prelude), `check`, and
//! the IR of every kernel in every configuration of its tuning space. Any
//! input must give a result or diagnostics; a panic is a finding.

#![no_main]

use libfuzzer_sys::fuzz_target;
use phobos_core::{Program, render};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (program, diags) = Program::parse("fuzz.ph", text);
    // Rendering is part of the front end: every diagnostic's spans must lie
    // in its source.
    let _ = render(&diags, &program.sources, false);
    let checked = program.check();
    let _ = render(&checked, &program.sources, false);
    for name in program.kernel_names() {
        for config in program.configs(name) {
            match program.kernel(name, &config) {
                Ok(kernel) => {
                    let _ = kernel.print();
                    for check in program.checks_for(name) {
                        if let Err(d) = program.check_kernel(name, &config, check) {
                            let _ = render(&d, &program.sources, false);
                        }
                    }
                }
                Err(d) => {
                    let _ = render(&d, &program.sources, false);
                }
            }
        }
    }
});
