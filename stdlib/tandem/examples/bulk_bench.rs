//! Throughput of the fast fills (`Bulk::fill_bytes`) for every type, on one
//! thread and on every core, against a zero fill (memset) of the same buffer
//! and the reference element-by-element fill, in one run:
//!
//! `cargo run --release -p phobos-tandem --example bulk_bench -- [MIB] [RUNS]`
//!
//! GiB/s are output bytes per second (bool: one byte per element); each
//! figure is the median of RUNS (default 5) fills of MIB MiB (default 64).

use std::time::Instant;

use phobos_tandem::{AliasTable, Bulk, Dist, Key, Tandem};

fn median(mut f: impl FnMut(), runs: usize) -> f64 {
    f(); // warm-up: page faults, the ziggurat table
    let mut t: Vec<f64> = (0..runs)
        .map(|_| {
            let s = Instant::now();
            f();
            s.elapsed().as_secs_f64()
        })
        .collect();
    t.sort_by(f64::total_cmp);
    t[t.len() / 2]
}

fn gib(bytes: usize, secs: f64) -> f64 {
    bytes as f64 / secs / f64::from(1u32 << 30)
}

fn zero_fill(buf: &mut [u8], threads: usize) {
    let piece = buf.len().div_ceil(threads);
    std::thread::scope(|s| {
        for p in buf.chunks_mut(piece) {
            s.spawn(|| p.fill(0));
        }
    });
}

fn main() {
    let mut args = std::env::args().skip(1);
    let mib: usize = args.next().map_or(64, |s| s.parse().expect("MIB"));
    let runs: usize = args.next().map_or(5, |s| s.parse().expect("RUNS"));
    let all = std::thread::available_parallelism().map_or(1, |n| n.get());
    let rng = Tandem::new(Key::from_seed(1));
    let mut buf = vec![1u8; mib << 20];
    let bytes = buf.len();

    let z1 = gib(bytes, median(|| buf.fill(0), runs));
    let zn = gib(bytes, median(|| zero_fill(&mut buf, all), runs));
    println!("buffer {mib} MiB, {runs} runs, {all} threads available");
    println!("zero fill (memset): 1 thread {z1:.2} GiB/s, {all} threads {zn:.2} GiB/s");
    println!();
    println!(
        "| type | 1 thread GiB/s | {all} threads GiB/s | vs memset ({all} threads) | reference GiB/s |"
    );
    println!("|---|---|---|---|---|");
    let table = AliasTable::new(&[1.0, 2.0, 3.0, 4.0]).unwrap();
    let dists = [
        ("u8", Dist::U8),
        ("u16", Dist::U16),
        ("u32", Dist::U32),
        ("u64", Dist::U64),
        ("f16", Dist::F16Bits),
        ("f32", Dist::F32),
        ("f64", Dist::F64),
        ("bool", Dist::Bool),
        ("below:1000", Dist::BelowU32 { n: 1000 }),
        ("below:2147483649", Dist::BelowU32 { n: (1 << 31) + 1 }),
        (
            "below:1000000000000",
            Dist::BelowU64 {
                n: 1_000_000_000_000,
            },
        ),
        ("normal_f32", Dist::NormalF32),
        ("normal_f64", Dist::NormalF64),
        ("exp_f32", Dist::ExponentialF32),
        ("exp_f64", Dist::ExponentialF64),
        ("choice:1,2,3,4", Dist::Choice(table.clone())),
    ];
    for (name, d) in dists {
        let one = Bulk::new(rng).threads(1);
        let every = Bulk::new(rng).threads(all);
        let g1 = gib(
            bytes,
            median(|| one.fill_bytes(&d, 0, &mut buf).unwrap(), runs),
        );
        let gn = gib(
            bytes,
            median(|| every.fill_bytes(&d, 0, &mut buf).unwrap(), runs),
        );
        // The reference on a sixteenth of the buffer (it is much slower).
        let small = bytes / 16 / d.elem_size();
        let gr = gib(
            small * d.elem_size(),
            median(|| reference(&rng, &d, small), runs.min(3)),
        );
        println!("| {name} | {g1:.2} | {gn:.2} | {:.2}x | {gr:.3} |", gn / zn);
    }
}

fn reference(r: &Tandem, d: &Dist, n: usize) {
    match d {
        Dist::U8 => r.fill_u8(&mut vec![0; n], 0),
        Dist::U16 => r.fill_u16(&mut vec![0; n], 0),
        Dist::U32 => r.fill_u32(&mut vec![0; n], 0),
        Dist::U64 => r.fill_u64(&mut vec![0; n], 0),
        Dist::F16Bits => r.fill_f16_bits(&mut vec![0; n], 0),
        Dist::F32 => r.fill_f32(&mut vec![0.0; n], 0),
        Dist::F64 => r.fill_f64(&mut vec![0.0; n], 0),
        Dist::Bool => r.fill_bool(&mut vec![false; n], 0),
        Dist::BelowU32 { n: m } => r.fill_below_u32(&mut vec![0; n], 0, *m),
        Dist::BelowU64 { n: m } => r.fill_below_u64(&mut vec![0; n], 0, *m),
        Dist::NormalF32 => r.fill_normal_f32(&mut vec![0.0; n], 0),
        Dist::NormalF64 => r.fill_normal_f64(&mut vec![0.0; n], 0),
        Dist::ExponentialF32 => r.fill_exponential_f32(&mut vec![0.0; n], 0),
        Dist::ExponentialF64 => r.fill_exponential_f64(&mut vec![0.0; n], 0),
        Dist::Choice(t) => r.fill_choice(&mut vec![0; n], 0, t),
        _ => Ok(()),
    }
    .unwrap();
}
