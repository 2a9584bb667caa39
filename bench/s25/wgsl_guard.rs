// A refactoring guard, not a test: copy to compiler/gpu/tests/zz_guard.rs, run
// `cargo test --release -p phobos-gpu --test zz_guard` before and after a change,
// and diff /tmp/zz_guard.txt (a hash of the WGSL and --explain text of every kernel
// of examples/, tests/spellings/, the fixtures and bench/s17-s24 at every
// configuration, dims symbolic or N = 1024 / 4096, four option sets). Session 25
// checked its plan steps with it (1656 cases). ZZ_DIR=DIR also writes each text.
//! WGSL of every kernel, before and after a refactor.
#![allow(clippy::field_reassign_with_default)]
use phobos_core::Program;
use phobos_gpu::{GpuOptions, Precision, compile, specialize};
use std::fmt::Write;

#[test]
fn zz_guard_dump() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let mut files = Vec::new();
    for dir in [
        "examples",
        "tests/spellings",
        "tests/spellings/chunked",
        "bench/s17",
        "bench/s18",
        "bench/s20",
        "bench/s24",
        "tests/fixtures/ok",
    ] {
        let Ok(rd) = std::fs::read_dir(format!("{root}/{dir}")) else {
            continue;
        };
        let mut v: Vec<_> = rd
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "ph"))
            .collect();
        v.sort();
        files.extend(v);
    }
    let mut out = String::new();
    for f in files {
        let src = std::fs::read_to_string(&f).unwrap();
        let (program, diags) = Program::parse("t.ph", &src);
        if !diags.is_empty() {
            continue;
        }
        for name in program.kernel_names() {
            for cfg in program.configs(name) {
                let Ok(k) = program.kernel(name, &cfg) else {
                    continue;
                };
                for shape in [0u64, 1024, 4096] {
                    let dims: Vec<u64> = k
                        .dims
                        .iter()
                        .map(|d| if d == "N" { shape } else { 64 })
                        .collect();
                    let k2 = if shape == 0 { std::borrow::Cow::Borrowed(&k) } else { specialize(&k, &dims) };
                    for (wg, dev, prec) in [
                        (64, true, Precision::Exact),
                        (256, true, Precision::Fast),
                        (1024, true, Precision::Exact),
                        (128, false, Precision::Exact),
                    ] {
                        let mut o = GpuOptions::default();
                        o.workgroup_size = wg;
                        o.precision = prec;
                        if dev {
                            o.subgroup_width = 32;
                            o.subgroup_layout_known = true;
                            o.wide_div = true;
                            o.heavy_groups = true;
                            o.int64 = true;
                            o.workgroup_memory = 48 * 1024;
                        }
                        let text = match compile(&k2, &o) {
                            Ok(c) => format!("{}\n{}", c.wgsl(), c.explain()),
                            Err(e) => format!("ERR {e}"),
                        };
                        let h = blake(&text);
                        let _ = writeln!(
                            out,
                            "{} {name} {cfg:?} N={shape} wg{wg} {dev} {prec:?} {h:016x}",
                            f.display()
                        );
                        if let Ok(d) = std::env::var("ZZ_DIR") {
                            let p = format!(
                                "{d}/{}-{name}-{}-{shape}-{wg}-{dev}.wgsl",
                                f.file_stem().unwrap().to_string_lossy(),
                                cfg.iter()
                                    .map(|(a, b)| format!("{a}{b}"))
                                    .collect::<String>()
                            );
                            std::fs::write(p, &text).unwrap();
                        }
                    }
                }
            }
        }
    }
    std::fs::write(
        std::env::var("ZZ_OUT").unwrap_or("/tmp/zz_guard.txt".into()),
        out,
    )
    .unwrap();
}

fn blake(s: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    s.hash(&mut h);
    h.finish()
}
