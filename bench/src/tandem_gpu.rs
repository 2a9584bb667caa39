//! Tandem fills on the GPU (issue 5) row by row as in the seed's A100 table
//! (`seeds/001_*.txt`), each against the zero-fill ceiling over the same
//! bytes measured in the same run, with the output compared to the CPU bulk
//! fill on every element.
//!
//! `cargo run --release -p phobos-bench --bin phobos-bench-tandem-gpu [-- [LOG2_N] [FILTER ...]]`
//!
//! Rows (the seed's, where they apply to our GPU fills): 2^LOG2_N elements
//! of each type (default 28; so narrow types write fewer bytes, as in the
//! seed), `Key::from_seed(1)`: u32, u64, f32, f64 at the default K
//! (`PHOBOS_TANDEM_K`, default 32) and at K = 4 (the seed's K < 8 "direct
//! kernel" analogue: our GPU fills have one kernel for every K); u16, f16,
//! u8 and bool; the seed's bounded rows plus the worst cases 2^31 + 1 and
//! 2^63 + 1 (half the draws rejected); normal_f64 from element 0, from an
//! odd draw (1), from draw 3, and at 2^24 and 2^20 elements from 0 and 1;
//! normal_f32, exp_f64, exp_f32, choice from 1000 weights. A FILTER keeps
//! the rows whose name contains it (any of several).
//!
//! Method: output poisoned, then the median (and fastest) of 21 GPU
//! timestamps around the pass after half a second of warm-up launches, as
//! GiB/s of the row's bytes, against the zero-fill ceiling (`ceiling.rs`:
//! hand-written WGSL of the true shape, on its own buffer) over the same
//! bytes; then the output is read back
//! and compared with `Bulk::fill_bytes` from the row's start on every
//! element. A start inside a stream block (normal_f64 from draw 1 or 3:
//! two draws per block) cannot be a buffer's byte 0 (`Gpu::fill_buffer`
//! refuses it; `Gpu::fill` cuts it in host memory), so those rows fill the
//! covering blocks from the block's first element, one element more, and
//! count only the row's bytes. Last, `Gpu::fill` u32 into host memory (wall
//! clock). A benchmark, not a test: CI does not run it.

#[path = "ceiling.rs"]
mod ceiling;
#[path = "common.rs"]
mod common;

use ceiling::Ceilings;
use common::{RUNS, WARM_UP_S, differing, gib, poison, read_back, storage, timestamps};
use phobos_runtime::gpu::{Gpu, fill_map};
use phobos_tandem::{AliasTable, Bulk, Dist, Key, Tandem};
use std::time::Instant;

/// One row of the table.
struct Row {
    name: String,
    dist: Dist,
    k: u32,
    start: u64,
    count: u64,
    /// The seed's A100 figures (Tandem / cuRAND GiB/s), where it has the row.
    seed: &'static str,
}

fn rows(n: u64, k: u32) -> Vec<Row> {
    let row = |name: &str, dist: Dist, k: u32, start: u64, count: u64, seed: &'static str| Row {
        name: name.to_string(),
        dist,
        k,
        start,
        count,
        seed,
    };
    let weights: Vec<f64> = (1..=1000).map(f64::from).collect();
    let table = AliasTable::new(&weights).expect("weights");
    let mut rows = vec![
        row("u32", Dist::U32, k, 0, n, "1377 / 1285"),
        row("u64", Dist::U64, k, 0, n, "1389 / 1300 nearest"),
        row("f32", Dist::F32, k, 0, n, "1379 / 1262"),
        row("f64", Dist::F64, k, 0, n, "1388 / 778"),
    ];
    for (dist, name, seed) in [
        (Dist::U32, "u32", "1316 / 1285"),
        (Dist::U64, "u64", "1320 / 1300 nearest"),
        (Dist::F32, "f32", "1314 / 1262"),
        (Dist::F64, "f64", "1318 / 778"),
    ] {
        rows.push(row(&format!("{name}, K=4"), dist, 4, 0, n, seed));
    }
    let b = |name: &str, dist: Dist, seed: &'static str| row(name, dist, k, 0, n, seed);
    rows.extend([
        b("u16", Dist::U16, "1356 / 1282 nearest"),
        b("f16", Dist::F16Bits, "1341 / 1282 nearest"),
        b("u8", Dist::U8, "1320 / 1252 nearest"),
        b("bool", Dist::Bool, "1221 / 1252 nearest"),
        b(
            "below_u32(1000)",
            Dist::BelowU32 { n: 1000 },
            "1332 / 1285 nearest",
        ),
        b(
            "below_u64(1000)",
            Dist::BelowU64 { n: 1000 },
            "1354 / 1300 nearest",
        ),
        b(
            "below_u32(2^32-2)",
            Dist::BelowU32 { n: u32::MAX - 1 },
            "1329 / 1285 nearest",
        ),
        b(
            "below_u64(2^64-2)",
            Dist::BelowU64 { n: u64::MAX - 1 },
            "1299 / 1300 nearest",
        ),
        b(
            "below_i32(-10, 21)",
            Dist::BelowI32 { low: -10, n: 21 },
            "1329 / 1285 nearest",
        ),
        b(
            "below_i64_u32(-2^40, 6)",
            Dist::BelowI64U32 {
                low: -(1 << 40),
                n: 6,
            },
            "1363 / 1300 nearest",
        ),
        b(
            "below_i64(-2^63, 2^64-1)",
            Dist::BelowI64 {
                low: i64::MIN,
                n: u64::MAX,
            },
            "1302 / 1300 nearest",
        ),
        b("below_u32(2^31+1)", Dist::BelowU32 { n: (1 << 31) + 1 }, ""),
        b("below_u64(2^63+1)", Dist::BelowU64 { n: (1 << 63) + 1 }, ""),
        b("normal_f64", Dist::NormalF64, "1064 / 567"),
        row(
            "normal_f64, start 1 (odd draw)",
            Dist::NormalF64,
            k,
            1,
            n,
            "985 / 554",
        ),
        row(
            "normal_f64, start 3 (draw 3)",
            Dist::NormalF64,
            k,
            3,
            n,
            "946 / 548",
        ),
        row(
            "normal_f64, 2^24, start 0",
            Dist::NormalF64,
            k,
            0,
            1 << 24,
            "798 / 528",
        ),
        row(
            "normal_f64, 2^24, start 1",
            Dist::NormalF64,
            k,
            1,
            1 << 24,
            "788 / 515",
        ),
        row(
            "normal_f64, 2^20, start 0",
            Dist::NormalF64,
            k,
            0,
            1 << 20,
            "238 / 218",
        ),
        row(
            "normal_f64, 2^20, start 1",
            Dist::NormalF64,
            k,
            1,
            1 << 20,
            "218 / 201",
        ),
        b("normal_f32", Dist::NormalF32, "1219 / 873"),
        b("exp_f64", Dist::ExponentialF64, "955 / 778 nearest"),
        b("exp_f32", Dist::ExponentialF32, "926 / 1262 nearest"),
        b("choice(1000 weights)", Dist::Choice(table), ""),
    ]);
    rows
}

/// Where a row's elements lie in what the GPU writes: the fill starts at
/// the first element of the stream block holding element `start`, `lead`
/// elements before it, and writes `covered` bytes of whole blocks.
struct Cut {
    first: u64,
    lead: u64,
    gpu_count: u64,
    covered: u64,
}

fn cut(row: &Row) -> Cut {
    let size = row.dist.elem_size() as u64;
    let per_block = match fill_map(&row.dist) {
        Ok(map) => u64::from(map.out_words()) * 4 / size,
        Err(_) => 1,
    };
    let lead = row.start % per_block;
    let gpu_count = lead + row.count;
    Cut {
        first: row.start - lead,
        lead,
        gpu_count,
        covered: gpu_count.div_ceil(per_block) * per_block * size,
    }
}

fn log2_or_count(n: u64) -> String {
    if n.is_power_of_two() {
        format!("2^{}", n.trailing_zeros())
    } else {
        n.to_string()
    }
}

fn main() {
    let begun = Instant::now();
    let mut log2 = 28u32;
    let mut filters = Vec::new();
    for a in std::env::args().skip(1) {
        match a.parse::<u32>() {
            Ok(l) if l < 40 => log2 = l,
            _ => filters.push(a),
        }
    }
    let k: u32 = std::env::var("PHOBOS_TANDEM_K")
        .ok()
        .map_or(32, |s| s.parse().expect("PHOBOS_TANDEM_K"));
    let n = 1u64 << log2;
    let selected: Vec<Row> = rows(n, k)
        .into_iter()
        .filter(|r| filters.is_empty() || filters.iter().any(|f| r.name.contains(f.as_str())))
        .collect();
    let host_row = filters.is_empty()
        || filters
            .iter()
            .any(|f| "Gpu::fill host".contains(f.as_str()));
    let gpu = Gpu::shared().unwrap_or_else(|e| panic!("{e}"));
    let threads = Bulk::new(Tandem::new(Key::from_seed(1))).thread_count();
    println!("device: {}", gpu.describe());
    println!(
        "Tandem GPU fills, key from_seed(1), K {k} unless named: 2^{log2} elements of each type unless named; \
         median (fastest) of {RUNS} GPU timestamps after {WARM_UP_S} s of warm-up; output poisoned, then \
         compared with the CPU bulk fill ({threads} threads) on every element; ceiling: zero fill \
         of the true shape (WGSL, one vec4 store per invocation, 512 x N/2^17 grid, STORAGE | COPY_SRC) \
         over the row's bytes in this run"
    );
    println!(
        "Rows starting inside a stream block (normal_f64 from element 1 or 3) fill the covering blocks \
         from the block's first element (one element more); GiB/s counts the row's elements only.\n"
    );
    let max_bytes = selected.iter().map(|r| cut(r).covered).max().unwrap_or(16);
    let dst = storage(gpu, max_bytes.next_multiple_of(256));
    let mut ceiling = Ceilings::new(gpu);
    let mut got = Vec::new();
    let mut want = Vec::new();
    println!(
        "| row | elements | bytes | GiB/s median (fastest) | zero-fill ceiling, same bytes | % of ceiling | dispatches | elements differing from the CPU fill | seed's A100 row: Tandem / cuRAND |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    for row in &selected {
        let size = row.dist.elem_size();
        let bytes = row.count * size as u64;
        let c = cut(row);
        let rng = match Tandem::with_k(Key::from_seed(1), row.k) {
            Ok(r) => r,
            Err(e) => {
                println!("| {} | n/a: {e} |", row.name);
                continue;
            }
        };
        poison(gpu, &dst, c.covered);
        let prepared = match gpu.prepare_fill(&row.dist, rng, c.first, c.gpu_count, &dst) {
            Ok(p) => p,
            Err(e) => {
                println!("| {} | n/a: {e} |", row.name);
                continue;
            }
        };
        let t = timestamps(gpu, |enc, ts| prepared.encode(enc, ts));
        read_back(gpu, &dst, c.covered, &mut got);
        want.resize(bytes as usize, 0);
        let c0 = Instant::now();
        Bulk::new(rng)
            .fill_bytes(&row.dist, row.start, &mut want)
            .expect("cpu fill");
        let cpu_s = c0.elapsed().as_secs_f64();
        let at = (c.lead as usize) * size;
        let diff = differing(&got[at..at + bytes as usize], &want, size);
        let zero = ceiling.zero(bytes);
        let g = gib(bytes, t[t.len() / 2]);
        let z = gib(bytes, zero.0);
        println!(
            "| {} | {}{} | {bytes} | {g:.0} ({:.0}) | {z:.0} ({:.0}) | {:.1}% | {} | {diff} of {} (CPU {:.1} GiB/s) | {} |",
            row.name,
            log2_or_count(row.count),
            if row.start == 0 {
                String::new()
            } else {
                format!(" from {}", row.start)
            },
            gib(bytes, t[0]),
            gib(bytes, zero.1),
            100.0 * g / z,
            prepared.dispatch_count(),
            row.count,
            gib(bytes, cpu_s),
            if row.seed.is_empty() { "—" } else { row.seed },
        );
    }
    if host_row {
        // Into host memory, as `phobosc fill --backend gpu` does (64 MiB
        // pieces there; here one call over the whole output, 256 MiB
        // pieces).
        let bytes = 4 * n;
        let rng = Tandem::with_k(Key::from_seed(1), k).expect("K");
        let mut host = vec![0u8; bytes as usize];
        gpu.fill(&Dist::U32, rng, 0, &mut host).expect("warm");
        let h0 = Instant::now();
        gpu.fill(&Dist::U32, rng, 0, &mut host).expect("host fill");
        let host_s = h0.elapsed().as_secs_f64();
        want.resize(bytes as usize, 0);
        Bulk::new(rng)
            .fill_bytes(&Dist::U32, 0, &mut want)
            .expect("cpu fill");
        println!(
            "\nGpu::fill host: u32 into host memory (dispatch, copy, map, copy out; wall clock): {:.2} GiB/s, {} of {n} differ from the CPU bulk fill",
            gib(bytes, host_s),
            differing(&host, &want, 4)
        );
    }
    println!(
        "\n{} rows in {:.0} s",
        selected.len(),
        begun.elapsed().as_secs_f64()
    );
}
