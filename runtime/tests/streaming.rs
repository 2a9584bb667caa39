//! A streamed read-back (`launch_streaming`) hands its sink the same bytes
//! the CPU computes, fills the host tensors it should, leaves alone the
//! ones its sink takes alone (`Transfers::sink_only`) until
//! `Gpu::read_back_stale` brings them home, and a check that runs off the GPU
//! reads them back first. Skips without a GPU adapter unless
//! `PHOBOS_REQUIRE_GPU` is set.

use phobos_core::Program;
use phobos_core::launch::Arg;
use phobos_core::tensor::{Data, Tensor};
use phobos_runtime::{Backend, Options, Transfers, checks, gpu::Gpu, launch, launch_streaming};

/// The little-endian bytes of an f32 tensor, as a `.npy` file holds them.
fn bytes(t: &Tensor) -> Vec<u8> {
    let Data::F32(v) = &t.data else {
        panic!("an f32 tensor")
    };
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn tensor(args: &[Arg], p: usize) -> &Tensor {
    let Arg::Tensor(t) = &args[p] else {
        panic!("parameter {p} is a tensor")
    };
    t
}

#[test]
fn a_streamed_output_has_the_cpu_bytes_in_the_sink_and_on_the_host_when_asked() {
    let gpu = match Gpu::shared() {
        Ok(g) => g,
        Err(e) => {
            assert!(
                std::env::var_os("PHOBOS_REQUIRE_GPU").is_none(),
                "PHOBOS_REQUIRE_GPU is set and there is no adapter: {e}"
            );
            eprintln!("skipped: no GPU adapter ({e})");
            return;
        }
    };
    let src = include_str!("../../examples/dropout_rows.ph");
    let (program, diags) = Program::parse("dropout_rows.ph", src);
    assert!(diags.is_empty(), "{diags:?}");
    let kernel = program.kernel("dropout_rows", &[]).unwrap();
    // Y is 68 MiB: read back in two pieces, the second partial.
    let m = 70000;
    let args = vec![
        Arg::Tensor(phobos_core::inputs::tensor(
            phobos_core::types::Scalar::F32,
            &[m, 256],
        )),
        Arg::Tensor(Tensor::zeros(phobos_core::types::Scalar::F32, &[m, 256])),
        Arg::Scalar(phobos_core::types::Value::I32(5)),
    ];
    let cpu = Options {
        backend: Backend::Cpu,
        ..Options::default()
    };
    let mut want = args.clone();
    launch(&kernel, &mut want, &cpu).unwrap();
    let want_y = bytes(tensor(&want, 1));
    let want_checks = checks::evaluate_on(&program, "dropout_rows", &kernel, &mut want, &cpu)
        .expect("the checks run on the CPU");
    let on_gpu = Options {
        backend: Backend::Gpu,
        ..Options::default()
    };

    // The sink alone takes Y: it gets every byte, in order, and the host
    // tensor stays as it was until `read_back_stale`.
    for sink_only in [vec![1], vec![]] {
        let mut got = args.clone();
        let mut streamed = Vec::new();
        let mut sink = |param: usize, at: u64, piece: &[u8]| {
            assert_eq!(param, 1, "only Y is stored");
            assert_eq!(at as usize, streamed.len(), "pieces come in order");
            streamed.extend_from_slice(piece);
        };
        let (_, resident) = launch_streaming(
            &kernel,
            &mut got,
            &on_gpu,
            Some(Transfers {
                sink: &mut sink,
                sink_only: sink_only.clone(),
            }),
        )
        .unwrap();
        let resident = resident.expect("the GPU keeps the buffers");
        assert!(streamed == want_y, "the sink's bytes differ from the CPU's");
        if sink_only.is_empty() {
            assert!(resident.host_current());
            assert!(bytes(tensor(&got, 1)) == want_y, "the host's Y differs");
            continue;
        }
        assert!(!resident.host_current());
        assert!(tensor(&got, 1) == tensor(&args, 1), "Y was left as it was");
        // A check off the GPU reads Y back before it runs.
        let counted =
            checks::evaluate_kept(&program, "dropout_rows", &kernel, &mut got, &cpu, Some(&resident))
                .expect("the checks run on the CPU");
        assert_eq!(counted, want_checks);
        assert!(resident.host_current());
        assert!(bytes(tensor(&got, 1)) == want_y, "the host's Y differs");
        // Nothing is left to read back.
        gpu.read_back_stale(&resident, &mut got).unwrap();
        assert!(bytes(tensor(&got, 1)) == want_y);
    }
}
