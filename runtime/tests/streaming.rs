//! A launch's transfers (`launch_streaming` with `Transfers`): the sink
//! gets the bytes the CPU computes, the host tensors are filled where they
//! should be and left alone where the sink takes them alone, they stay on
//! the device, or they were generated there, until `Gpu::read_back_stale`
//! brings them home (a check that runs off the GPU does so first); inputs
//! generated on the device have `inputs::tensor`'s bits. Skips without a GPU adapter unless
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

    // (sink_only, on_device, generated and zeroed): X generated on the
    // device (its host tensor a placeholder of zeros), Y known zero; Y to
    // the sink alone, or left on the device, or filled as well.
    type Case = (Vec<usize>, Vec<usize>, Vec<usize>, Vec<usize>);
    let cases: [Case; 4] = [
        (vec![1], vec![], vec![0], vec![1]),
        (vec![1], vec![], vec![], vec![]),
        (vec![], vec![1], vec![0], vec![]),
        (vec![], vec![], vec![], vec![]),
    ];
    for (sink_only, on_device, generated, zeroed) in cases {
        let case = format!("{sink_only:?} {on_device:?} {generated:?} {zeroed:?}");
        let mut got = args.clone();
        if !generated.is_empty() {
            got[0] = Arg::Tensor(Tensor::zeros(phobos_core::types::Scalar::F32, &[m, 256]));
        }
        let placeholders = got.clone();
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
                on_device: on_device.clone(),
                generated: generated.clone(),
                zeroed,
            }),
        )
        .unwrap();
        let resident = resident.expect("the GPU keeps the buffers");
        if on_device.is_empty() {
            assert!(
                streamed == want_y,
                "{case}: the sink's bytes differ from the CPU's"
            );
        } else {
            assert!(streamed.is_empty(), "{case}: the sink took nothing");
            let mut read = Vec::new();
            gpu.read_resident(&resident, 1, want_y.len() as u64, |at, piece| {
                assert_eq!(at as usize, read.len());
                read.extend_from_slice(piece);
            })
            .unwrap();
            assert!(
                read == want_y,
                "{case}: Y on the device differs from the CPU's"
            );
        }
        if sink_only.is_empty() && on_device.is_empty() && generated.is_empty() {
            assert!(resident.host_current(), "{case}");
            assert!(
                bytes(tensor(&got, 1)) == want_y,
                "{case}: the host's Y differs"
            );
            continue;
        }
        assert!(!resident.host_current(), "{case}");
        for p in [0, 1] {
            let left = sink_only.contains(&p) || on_device.contains(&p) || generated.contains(&p);
            if left {
                assert!(
                    tensor(&got, p) == tensor(&placeholders, p),
                    "{case}: {p} left as it was"
                );
            }
        }
        // A check off the GPU reads the stale tensors back before it runs.
        let counted = checks::evaluate_kept(
            &program,
            "dropout_rows",
            &kernel,
            &mut got,
            &cpu,
            Some(&resident),
        )
        .expect("the checks run on the CPU");
        assert_eq!(counted, want_checks, "{case}");
        assert!(resident.host_current(), "{case}");
        assert!(
            bytes(tensor(&got, 1)) == want_y,
            "{case}: the host's Y differs"
        );
        assert!(
            tensor(&got, 0).bits_eq(tensor(&want, 0)),
            "{case}: the host's X differs"
        );
        // Nothing is left to read back.
        gpu.read_back_stale(&resident, &mut got).unwrap();
        assert!(bytes(tensor(&got, 1)) == want_y, "{case}");
    }
}
