//! Prints the WGSL of one kernel, as a device with the given options would
//! get it:
//!
//! `cargo run -p phobos-gpu --example emit FILE KERNEL [fast] [NAME=VALUE ...]`
//!
//! Each `NAME=VALUE` is an `@autotune` value (`R=1`), a dim in declaration
//! order (`dims=65536,1024`), or an option: `subgroups=32`
//! (`subgroup_width`), `layout=1` (`subgroup_layout_known`, as the
//! runtime sets it where the probe found the subgroups in order), `wide=1`
//! (`wide_div`), `wg=256` (`workgroup_size`), `heavy=1` (`heavy_groups`),
//! `wgmem=49152` (`workgroup_memory`, bytes).
//! `explain=1` prints the plan before the WGSL.
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let text = std::fs::read_to_string(&args[1]).expect("readable source");
    let (program, _) = phobos_core::Program::parse(&args[1], &text);
    let mut config = Vec::new();
    let mut dims: Vec<u64> = Vec::new();
    let mut set: Vec<(String, u32)> = Vec::new();
    let mut fast = false;
    for a in &args[3..] {
        if a == "fast" {
            fast = true;
            continue;
        }
        let (name, value) = a.split_once('=').expect("NAME=VALUE");
        match name {
            "dims" => {
                dims = value
                    .split(',')
                    .map(|d| d.parse().expect("a dim"))
                    .collect()
            }
            "subgroups" | "layout" | "wide" | "wg" | "wgmem" | "heavy" | "explain" => {
                set.push((name.into(), value.parse().expect("a number")))
            }
            _ => config.push((name.to_string(), value.parse().expect("a value"))),
        }
    }
    let kernel = program.kernel(&args[2], &config).expect("checks");
    let kernel = if dims.is_empty() {
        std::borrow::Cow::Borrowed(&kernel)
    } else {
        phobos_gpu::specialize(&kernel, &dims)
    };
    let mut options = phobos_gpu::GpuOptions::for_kernel(&kernel);
    if fast {
        options.precision = phobos_gpu::Precision::Fast;
    }
    let mut explain = false;
    for (name, value) in set {
        match name.as_str() {
            "subgroups" => options.subgroup_width = value,
            "layout" => options.subgroup_layout_known = value != 0,
            "wide" => options.wide_div = value != 0,
            "wg" => options.workgroup_size = value,
            "wgmem" => options.workgroup_memory = value.into(),
            "heavy" => options.heavy_groups = value != 0,
            _ => explain = value != 0,
        }
    }
    match phobos_gpu::compile(&kernel, &options) {
        Ok(c) => {
            if explain {
                eprintln!("{}", c.explain());
            }
            print!("{}", c.wgsl())
        }
        Err(e) => eprintln!("{e}"),
    }
}
