//! `phobosc fill --k K`: the chunk length of SPEC.md section 3.3 on every
//! backend. `--k 8` gives the bytes of `Tandem::with_k(key, 8)`, other bits
//! than the default K = 32, the same on cpu, interp and gpu for every type;
//! a K that is not a power of two from 1 to 4096 is an error naming `--k`.
//! The GPU half skips without an adapter unless `PHOBOS_REQUIRE_GPU=1`.

use phobos_tandem::{Key, Tandem};
use std::process::{Command, Output};

fn phobosc(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_phobosc"))
        .arg("fill")
        .args(args)
        .env("NO_COLOR", "1")
        .env_remove("PHOBOS_BACKEND")
        .output()
        .expect("phobosc runs")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The bytes of a successful run.
fn bytes(args: &[&str]) -> Vec<u8> {
    let o = phobosc(args);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    o.stdout
}

fn gpu_available() -> bool {
    match phobos_runtime::gpu::Gpu::shared() {
        Ok(_) => true,
        Err(e) => {
            assert!(
                std::env::var("PHOBOS_REQUIRE_GPU").map_or(true, |v| v != "1"),
                "PHOBOS_REQUIRE_GPU=1 but the GPU backend is not available: {e}"
            );
            eprintln!("skipping the GPU: {e}");
            false
        }
    }
}

/// Every TYPE form.
const TYPES: &[&str] = &[
    "u8",
    "u16",
    "u32",
    "u64",
    "f16",
    "f32",
    "f64",
    "bool",
    "below:1000",
    "below:0x80000001",
    "below:0xfffffffffffffffe",
    "below:-10:21",
    "below:-3000000000:6",
    "below:-5:0x100000000",
    "normal_f32",
    "normal_f64",
    "exp_f32",
    "exp_f64",
    "choice:1,2,0,3.5",
];

#[test]
fn k_8_is_the_reference_stream_with_k_8_and_not_the_default() {
    // Elements 300 .. 1300 of `Tandem::with_k(Key::from_seed(5), 8)`: more
    // than one group of 8 chunks of K = 8 blocks (64 blocks, 256 words), and
    // an unaligned start.
    let k8 = Tandem::with_k(Key::from_seed(5), 8).unwrap();
    let mut u32s = vec![0u32; 1000];
    k8.fill_u32(&mut u32s, 300).unwrap();
    let want_u32: Vec<u8> = u32s.iter().flat_map(|x| x.to_le_bytes()).collect();
    // normal_f64 takes the ziggurat's misses, which read continuation
    // sequences that do not depend on K (section 3.5).
    let mut normals = vec![0f64; 1000];
    k8.fill_normal_f64(&mut normals, 300).unwrap();
    let want_normal: Vec<u8> = normals.iter().flat_map(|x| x.to_le_bytes()).collect();
    for backend in ["cpu", "interp"] {
        for (ty, want) in [("u32", &want_u32), ("normal_f64", &want_normal)] {
            let args = [
                ty,
                "--key",
                "5",
                "--start",
                "300",
                "--count",
                "1000",
                "--backend",
                backend,
            ];
            let got = bytes(&[&args[..], &["--k", "8"]].concat());
            assert!(got == *want, "{ty} --k 8 on {backend}: not with_k(key, 8)");
            let default = bytes(&args);
            let k32 = bytes(&[&args[..], &["--k", "32"]].concat());
            assert_eq!(default, k32, "{ty} on {backend}: --k 32 is the default");
            assert_ne!(got, default, "{ty} on {backend}: K = 8 equals K = 32");
        }
    }
}

#[test]
fn every_k_and_type_gives_the_same_bytes_on_every_backend() {
    let gpu = gpu_available();
    for k in ["1", "8", "0x1000"] {
        for &ty in TYPES {
            let args = [
                ty, "--key", "7", "--start", "1001", "--count", "3001", "--k", k,
            ];
            let cpu = bytes(&[&args[..], &["--backend", "cpu", "--threads", "3"]].concat());
            let interp = bytes(&[&args[..], &["--backend", "interp"]].concat());
            assert!(cpu == interp, "{ty} --k {k}: cpu and interp differ");
            if gpu {
                let g = bytes(&[&args[..], &["--backend", "gpu"]].concat());
                assert!(g == cpu, "{ty} --k {k}: gpu and cpu differ");
            }
        }
    }
}

#[test]
fn the_summary_names_k() {
    let o = phobosc(&[
        "u32",
        "--key",
        "1",
        "--count",
        "4",
        "--k",
        "64",
        "--verbose",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains(", K 64,"), "{}", stderr(&o));
}

#[test]
fn a_bad_k_is_an_error_naming_k() {
    for k in [
        "0",
        "3",
        "31",
        "8192",
        "0x100000020",
        "-8",
        "eight",
        "",
        "4096.0",
    ] {
        for backend in ["cpu", "interp", "gpu"] {
            let o = phobosc(&[
                "u32",
                "--key",
                "1",
                "--count",
                "4",
                "--backend",
                backend,
                "--k",
                k,
            ]);
            let e = stderr(&o);
            assert_eq!(o.status.code(), Some(1), "--k {k:?} on {backend}: {e}");
            assert!(o.stdout.is_empty(), "--k {k:?} on {backend} wrote data");
            assert!(
                e.contains(&format!(
                    "--k `{k}`: the chunk length K must be a power of two from 1 to 4096"
                )),
                "--k {k:?} on {backend}:\n{e}"
            );
            assert!(!e.contains("panicked"), "--k {k:?}: {e}");
        }
    }
    // The ends of the range are accepted.
    for k in ["1", "4096"] {
        assert_eq!(
            bytes(&["u32", "--key", "1", "--count", "4", "--k", k]).len(),
            16
        );
    }
}
