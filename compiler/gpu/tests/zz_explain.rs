mod common;
use phobos_core::Program;
use phobos_gpu::{GpuOptions, Precision, compile};
#[test]
fn show() {
    let file = std::env::var("F").unwrap();
    let name = std::env::var("K").unwrap();
    let cfg: Vec<(String, i64)> = std::env::var("C")
        .unwrap_or_default()
        .split(',')
        .filter(|s| !s.is_empty())
        .map(|kv| {
            let (a, b) = kv.split_once('=').unwrap();
            (a.to_string(), b.parse().unwrap())
        })
        .collect();
    let dims: Vec<u64> = std::env::var("D")
        .unwrap_or_default()
        .split(',')
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().unwrap())
        .collect();
    let wg: u32 = std::env::var("WG")
        .map(|s| s.parse().unwrap())
        .unwrap_or(256);
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(&file);
    let text = std::fs::read_to_string(&path).unwrap();
    let (program, diags) = Program::parse(&file, &text);
    assert!(diags.is_empty());
    let k = program.kernel(&name, &cfg).unwrap();
    let k = if dims.is_empty() {
        common::as_launched(k, &text)
    } else {
        phobos_gpu::specialize(&k, &dims).into_owned()
    };
    let fast = std::env::var("EXACT").is_err();
    let o = GpuOptions {
        precision: if fast {
            Precision::Fast
        } else {
            Precision::Exact
        },
        workgroup_size: wg,
        subgroup_width: 32,
        workgroup_memory: 48 * 1024,
        cooperative: true,
        subgroup_layout_known: true,
        subgroup_shuffle: true,
        heavy_groups: true,
        ..Default::default()
    };
    let c = compile(&k, &o).unwrap();
    println!("{}", phobos_gpu::plan::explain(&c));
    std::fs::write("/tmp/zz.wgsl", c.wgsl()).unwrap();
}
