//! Prints the WGSL of one kernel:
//! `cargo run -p phobos-gpu --example emit FILE KERNEL [fast]`.
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let text = std::fs::read_to_string(&args[1]).expect("readable source");
    let (program, _) = phobos_core::Program::parse(&args[1], &text);
    let kernel = program.kernel(&args[2], &[]).expect("checks");
    let mut options = phobos_gpu::GpuOptions::for_kernel(&kernel);
    if args.get(3).is_some_and(|a| a == "fast") {
        options.precision = phobos_gpu::Precision::Fast;
    }
    match phobos_gpu::compile(&kernel, &options) {
        Ok(c) => print!("{}", c.wgsl()),
        Err(e) => eprintln!("{e}"),
    }
}
