//! `phobosc fill` end to end: the bytes of every type, raw and `.npy`, from
//! several starts and on every backend, against the reference crate; the
//! stream closed early by its reader; and every bad input an error that
//! names the argument.

use phobos_tandem::{AliasTable, Key, Tandem};
use std::io::Read;
use std::process::{Command, Output, Stdio};

fn phobosc(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_phobosc"))
        .args(args)
        .env("NO_COLOR", "1")
        .env_remove("PHOBOS_BACKEND")
        .output()
        .expect("phobosc runs")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The reference fill of TYPE as little-endian bytes (seed 5).
fn reference(ty: &str, start: u64, n: usize) -> Vec<u8> {
    fn le<T: Copy + Default, const N: usize>(
        n: usize,
        f: impl FnOnce(&mut [T]),
        b: impl Fn(T) -> [u8; N],
    ) -> Vec<u8> {
        let mut v = vec![T::default(); n];
        f(&mut v);
        v.into_iter().flat_map(b).collect()
    }
    let r = Tandem::new(Key::from_seed(5));
    let s = start;
    match ty {
        "u8" => le(n, |o| r.fill_u8(o, s).unwrap(), |x: u8| [x]),
        "u16" => le(n, |o| r.fill_u16(o, s).unwrap(), u16::to_le_bytes),
        "u32" => le(n, |o| r.fill_u32(o, s).unwrap(), u32::to_le_bytes),
        "u64" => le(n, |o| r.fill_u64(o, s).unwrap(), u64::to_le_bytes),
        "f16" => le(n, |o| r.fill_f16_bits(o, s).unwrap(), u16::to_le_bytes),
        "f32" => le(n, |o| r.fill_f32(o, s).unwrap(), f32::to_le_bytes),
        "f64" => le(n, |o| r.fill_f64(o, s).unwrap(), f64::to_le_bytes),
        "bool" => le(n, |o| r.fill_bool(o, s).unwrap(), |x: bool| [u8::from(x)]),
        "below:1000" => le(
            n,
            |o| r.fill_below_u32(o, s, 1000).unwrap(),
            u32::to_le_bytes,
        ),
        "below:2147483649" => le(
            n,
            |o| r.fill_below_u32(o, s, (1 << 31) + 1).unwrap(),
            u32::to_le_bytes,
        ),
        "below:0x100000000" => le(
            n,
            |o| r.fill_below_u64(o, s, 1 << 32).unwrap(),
            u64::to_le_bytes,
        ),
        "below:-10:21" => le(
            n,
            |o| r.fill_below_i32(o, s, -10, 21).unwrap(),
            i32::to_le_bytes,
        ),
        "below:-3000000000:6" => le(
            n,
            |o| r.fill_below_i64_u32(o, s, -3_000_000_000, 6).unwrap(),
            i64::to_le_bytes,
        ),
        "below:-5:0x100000000" => le(
            n,
            |o| r.fill_below_i64(o, s, -5, 1 << 32).unwrap(),
            i64::to_le_bytes,
        ),
        "normal_f32" => le(n, |o| r.fill_normal_f32(o, s).unwrap(), f32::to_le_bytes),
        "normal_f64" => le(n, |o| r.fill_normal_f64(o, s).unwrap(), f64::to_le_bytes),
        "exp_f32" => le(
            n,
            |o| r.fill_exponential_f32(o, s).unwrap(),
            f32::to_le_bytes,
        ),
        "exp_f64" => le(
            n,
            |o| r.fill_exponential_f64(o, s).unwrap(),
            f64::to_le_bytes,
        ),
        "choice:1,2,0,3.5" => {
            let t = AliasTable::new(&[1.0, 2.0, 0.0, 3.5]).unwrap();
            le(n, |o| r.fill_choice(o, s, &t).unwrap(), u32::to_le_bytes)
        }
        other => panic!("no reference for {other}"),
    }
}

/// Every type with its npy dtype.
const TYPES: &[(&str, &str)] = &[
    ("u8", "|u1"),
    ("u16", "<u2"),
    ("u32", "<u4"),
    ("u64", "<u8"),
    ("f16", "<f2"),
    ("f32", "<f4"),
    ("f64", "<f8"),
    ("bool", "|b1"),
    ("below:1000", "<u4"),
    ("below:2147483649", "<u4"),
    ("below:0x100000000", "<u8"),
    ("below:-10:21", "<i4"),
    ("below:-3000000000:6", "<i8"),
    ("below:-5:0x100000000", "<i8"),
    ("normal_f32", "<f4"),
    ("normal_f64", "<f8"),
    ("exp_f32", "<f4"),
    ("exp_f64", "<f8"),
    ("choice:1,2,0,3.5", "<u4"),
];

#[test]
fn raw_bytes_equal_the_reference_for_every_type_start_and_backend() {
    for &(ty, _) in TYPES {
        for (start, backend, threads) in [
            ("0", "auto", "2"),
            ("7", "cpu", "1"),
            ("1000003", "cpu", "3"),
            ("0x7", "interp", "1"),
        ] {
            let o = phobosc(&[
                "fill",
                ty,
                "--key",
                "5",
                "--count",
                "1001",
                "--start",
                start,
                "--backend",
                backend,
                "--threads",
                threads,
            ]);
            assert!(o.status.success(), "{ty}: {}", stderr(&o));
            assert!(o.stderr.is_empty(), "{ty}: stderr without --verbose");
            let s = start.strip_prefix("0x").map_or_else(
                || start.parse().unwrap(),
                |h| u64::from_str_radix(h, 16).unwrap(),
            );
            assert_eq!(
                o.stdout,
                reference(ty, s, 1001),
                "{ty} from {start} on {backend}"
            );
        }
    }
}

#[test]
fn npy_files_hold_the_same_bytes_with_the_right_dtype() {
    let dir = tempfile::tempdir().unwrap();
    for &(ty, dtype) in TYPES {
        let path = dir.path().join("x.npy");
        let o = phobosc(&[
            "fill",
            ty,
            "--key",
            "0x5",
            "--count",
            "333",
            "--start",
            "12",
            "--format",
            "npy",
            "-o",
            path.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{ty}: {}", stderr(&o));
        assert!(o.stdout.is_empty());
        // A file output reports on stderr.
        assert!(
            stderr(&o).contains(&format!("fill {ty}: 333 elements")),
            "{}",
            stderr(&o)
        );
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(&bytes[..6], b"\x93NUMPY");
        let header_len = 10 + usize::from(u16::from_le_bytes([bytes[8], bytes[9]]));
        let header = String::from_utf8_lossy(&bytes[10..header_len]);
        assert!(
            header.contains(&format!("'descr': '{dtype}'")),
            "{ty}: {header}"
        );
        assert!(header.contains("'shape': (333,"), "{ty}: {header}");
        assert!(header.contains("'fortran_order': False"), "{ty}: {header}");
        assert_eq!(header_len % 64, 0, "data aligned as NumPy writes it");
        assert_eq!(&bytes[header_len..], &reference(ty, 12, 333)[..], "{ty}");
        if dtype != "<f2" {
            // npyz reads it back (f16 needs npyz's `half` feature).
            let npy = npyz::NpyFile::new(&bytes[..]).unwrap();
            assert_eq!(npy.shape(), &[333]);
        }
    }
    // Typed read-back of two types.
    let path = dir.path().join("z.npy");
    let p = path.to_str().unwrap();
    let o = phobosc(&[
        "fill",
        "normal_f64",
        "--key",
        "5",
        "--count",
        "50",
        "--format",
        "npy",
        "-o",
        p,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let z: Vec<f64> = npyz::NpyFile::new(&std::fs::read(&path).unwrap()[..])
        .unwrap()
        .into_vec()
        .unwrap();
    let r = Tandem::new(Key::from_seed(5));
    assert_eq!(z, (0..50).map(|i| r.normal_f64(i)).collect::<Vec<_>>());
    let o = phobosc(&[
        "fill", "bool", "--key", "5", "--count", "300", "--format", "npy", "-o", p,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let b: Vec<bool> = npyz::NpyFile::new(&std::fs::read(&path).unwrap()[..])
        .unwrap()
        .into_vec()
        .unwrap();
    let mut want = vec![false; 300];
    r.fill_bool(&mut want, 0).unwrap();
    assert_eq!(b, want);
    // npy on stdout works too, and a zero count is an empty array.
    let o = phobosc(&[
        "fill", "u32", "--key", "5", "--count", "0", "--format", "npy", "-o", "-",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("'shape': (0,"));
}

#[test]
fn a_raw_file_and_verbose_stdout() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.bin");
    let o = phobosc(&[
        "fill",
        "u64",
        "--key",
        "5",
        "--count",
        "100",
        "-o",
        path.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read(&path).unwrap(), reference("u64", 0, 100));
    let o = phobosc(&[
        "fill",
        "exp_f32",
        "--key",
        "5",
        "--count",
        "100",
        "--verbose",
    ]);
    assert!(o.status.success());
    assert_eq!(
        o.stdout,
        reference("exp_f32", 0, 100),
        "only data on stdout"
    );
    let e = stderr(&o);
    assert!(
        e.contains("fill exp_f32: 100 elements (400 bytes, raw)")
            && e.contains("backend cpu")
            && e.contains("GiB/s"),
        "{e}"
    );
}

#[test]
fn an_endless_stream_ends_quietly_when_the_reader_stops() {
    for ty in ["u32", "normal_f64"] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_phobosc"))
            .args(["fill", ty, "--key", "5"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut got = vec![0u8; 1 << 20];
        child.stdout.as_mut().unwrap().read_exact(&mut got).unwrap();
        drop(child.stdout.take()); // close the pipe: EPIPE on the next write
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{ty}: {:?}", out.status);
        assert!(
            out.stderr.is_empty(),
            "{ty}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            got,
            reference(ty, 0, (1 << 20) / if ty == "u32" { 4 } else { 8 })
        );
    }
}

#[test]
fn the_end_of_the_stream_is_reachable_and_not_passed() {
    let last = (u64::MAX - 2).to_string();
    let o = phobosc(&["fill", "normal_f64", "--key", "5", "--start", &last]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        o.stdout,
        reference("normal_f64", u64::MAX - 2, 3),
        "without --count: to the end"
    );
    let o = phobosc(&[
        "fill",
        "u8",
        "--key",
        "5",
        "--start",
        "0xffffffffffffffff",
        "--count",
        "1",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(o.stdout, reference("u8", u64::MAX, 1));
}

#[test]
fn bad_input_is_an_error_naming_the_argument() {
    let cases: &[(&[&str], &str)] = &[
        (&["below:0"], "TYPE `below:0`: N must be at least 1"),
        (&["below:"], "TYPE `below:`: N `` is not an integer"),
        (
            &["below:ten"],
            "TYPE `below:ten`: N `ten` is not an integer",
        ),
        (&["below:-5"], "TYPE `below:-5`: N `-5` is not an integer"),
        (
            &["below:18446744073709551616"],
            "N `18446744073709551616` is not an integer",
        ),
        (
            &["below:x:5"],
            "TYPE `below:x:5`: LOW `x` is not an integer",
        ),
        (&["below:1:0"], "TYPE `below:1:0`: N must be at least 1"),
        (
            &["below:9223372036854775807:2"],
            "LOW + N - 1 = 9223372036854775808 passes i64's largest value",
        ),
        (&["choice:"], "TYPE `choice:`: no weights"),
        (
            &["choice:1,,2"],
            "TYPE `choice:1,,2`: weight 1 `` is not a number",
        ),
        (&["choice:1,x"], "weight 1 `x` is not a number"),
        (
            &["choice:1,-2"],
            "TYPE `choice:1,-2`: weight 1 is -2; weights must be finite and >= 0",
        ),
        (&["choice:NaN"], "weight 0 is NaN"),
        (&["choice:1,inf"], "weight 1 is inf"),
        (&["choice:0,0,-0"], "every weight is zero"),
        (
            &["u7"],
            "TYPE `u7` is not a fill type; the types are u8, u16, u32, u64, f16, f32, f64, bool, below:N",
        ),
        (&["u32", "--key", "-1"], "--key `-1`: not a u64 seed"),
        (&["u32", "--key", "0xg"], "--key `0xg`: not a u64 seed"),
        (
            &["u32", "--key", "18446744073709551616"],
            "--key `18446744073709551616`: not a u64 seed",
        ),
        (
            &["u32", "--count", "ten"],
            "--count `ten`: not a number of elements",
        ),
        (
            &["u32", "--start", "-1"],
            "--start `-1`: not an element index",
        ),
        (
            &["u64", "--count", "0x2000000000000000"],
            "--count 2305843009213693952: 2305843009213693952 elements of 8 bytes pass 2^64 bytes",
        ),
        (
            &["u8", "--start", "10", "--count", "0xfffffffffffffff7"],
            "--start 10 --count 18446744073709551607: the stream has 2^64 elements",
        ),
        (&["u32", "--format", "npy"], "--format npy needs --count"),
        (&["u32", "--count", "4", "--threads", "0"], "--threads 0"),
    ];
    for (args, want) in cases {
        let mut all = vec!["fill"];
        all.extend_from_slice(args);
        if !args.contains(&"--key") {
            all.extend(["--key", "1"]);
        }
        if !args.contains(&"--count") && !args.contains(&"--format") {
            all.extend(["--count", "4"]);
        }
        let o = phobosc(&all);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{all:?}: {e}");
        assert!(o.stdout.is_empty(), "{all:?} wrote data");
        assert!(e.contains(want), "{all:?}:\n{e}\nwanted: {want}");
        assert!(!e.contains("panicked"), "{all:?}: {e}");
    }
    // A missing --key is clap's error, naming it.
    let o = phobosc(&["fill", "u32", "--count", "1"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--key"));
}
