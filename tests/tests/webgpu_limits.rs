//! `phobosc build` plans within WebGPU's default limits (issue 28): every
//! module it writes for every example, fixture and spelling, in every
//! configuration, declares at most 16,384 bytes of workgroup memory and
//! 256 invocations a workgroup and binds at most 8 storage buffers, as built (dims symbolic) and as a launch
//! specialises it at the file's `// dims:` (37 for dims it does not name);
//! the modules Chromium's WebGPU rejected (a softmax with `let` tiles at
//! R = 4 over rows of 1024 declared 32,800 bytes) are among them. Where a
//! kernel cannot fit, the compile must fail with every array named, never
//! write a module a browser would refuse.

use phobos_core::types::Dim;
use phobos_tests::{fixture_dims, ph_files, program, root, stem};

#[test]
fn every_built_module_fits_webgpus_default_limits() {
    let mut files = ph_files(&root().join("examples"));
    files.extend(ph_files(&root().join("tests/fixtures/ok")));
    files.extend(ph_files(&root().join("tests/spellings")));
    let mut checked = 0;
    for path in files {
        let text = std::fs::read_to_string(&path).expect("readable");
        let p = program(&format!("{}.ph", stem(&path)), &text);
        let dims = fixture_dims(&text);
        for name in p.kernel_names() {
            for config in p.configs(name) {
                let Ok(k) = p.kernel(name, &config) else {
                    continue;
                };
                let extents: Vec<u64> = k
                    .dims
                    .iter()
                    .map(|d| {
                        dims.iter()
                            .find(|(n, _)| n == d)
                            .map_or(37, |(_, v)| *v as u64)
                    })
                    .collect();
                let specialised = phobos_gpu::specialize(&k, &extents).into_owned();
                for k in [k.clone(), specialised] {
                    let options = phobos_gpu::GpuOptions::for_kernel(&k);
                    assert!(options.workgroup_size <= phobos_gpu::PORTABLE_WORKGROUP_SIZE);
                    let what = format!("{} `{name}` {config:?}", path.display());
                    match phobos_gpu::compile(&k, &options) {
                        Ok(c) => {
                            checked += 1;
                            let used = c.budget.total();
                            assert!(
                                c.check_workgroup_memory(phobos_gpu::WORKGROUP_MEMORY_LIMIT)
                                    .is_ok(),
                                "{what}: {used} bytes of workgroup memory: {}",
                                c.budget.list()
                            );
                            assert!(
                                c.storage_buffers_diagnostic(phobos_gpu::PORTABLE_STORAGE_BUFFERS)
                                    .is_none(),
                                "{what}: {} storage buffers",
                                c.layout.tensors.len()
                            );
                        }
                        // What the GPU does not lower yet (64-bit types,
                        // tiles the plan keeps over a dim) is refused by
                        // name, never written.
                        Err(e) => assert!(
                            e.to_string().contains("not supported on the GPU"),
                            "{what}: {e}"
                        ),
                    }
                }
            }
        }
    }
    assert!(checked > 100, "only {checked} modules checked");
}

/// A kernel whose values cannot fit gets an error naming each array, its
/// bytes and the limit (the message `phobosc build` prints).
#[test]
fn a_kernel_that_cannot_fit_names_its_arrays_and_the_limit() {
    let p = program(
        "big.ph",
        "kernel big(Y: tensor<f32>[N]) {\n  var t: tile<f32>[8192] = f32(iota(0))\n  Y[0 :+ 4] = t[0 :+ 4]\n}",
    );
    let k = p.kernel("big", &[]).expect("checks");
    assert!(k.locals.iter().all(|l| l.shape != [Dim::Sym(0)]));
    let c = phobos_gpu::compile(&k, &phobos_gpu::GpuOptions::for_kernel(&k)).expect("lowers");
    let e = c
        .check_workgroup_memory(phobos_gpu::WORKGROUP_MEMORY_LIMIT)
        .expect_err("32768 bytes do not fit 16384");
    assert!(
        e.contains("`var t: tile<f32>[8192]` 32768 bytes")
            && e.contains("more than the 16384 bytes"),
        "{e}"
    );
}
