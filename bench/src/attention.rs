//! The attention ceiling: a hand-written FlashAttention-2 forward with
//! dropout through wgpu, as `gemm.rs` is the GEMM ceiling, against which a
//! Phobos attention kernel is judged.
//!
//! ```text
//! phobos-bench-attention [--bh N] [--s S,...] [--d D,...] [--bq BQ] [--bk BK]
//!                        [--only TEXT] [--emulate]
//!     (defaults: --bh 64 --s 1024,4096 --d 64,128 --bq 64 --bk 64; --only
//!     keeps the kernels whose name contains TEXT)
//! ```
//!
//! # The kernel
//!
//! `O = dropout(softmax(Q K^T * scale)) V` and `L = logsumexp(Q K^T * scale)`
//! per row, Q, K, V and O f16 in `[BH, S, D]` row-major, L f32 `[BH, S]`,
//! `scale = 1/sqrt(D)`. One workgroup takes `BQ` query rows of one head
//! (`BQ / 16` subgroups of 32, each owning 16 rows; two invocations a row
//! for the softmax) and walks the keys in blocks of `BK`:
//!
//! 1. `S_blk = Q_blk K_blk^T` with cooperative matrices (16x16x16, f16 x
//!    f16 -> f32; the `D / 16` Q fragments stay in registers across the
//!    loop, K is read as a column-major B straight from the buffer), stored
//!    to workgroup memory (`coopStoreT`);
//! 2. each pair of invocations updates its row's running max `m` and sum
//!    `l` (log2 domain), writes `P = exp2(s * scale * log2(e) - m)` as f16
//!    to workgroup memory, zeroed where the dropout mask drops it
//!    (`lowbias32(((bh * S + i) * S + j) ^ SEED) < p * 2^32`, p = 0.1; the
//!    sum `l` is taken before dropout and `1 / (1 - p)` is folded into the
//!    final `1 / l`), and finds `alpha = exp2(m_old - m_new)`;
//! 3. `O_acc += P V_blk` with cooperative matrices (V a row-major B from
//!    the buffer).
//!
//! At the end `O = O_acc * (1 / (1 - p)) / l` as f16 and `L = m ln 2 + ln l`.
//!
//! Cooperative matrices have no element access, so the per-row rescale of
//! `O_acc` by `alpha` takes one of three forms, each with and without the
//! dropout mask (`fast`: what the mask costs):
//!
//! - `O wg`: `O_acc` lives in workgroup memory as f32; step 2 scales its
//!   rows element by element, step 3 loads the subgroup's `D / 16`
//!   accumulators, multiplies and stores them back (a load and a store of
//!   `O_acc` per key block, and `BQ * D * 4` bytes of workgroup memory, so
//!   `BK` drops to 32 at D = 128 on a 48 KiB device).
//! - `O regs`: `O_acc` stays in coop matrices; in a key block where any row
//!   of the workgroup's max grew, they are stored to the S buffer, scaled
//!   there and reloaded (a workgroup-uniform flag, so barriers may guard
//!   it). Rows whose max did not grow have `alpha = 1` exactly, so skipping
//!   the rescale when none grew is exact.
//! - `O regs lazy` (FlashAttention-4's conditional rescale): as `O regs`,
//!   but a row's reference max moves only when the block's max exceeds it
//!   by more than 8 (log2 units); P is then at most 2^8, which f16 and the
//!   f32 sums hold, and the result is the same softmax. On inputs like
//!   these the rescale never runs after the first block.
//!
//! The ceiling is the fastest `dropout` row of each shape that passes its
//! check; the program prints it after each shape.
//!
//! # Method and check
//!
//! Each row: half a second of warm-up launches, then the median and fastest
//! of 21 GPU timestamps around the pass (`common::time_pass`), and TFLOP/s
//! as `4 * BH * S^2 * D / median` (the forward's two products, as peers
//! count it). The inputs are multiples of 1/64 in [-1, 1]. O and L of a
//! few rows per shape ([`checked_row`], three heads) are compared with the
//! host's f64 softmax, dropout included (same hash): O within 1e-2 of
//! `max(|want|, mean |want| of the row)`, L within 1e-3 relative.
//!
//! The kernel assumes subgroups of 32 invocations numbered in order (as
//! `gemm.rs` does): NVIDIA's. Without f16 16x16x16 cooperative matrices it
//! prints so and exits 0; `--emulate` then runs the same algorithm with
//! every cooperative op written out as plain WGSL ([`Coop`]), once,
//! untimed, to check the algorithm's indexing on any device. Lavapipe needs
//! minutes per kernel even so: `--emulate --bh 1 --s 64 --d 32 --bq 16
//! --bk 32` passes every variant there.
//! `PHOBOS_ATTN_WGSL=DIR` writes every generated module to `DIR`.
//! `PHOBOS_ATTN_NO_RESCALE=1` (measurement only) leaves the `O regs` forms'
//! rescale branch out: on the H100 both forms gave wrong O while `O wg`
//! was right (bench/RESULTS.md, twentieth session), and the lazy form on
//! these inputs needs no rescale after the first block, so it tells whether
//! the accumulators' reassignment inside that branch is what goes wrong.

#[path = "common.rs"]
mod common;

use phobos_runtime::gpu::Gpu;
use std::borrow::Cow;

/// Dropout probability of the `dropout` variants.
const DROP_P: f64 = 0.1;
/// The dropout mask's key (any value: its bits do not matter here).
const SEED: u32 = 0x9e37_79b9;
/// How far (log2 units) a row's max may pass its reference before `O regs
/// lazy` rescales.
const LAZY_SLACK: f32 = 8.0;

fn main() {
    let args = Args::parse();
    let kernels = |d: u32, s: u32, emulate: bool| {
        let mut all = Vec::new();
        for acc in [Acc::Workgroup, Acc::Registers, Acc::Lazy] {
            for dropout in [true, false] {
                all.push(Kernel {
                    d,
                    s,
                    bq: args.bq,
                    bk: args.bk,
                    acc,
                    dropout,
                    emulate,
                });
            }
        }
        all.retain(|k| {
            args.only
                .as_ref()
                .is_none_or(|o| k.name().contains(o.as_str()))
        });
        all
    };
    if let Some(dir) = std::env::var_os("PHOBOS_ATTN_WGSL") {
        let dir = std::path::Path::new(&dir);
        for &d in &args.d {
            for kernel in kernels(d, args.s[0], args.emulate) {
                for kernel in [kernel, kernel.with_bk(32)] {
                    std::fs::write(
                        dir.join(format!("{}.wgsl", kernel.file_name())),
                        kernel.wgsl(),
                    )
                    .expect("PHOBOS_ATTN_WGSL is a directory");
                }
            }
        }
    }
    let gpu = Gpu::new().expect("a GPU");
    println!("# {}", gpu.describe());
    let features = gpu.device().features();
    if !features.contains(wgpu::Features::SHADER_F16 | wgpu::Features::SUBGROUP) {
        println!("# no f16 or no subgroups on this device: nothing to run");
        return;
    }
    let coop = gpu.cooperative_matrix().iter().any(|p| {
        (p.m_size, p.n_size, p.k_size) == (16, 16, 16)
            && p.ab_type == wgpu::CooperativeScalarType::F16
            && p.cr_type == wgpu::CooperativeScalarType::F32
    });
    if !coop && !args.emulate {
        println!("# no f16 16x16x16 cooperative matrices on this device: nothing to run");
        return;
    }
    let limit = gpu.device().limits().max_compute_workgroup_storage_size;
    println!(
        "# BQ = {}, BK = {} (32 where the kernel does not fit {limit} bytes of workgroup memory){}",
        args.bq,
        args.bk,
        if args.emulate {
            "; cooperative ops emulated, untimed"
        } else {
            ""
        }
    );
    println!("| kernel | BH | S | D | BK | median ms | fastest ms | TFLOP/s (median) | check |");
    println!("|---|---|---|---|---|---|---|---|---|");
    for &s in &args.s {
        for &d in &args.d {
            assert!(
                s.is_multiple_of(args.bq) && s.is_multiple_of(args.bk),
                "S = {s} is not a multiple of BQ and BK"
            );
            assert!(d.is_multiple_of(16), "D = {d} is not a multiple of 16");
            let problem = Problem::new(&gpu, args.bh, s, d);
            let mut best: Option<(String, f64)> = None;
            for kernel in kernels(d, s, args.emulate) {
                let kernel = if kernel.workgroup_bytes() <= limit {
                    kernel
                } else {
                    kernel.with_bk(32)
                };
                let shape = format!("{} | {s} | {d} | {}", args.bh, kernel.bk);
                if kernel.workgroup_bytes() > limit {
                    println!(
                        "| {} | {shape} | n/a: needs {} bytes of workgroup memory | | | |",
                        kernel.name(),
                        kernel.workgroup_bytes()
                    );
                    continue;
                }
                match problem.run(&gpu, &kernel, !args.emulate) {
                    Ok((_, _, _, check)) if args.emulate => {
                        println!("| {} | {shape} | untimed | | | {check} |", kernel.name());
                    }
                    Ok((median, fastest, ok, check)) => {
                        println!(
                            "| {} | {shape} | {:.4} | {:.4} | {:.1} | {check} |",
                            kernel.name(),
                            median * 1e3,
                            fastest * 1e3,
                            problem.flop() / median / 1e12
                        );
                        if ok && kernel.dropout && best.as_ref().is_none_or(|(_, t)| median < *t) {
                            best = Some((kernel.name(), median));
                        }
                    }
                    Err(e) => println!("| {} | {shape} | failed: {e} | | | |", kernel.name()),
                }
            }
            if let Some((name, t)) = best {
                println!(
                    "\n# ceiling at BH = {}, S = {s}, D = {d}: {name}, {:.4} ms, {:.1} TFLOP/s\n",
                    args.bh,
                    t * 1e3,
                    problem.flop() / t / 1e12
                );
            }
        }
    }
}

/// The command line.
struct Args {
    bh: u32,
    s: Vec<u32>,
    d: Vec<u32>,
    bq: u32,
    bk: u32,
    only: Option<String>,
    emulate: bool,
}

impl Args {
    fn parse() -> Args {
        let mut args = Args {
            bh: 64,
            s: vec![1024, 4096],
            d: vec![64, 128],
            bq: 64,
            bk: 64,
            only: None,
            emulate: false,
        };
        let list = |v: Option<String>, what: &str| -> Vec<u32> {
            v.unwrap_or_default()
                .split(',')
                .map(|x| x.parse().unwrap_or_else(|_| panic!("{what}: {x:?}")))
                .collect()
        };
        let mut it = std::env::args().skip(1);
        while let Some(a) = it.next() {
            match a.as_str() {
                "--bh" => args.bh = list(it.next(), "--bh N")[0],
                "--s" => args.s = list(it.next(), "--s S,..."),
                "--d" => args.d = list(it.next(), "--d D,..."),
                "--bq" => args.bq = list(it.next(), "--bq BQ")[0],
                "--bk" => args.bk = list(it.next(), "--bk BK")[0],
                "--only" => args.only = it.next(),
                "--emulate" => args.emulate = true,
                other => panic!(
                    "unknown argument {other:?}: [--bh N] [--s S,...] [--d D,...] [--bq BQ] [--bk BK] [--only TEXT] [--emulate]"
                ),
            }
        }
        assert!(
            args.bq.is_multiple_of(16) && args.bq <= 256,
            "BQ is a multiple of 16 (16 rows a subgroup), at most 256"
        );
        assert!(
            args.bk.is_multiple_of(32),
            "BK is a multiple of 32 (two invocations a row, 16 columns each at least)"
        );
        args
    }
}

/// Where the output accumulator lives between key blocks.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Acc {
    /// f32 in workgroup memory, rescaled element by element every block.
    Workgroup,
    /// Coop matrices, stored, scaled and reloaded when any row's max grew.
    Registers,
    /// Coop matrices, rescaled only when a max grew by more than
    /// [`LAZY_SLACK`].
    Lazy,
}

/// One generated kernel.
#[derive(Clone, Copy, Debug)]
struct Kernel {
    d: u32,
    s: u32,
    bq: u32,
    bk: u32,
    acc: Acc,
    dropout: bool,
    /// Cooperative ops written out as loops ([`Coop`]).
    emulate: bool,
}

impl Kernel {
    fn with_bk(self, bk: u32) -> Kernel {
        Kernel { bk, ..self }
    }

    fn name(&self) -> String {
        let acc = match self.acc {
            Acc::Workgroup => "O wg",
            Acc::Registers => "O regs",
            Acc::Lazy => "O regs lazy",
        };
        let mode = if self.dropout { "dropout" } else { "fast" };
        format!("{mode}, {acc}")
    }

    fn file_name(&self) -> String {
        let acc = match self.acc {
            Acc::Workgroup => "wg",
            Acc::Registers => "regs",
            Acc::Lazy => "lazy",
        };
        let mode = if self.dropout { "dropout" } else { "fast" };
        let emu = if self.emulate { "_emulated" } else { "" };
        format!(
            "attn_{mode}_{acc}_d{}_bq{}_bk{}{emu}",
            self.d, self.bq, self.bk
        )
    }

    /// The columns of `O_acc` that go through the S buffer at once when it
    /// is rescaled or written out (`O regs`).
    fn chunk(&self) -> u32 {
        self.bk.min(self.d)
    }

    fn workgroup_bytes(&self) -> u32 {
        let (bq, bk) = (self.bq, self.bk);
        let s_and_p = bq * bk * 4 + bq * bk * 2;
        let emulation = Coop {
            emulate: self.emulate,
        }
        .scratch_bytes(bq);
        s_and_p
            + emulation
            + match self.acc {
                Acc::Workgroup => bq * self.d * 4,
                Acc::Registers | Acc::Lazy => 4,
            }
    }

    /// The module: constants per shape, one code path per variant; the
    /// cooperative ops come from [`Coop`].
    fn wgsl(&self) -> String {
        let Kernel { d, s, bq, bk, .. } = *self;
        let c = Coop {
            emulate: self.emulate,
        };
        let scale_log2 = (1.0 / f64::from(d).sqrt() * std::f64::consts::LOG2_E) as f32;
        let out_scale = if self.dropout {
            (1.0 / (1.0 - DROP_P)) as f32
        } else {
            1.0
        };
        let mut w = String::from("enable f16;\n");
        w += &c.prelude(bq);
        w += &format!(
            "@group(0) @binding(0) var<storage, read> q: array<f16>;
@group(0) @binding(1) var<storage, read> k: array<f16>;
@group(0) @binding(2) var<storage, read> v: array<f16>;
@group(0) @binding(3) var<storage, read_write> o: array<f16>;
@group(0) @binding(4) var<storage, read_write> lse: array<f32>;
const S: u32 = {s}u;
const D: u32 = {d}u;
const BQ: u32 = {bq}u;
const BK: u32 = {bk}u;
const SCALE_LOG2: f32 = {scale_log2:?}; // 1/sqrt(D) * log2(e)
const KEEP_FROM: u32 = {keep}u; // keep an element when its hash >= p * 2^32
const SEED: u32 = {SEED}u;
const OUT_SCALE: f32 = {out_scale:?}; // 1 / (1 - p) with dropout
const LN2: f32 = 0.6931471805599453;
var<workgroup> sbuf: array<f32, {sbuf}>; // S_blk, BQ x BK
var<workgroup> pbuf: array<f16, {sbuf}>; // P_blk, BQ x BK
fn lowbias32(x: u32) -> u32 {{
  var h = x;
  h ^= h >> 16u;
  h *= 0x7feb352du;
  h ^= h >> 15u;
  h *= 0x846ca68bu;
  h ^= h >> 16u;
  return h;
}}
",
            keep = keep_from(),
            sbuf = bq * bk,
        );
        match self.acc {
            Acc::Workgroup => {
                w += &format!(
                    "var<workgroup> obuf: array<f32, {}>; // O_acc, BQ x D\n",
                    bq * d
                )
            }
            Acc::Registers | Acc::Lazy => {
                w += "var<workgroup> grew: atomic<u32>; // 1 where a max grew in this key block\n"
            }
        }
        // Rows `r0 .. r0 + 16` are subgroup `sg`'s; row `row` is the pair of
        // invocations `2 row` and `2 row + 1` (`side`), each of which takes
        // half of the row's columns, starting at a column rotated by `rot`
        // so that the 32 invocations of a subgroup hit 32 banks.
        w += &format!(
            "@compute @workgroup_size({wg})
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {{
  let sg = li / 32u;
  let bh = wg.y;
  let base = bh * S * D;
  let q0 = wg.x * BQ;
  let r0 = sg * 16u;
  let row = li / 2u;
  let side = li % 2u;
  let rot = row + 16u * side;
",
            wg = 2 * bq
        );
        if self.emulate {
            w += "  let lane = li % 32u;\n";
        }
        for dd in 0..d / 16 {
            w += &c.load(
                &format!("qf{dd}"),
                ("f16", "A"),
                "q",
                &format!("base + (q0 + r0) * D + {}u", 16 * dd),
                "D",
                true,
            );
        }
        match self.acc {
            Acc::Workgroup => {
                w += &format!(
                    "  for (var e = li; e < BQ * D; e += {}u) {{ obuf[e] = 0.0; }}\n",
                    2 * bq
                )
            }
            Acc::Registers | Acc::Lazy => {
                for j in 0..d / 16 {
                    w += &c.zero(&format!("o{j}"));
                }
            }
        }
        w += "  var m: f32 = -1e30; // running (reference) max, log2 units
  var l: f32 = 0.0; // running sum of exp2(s * SCALE_LOG2 - m), before dropout
  for (var kb = 0u; kb < S; kb += BK) {
";
        // Step 1: S_blk = Q_blk K_blk^T.
        for jj in 0..bk / 16 {
            w += "    {\n";
            w += &c.zero("sacc");
            for dd in 0..d / 16 {
                w += "    {\n";
                w += &c.load(
                    "kt",
                    ("f16", "B"),
                    "k",
                    &format!("base + (kb + {}u) * D + {}u", 16 * jj, 16 * dd),
                    "D",
                    false,
                );
                w += &c.mma("sacc", &format!("qf{dd}"), "kt");
                w += "    }\n";
            }
            w += &c.store("sacc", "sbuf", &format!("r0 * BK + {}u", 16 * jj), "BK");
            w += "    }\n";
        }
        w += "    workgroupBarrier();\n";
        // Step 2: the online softmax of row `row`, P and the mask.
        let grow = match self.acc {
            Acc::Lazy => format!("select(m, mb, mb > m + {LAZY_SLACK:?})"),
            Acc::Workgroup | Acc::Registers => "max(m, mb)".to_string(),
        };
        let mask = if self.dropout {
            "      let keep = lowbias32(((bh * S + q0 + row) * S + kb + j) ^ SEED) >= KEEP_FROM;
      pbuf[row * BK + j] = f16(select(0.0, p, keep));\n"
        } else {
            "      pbuf[row * BK + j] = f16(p);\n"
        };
        w += &format!(
            "    var mb: f32 = -1e30;
    for (var t = 0u; t < BK / 2u; t++) {{
      let j = side * (BK / 2u) + (t + rot) % (BK / 2u);
      mb = max(mb, sbuf[row * BK + j]);
    }}
    mb = max(mb, subgroupShuffleXor(mb, 1u)) * SCALE_LOG2;
    let m_new = {grow};
    let alpha = exp2(m - m_new);
    m = m_new;
    var sum: f32 = 0.0;
    for (var t = 0u; t < BK / 2u; t++) {{
      let j = side * (BK / 2u) + (t + rot) % (BK / 2u);
      let p = exp2(sbuf[row * BK + j] * SCALE_LOG2 - m);
      sum += p;
{mask}    }}
    l = l * alpha + (sum + subgroupShuffleXor(sum, 1u));
"
        );
        match self.acc {
            Acc::Workgroup => {
                w += "    for (var t = 0u; t < D / 2u; t++) {
      let j = side * (D / 2u) + (t + rot) % (D / 2u);
      obuf[row * D + j] *= alpha;
    }
    workgroupBarrier();
";
            }
            Acc::Registers | Acc::Lazy => {
                // Block 0's alpha is 0 on a zero accumulator: nothing to do.
                // The flag is tested against a constant: naga takes every
                // local variable (`kb` too) to be non-uniform. Its reset
                // is safe after `workgroupUniformLoad`, which naga writes
                // as barrier, load, barrier.
                w += "    if (kb > 0u && alpha < 1.0) { atomicStore(&grew, 1u); }
    let rescale = workgroupUniformLoad(&grew) != 0u;
    if (li == 0u) { atomicStore(&grew, 0u); }
";
                // Measurement only (`PHOBOS_ATTN_NO_RESCALE=1`): the rescale
                // left out, to test whether the reassignment of the
                // accumulators inside a branch is what the device gets
                // wrong (O is then wrong wherever a rescale was due; the
                // lazy form on these inputs needs none after block 0).
                if std::env::var_os("PHOBOS_ATTN_NO_RESCALE").is_none() {
                    w += "    if (rescale) {\n";
                    w += &self.through_sbuf(&c, "      sbuf[row * BK + j] *= alpha;\n", true);
                    w += "      workgroupBarrier();\n    }\n";
                }
            }
        }
        // Step 3: O_acc += P_blk V_blk.
        if self.acc == Acc::Workgroup {
            for j in 0..d / 16 {
                w += &c.load(
                    &format!("o{j}"),
                    ("f32", "C"),
                    "obuf",
                    &format!("r0 * D + {}u", 16 * j),
                    "D",
                    true,
                );
            }
        }
        for kk in 0..bk / 16 {
            w += "    {\n";
            w += &c.load(
                "p",
                ("f16", "A"),
                "pbuf",
                &format!("r0 * BK + {}u", 16 * kk),
                "BK",
                true,
            );
            for j in 0..d / 16 {
                w += "    {\n";
                w += &c.load(
                    "vb",
                    ("f16", "B"),
                    "v",
                    &format!("base + (kb + {}u) * D + {}u", 16 * kk, 16 * j),
                    "D",
                    true,
                );
                w += &c.mma(&format!("o{j}"), "p", "vb");
                w += "    }\n";
            }
            w += "    }\n";
        }
        if self.acc == Acc::Workgroup {
            for j in 0..d / 16 {
                w += &c.store(
                    &format!("o{j}"),
                    "obuf",
                    &format!("r0 * D + {}u", 16 * j),
                    "D",
                );
            }
        }
        w += "  }\n  let inv = OUT_SCALE / l;\n";
        // The epilogue: O = O_acc * inv as f16, and L.
        match self.acc {
            Acc::Workgroup => {
                w += "  workgroupBarrier();
  for (var t = 0u; t < D / 2u; t++) {
    let j = side * (D / 2u) + (t + rot) % (D / 2u);
    o[base + (q0 + row) * D + j] = f16(obuf[row * D + j] * inv);
  }
";
            }
            Acc::Registers | Acc::Lazy => {
                w += &self.through_sbuf(
                    &c,
                    "      o[base + (q0 + row) * D + cc + j] = f16(sbuf[row * BK + j] * inv);\n",
                    false,
                );
            }
        }
        w += "  if (side == 0u) { lse[bh * S + q0 + row] = m * LN2 + log(l); }\n}\n";
        w
    }

    /// `O regs`: the accumulators pass through the S buffer `chunk()`
    /// columns at a time; `each` runs for every element `(row, cc + j)` of
    /// the invocation's half row; with `reload`, the chunk goes back into
    /// the accumulators.
    fn through_sbuf(&self, c: &Coop, each: &str, reload: bool) -> String {
        let chunk = self.chunk();
        let per = chunk / 16;
        let mut w = String::new();
        for (n, cc) in (0..self.d).step_by(chunk as usize).enumerate() {
            if n > 0 {
                w += "      workgroupBarrier();\n";
            }
            w += &format!("    {{\n      let cc = {cc}u;\n");
            for t in 0..per {
                w += &c.store(
                    &format!("o{}", cc / 16 + t),
                    "sbuf",
                    &format!("r0 * BK + {}u", 16 * t),
                    "BK",
                );
            }
            w += &format!(
                "      workgroupBarrier();
      for (var t = 0u; t < {half}u; t++) {{
      let j = side * {half}u + (t + rot) % {half}u;
{each}      }}
",
                half = chunk / 2
            );
            if reload {
                w += "      workgroupBarrier();\n";
                for t in 0..per {
                    w += &c.reload(
                        &format!("o{}", cc / 16 + t),
                        ("f32", "C"),
                        "sbuf",
                        &format!("r0 * BK + {}u", 16 * t),
                        "BK",
                    );
                }
            }
            w += "    }\n";
        }
        w
    }
}

/// The smallest hash the dropout mask keeps: `p * 2^32`.
fn keep_from() -> u32 {
    (DROP_P * 4_294_967_296.0) as u32
}

/// The cooperative ops as WGSL statements: naga's `wgpu_cooperative_matrix`
/// syntax, or (`emulate`) plain WGSL in which each 16x16 matrix of a
/// 32-group is spread over its invocations as a real one is: invocation
/// `lane` holds row `lane / 2`, columns `(lane % 2) * 8 ..+ 8`, as
/// `array<T, 8>` (constant indices only: indexing a private array with a
/// variable makes lavapipe compile for minutes). A product goes through two
/// 16x16 f32 scratch tiles per subgroup in workgroup memory (`emu_a`,
/// `emu_b`), between workgroup barriers, accumulating in f32.
struct Coop {
    emulate: bool,
}

impl Coop {
    /// The extension, or the emulation's scratch for `bq` rows.
    fn prelude(&self, bq: u32) -> String {
        if self.emulate {
            format!(
                "var<workgroup> emu_a: array<f32, {n}>;\nvar<workgroup> emu_b: array<f32, {n}>;\n",
                n = bq * 16
            )
        } else {
            "enable wgpu_cooperative_matrix;\n".to_string()
        }
    }

    /// The emulation's workgroup bytes for `bq` rows.
    fn scratch_bytes(&self, bq: u32) -> u32 {
        if self.emulate { 2 * bq * 16 * 4 } else { 0 }
    }

    /// Where the emulation's element `t` of this invocation lies in a
    /// matrix at `idx` with `stride`.
    fn at(idx: &str, stride: &str, row_major: bool, t: u32) -> String {
        if row_major {
            format!("{idx} + (lane / 2u) * ({stride}) + (lane % 2u) * 8u + {t}u")
        } else {
            format!("{idx} + ((lane % 2u) * 8u + {t}u) * ({stride}) + lane / 2u")
        }
    }

    /// The emulation's statements for an invocation's 8 elements of a
    /// matrix at `buf[idx ..]`: `line(t, index of element t)` for each.
    fn each(
        idx: &str,
        stride: &str,
        row_major: bool,
        line: impl Fn(u32, &str) -> String,
    ) -> String {
        (0..8)
            .map(|t| line(t, &Coop::at(idx, stride, row_major, t)))
            .collect()
    }

    /// Declares `name` loaded from `buf[idx ..]` with `stride`.
    fn load(
        &self,
        name: &str,
        (scalar, role): (&str, &str),
        buf: &str,
        idx: &str,
        stride: &str,
        row_major: bool,
    ) -> String {
        if self.emulate {
            format!("    var {name}: array<{scalar}, 8>;\n")
                + &Coop::each(idx, stride, row_major, |t, at| {
                    format!("    {name}[{t}] = {buf}[{at}];\n")
                })
        } else {
            let t = if row_major { "T" } else { "" };
            let kw = if role == "C" { "var" } else { "let" };
            format!(
                "    {kw} {name} = coopLoad{t}<coop_mat16x16<{scalar}, {role}>>(&{buf}[{idx}], {stride});\n"
            )
        }
    }

    /// Loads `name` again, row-major.
    fn reload(
        &self,
        name: &str,
        (scalar, role): (&str, &str),
        buf: &str,
        idx: &str,
        stride: &str,
    ) -> String {
        if self.emulate {
            Coop::each(idx, stride, true, |t, at| {
                format!("      {name}[{t}] = {buf}[{at}];\n")
            })
        } else {
            format!(
                "      {name} = coopLoadT<coop_mat16x16<{scalar}, {role}>>(&{buf}[{idx}], {stride});\n"
            )
        }
    }

    /// Declares a zero f32 accumulator.
    fn zero(&self, name: &str) -> String {
        if self.emulate {
            format!("    var {name}: array<f32, 8>;\n")
        } else {
            format!("    var {name} = coop_mat16x16<f32, C>();\n")
        }
    }

    /// `c = a * b + c`.
    fn mma(&self, c: &str, a: &str, b: &str) -> String {
        if !self.emulate {
            return format!("    {c} = coopMultiplyAdd({a}, {b}, {c});\n");
        }
        let mut w = String::new();
        for t in 0..8 {
            w += &format!(
                "    emu_a[sg * 256u + lane * 8u + {t}u] = f32({a}[{t}]);\n    emu_b[sg * 256u + lane * 8u + {t}u] = f32({b}[{t}]);\n"
            );
        }
        w += "    workgroupBarrier();\n";
        for t in 0..8 {
            w += &format!(
                "    for (var x = 0u; x < 16u; x++) {{ {c}[{t}] += emu_a[sg * 256u + (lane / 2u) * 16u + x] * emu_b[sg * 256u + x * 16u + (lane % 2u) * 8u + {t}u]; }}\n"
            );
        }
        w + "    workgroupBarrier();\n"
    }

    /// Stores `m` row-major to `buf[idx ..]` with `stride`.
    fn store(&self, m: &str, buf: &str, idx: &str, stride: &str) -> String {
        if self.emulate {
            Coop::each(idx, stride, true, |t, at| {
                format!("    {buf}[{at}] = {m}[{t}];\n")
            })
        } else {
            format!("    coopStoreT({m}, &{buf}[{idx}], {stride});\n")
        }
    }
}

/// The host's `lowbias32`, as the kernel writes it.
fn lowbias32(x: u32) -> u32 {
    let mut h = x;
    h ^= h >> 16;
    h = h.wrapping_mul(0x7feb_352d);
    h ^= h >> 15;
    h = h.wrapping_mul(0x846c_a68b);
    h ^= h >> 16;
    h
}

/// Element `e` of input `salt` (0: Q, 1: K, 2: V): a multiple of 1/64 in
/// [-1, 1], exact in f16.
fn value(e: usize, salt: u64) -> f32 {
    let mut x = (e as u64 ^ (salt << 40)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    x ^= x >> 31;
    x = x.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x ^= x >> 29;
    ((x % 129) as f32 - 64.0) / 64.0
}

/// Whether the host computes query row `i` of a checked head (every 61st
/// and the last of each 64: rows in every subgroup's quarter).
fn checked_row(i: u32) -> bool {
    i.is_multiple_of(61) || i % 64 == 63
}

/// One checked row: the host's O with and without dropout, and L.
struct Want {
    bh: u32,
    i: u32,
    fast: Vec<f64>,
    dropout: Vec<f64>,
    lse: f64,
}

/// One shape's buffers and the host's rows.
struct Problem {
    bh: u32,
    s: u32,
    d: u32,
    q: wgpu::Buffer,
    k: wgpu::Buffer,
    v: wgpu::Buffer,
    o: wgpu::Buffer,
    lse: wgpu::Buffer,
    want: Vec<Want>,
}

impl Problem {
    fn new(gpu: &Gpu, bh: u32, s: u32, d: u32) -> Problem {
        let len = bh as usize * s as usize * d as usize;
        let upload = |salt: u64| {
            let bytes: Vec<u8> = (0..len)
                .flat_map(|e| half::f16::from_f32(value(e, salt)).to_bits().to_le_bytes())
                .collect();
            let buf = common::storage(gpu, bytes.len() as u64);
            gpu.queue().write_buffer(&buf, 0, &bytes);
            buf
        };
        let (q, k, v) = (upload(0), upload(1), upload(2));
        let mut heads = vec![0, bh / 2, bh - 1];
        heads.dedup();
        let (su, du) = (s as usize, d as usize);
        let scale = 1.0 / f64::from(d).sqrt();
        let keep_scale = 1.0 / (1.0 - DROP_P);
        let mut want = Vec::new();
        for &h in &heads {
            let at = |e: usize, salt| f64::from(value(h as usize * su * du + e, salt));
            let kh: Vec<f64> = (0..su * du).map(|e| at(e, 1)).collect();
            let vh: Vec<f64> = (0..su * du).map(|e| at(e, 2)).collect();
            for i in (0..s).filter(|i| checked_row(*i)) {
                let qi: Vec<f64> = (0..du).map(|x| at(i as usize * du + x, 0)).collect();
                let scores: Vec<f64> = (0..su)
                    .map(|j| {
                        let kj = &kh[j * du..(j + 1) * du];
                        qi.iter().zip(kj).map(|(a, b)| a * b).sum::<f64>() * scale
                    })
                    .collect();
                let m = scores.iter().cloned().fold(f64::MIN, f64::max);
                let mut l = 0.0;
                let mut fast = vec![0.0; du];
                let mut dropout = vec![0.0; du];
                for (j, sj) in scores.iter().enumerate() {
                    let p = (sj - m).exp();
                    l += p;
                    let counter = (h * s + i).wrapping_mul(s).wrapping_add(j as u32) ^ SEED;
                    let keep = lowbias32(counter) >= keep_from();
                    let vj = &vh[j * du..(j + 1) * du];
                    for x in 0..du {
                        fast[x] += p * vj[x];
                        if keep {
                            dropout[x] += p * vj[x];
                        }
                    }
                }
                fast.iter_mut().for_each(|x| *x /= l);
                dropout.iter_mut().for_each(|x| *x *= keep_scale / l);
                want.push(Want {
                    bh: h,
                    i,
                    fast,
                    dropout,
                    lse: m + l.ln(),
                });
            }
        }
        Problem {
            bh,
            s,
            d,
            q,
            k,
            v,
            o: common::storage(gpu, 2 * len as u64),
            lse: common::storage(gpu, 4 * u64::from(bh) * u64::from(s)),
            want,
        }
    }

    fn flop(&self) -> f64 {
        4.0 * f64::from(self.bh) * f64::from(self.s).powi(2) * f64::from(self.d)
    }

    /// Runs `kernel` (timed, or once) and checks its output: median and
    /// fastest seconds (0 untimed), whether the check passed, and what it
    /// says.
    fn run(
        &self,
        gpu: &Gpu,
        kernel: &Kernel,
        timed: bool,
    ) -> Result<(f64, f64, bool, String), String> {
        let wgsl = kernel.wgsl();
        let scope = gpu.device().push_error_scope(wgpu::ErrorFilter::Validation);
        let pipeline = pipeline(gpu, &wgsl);
        if let Some(e) = pollster::block_on(scope.pop()) {
            return Err(e.to_string());
        }
        let bind = gpu.device().create_bind_group(&wgpu::BindGroupDescriptor {
            label: None,
            layout: &pipeline.get_bind_group_layout(0),
            entries: &[
                entry(0, &self.q),
                entry(1, &self.k),
                entry(2, &self.v),
                entry(3, &self.o),
                entry(4, &self.lse),
            ],
        });
        let o_bytes = 2 * u64::from(self.bh) * u64::from(self.s) * u64::from(self.d);
        let lse_bytes = 4 * u64::from(self.bh) * u64::from(self.s);
        common::poison(gpu, &self.o, o_bytes);
        common::poison(gpu, &self.lse, lse_bytes);
        let groups = (self.s / kernel.bq, self.bh);
        let (median, fastest) = if timed {
            let t = common::time_pass(gpu, &pipeline, |pass| {
                pass.set_bind_group(0, &bind, &[]);
                pass.dispatch_workgroups(groups.0, groups.1, 1);
            });
            (t[t.len() / 2], t[0])
        } else {
            let mut enc = gpu.device().create_command_encoder(&Default::default());
            {
                let mut pass = enc.begin_compute_pass(&Default::default());
                pass.set_pipeline(&pipeline);
                pass.set_bind_group(0, &bind, &[]);
                pass.dispatch_workgroups(groups.0, groups.1, 1);
            }
            gpu.queue().submit([enc.finish()]);
            gpu.wait().map_err(|e| e.to_string())?;
            (0.0, 0.0)
        };
        let (mut o, mut lse) = (Vec::new(), Vec::new());
        common::read_back(gpu, &self.o, o_bytes, &mut o);
        common::read_back(gpu, &self.lse, lse_bytes, &mut lse);
        let (ok, check) = self.check(kernel.dropout, &o, &lse);
        Ok((median, fastest, ok, check))
    }

    /// Compares the checked rows of `o` (f16) and `lse` (f32) with the
    /// host's.
    fn check(&self, dropout: bool, o: &[u8], lse: &[u8]) -> (bool, String) {
        let (s, d) = (self.s as usize, self.d as usize);
        let mut bad = 0;
        let mut first = None;
        for w in &self.want {
            let row = w.bh as usize * s + w.i as usize;
            let want = if dropout { &w.dropout } else { &w.fast };
            let mean = want.iter().map(|x| x.abs()).sum::<f64>() / d as f64;
            let mut wrong = None;
            for (x, &wx) in want.iter().enumerate() {
                let at = 2 * (row * d + x);
                let got = f64::from(half::f16::from_le_bytes([o[at], o[at + 1]]).to_f32());
                if !within(got, wx, 1e-2 * wx.abs().max(mean)) {
                    wrong = Some(format!("O[{}][{}][{x}] = {got}, want {wx}", w.bh, w.i));
                    break;
                }
            }
            let got = f64::from(f32::from_le_bytes(
                lse[4 * row..4 * row + 4].try_into().expect("4 bytes"),
            ));
            if wrong.is_none() && !within(got, w.lse, 1e-3 * w.lse.abs().max(1.0)) {
                wrong = Some(format!("L[{}][{}] = {got}, want {}", w.bh, w.i, w.lse));
            }
            if let Some(e) = wrong {
                bad += 1;
                first.get_or_insert(e);
            }
        }
        let n = self.want.len();
        match first {
            None => (
                true,
                format!("checked: {n} rows within 1e-2 (O) and 1e-3 (L)"),
            ),
            Some(e) => (false, format!("**{bad} of {n} rows differ, first {e}**")),
        }
    }
}

/// Whether `got` is within `tolerance` of `want` (not where it is NaN).
fn within(got: f64, want: f64, tolerance: f64) -> bool {
    (got - want).abs() <= tolerance
}

/// The pipeline of `wgsl`, through wgpu's own WGSL front end.
fn pipeline(gpu: &Gpu, wgsl: &str) -> wgpu::ComputePipeline {
    let device = gpu.device();
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("attention"),
        source: wgpu::ShaderSource::Wgsl(Cow::Borrowed(wgsl)),
    });
    let storage = common::storage_entry;
    let bindings = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some("attention"),
        entries: &[
            storage(0, true),
            storage(1, true),
            storage(2, true),
            storage(3, false),
            storage(4, false),
        ],
    });
    let layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: Some("attention"),
        bind_group_layouts: &[Some(&bindings)],
        immediate_size: 0,
    });
    device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some("attention"),
        layout: Some(&layout),
        module: &module,
        entry_point: Some("main"),
        compilation_options: Default::default(),
        cache: None,
    })
}

fn entry(binding: u32, buffer: &wgpu::Buffer) -> wgpu::BindGroupEntry<'_> {
    wgpu::BindGroupEntry {
        binding,
        resource: buffer.as_entire_binding(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every variant, at every D and BK the program may pick, parses and
    /// passes naga's validation with the capabilities wgpu grants a device
    /// with cooperative matrices, f16 and subgroups (and none more); naga
    /// writes it as SPIR-V 1.6 with the bounds checks wgpu's Vulkan backend
    /// asks for, and `spirv-val` (where installed) accepts the emulated
    /// modules' SPIR-V for Vulkan 1.3.
    #[test]
    fn every_module_validates() {
        use naga::valid::{Capabilities, ValidationFlags, Validator};
        let caps = Capabilities::COOPERATIVE_MATRIX
            | Capabilities::SHADER_FLOAT16
            | Capabilities::SUBGROUP;
        let spirv_val = std::process::Command::new("spirv-val")
            .arg("--version")
            .output()
            .is_ok();
        if !spirv_val {
            eprintln!("spirv-val is not installed: the SPIR-V is written but not validated");
        }
        let options = naga::back::spv::Options {
            lang_version: (1, 6),
            bounds_check_policies: naga::proc::BoundsCheckPolicies {
                index: naga::proc::BoundsCheckPolicy::Restrict,
                buffer: naga::proc::BoundsCheckPolicy::Unchecked,
                ..Default::default()
            },
            force_loop_bounding: true,
            ..Default::default()
        };
        let dir = std::env::temp_dir().join(format!("phobos-attn-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a temporary directory");
        for emulate in [false, true] {
            for d in [64, 128] {
                for (bq, bk) in [(64, 64), (64, 32), (128, 64), (32, 32)] {
                    for acc in [Acc::Workgroup, Acc::Registers, Acc::Lazy] {
                        for dropout in [true, false] {
                            let kernel = Kernel {
                                d,
                                s: 1024,
                                bq,
                                bk,
                                acc,
                                dropout,
                                emulate,
                            };
                            let src = kernel.wgsl();
                            let module = naga::front::wgsl::parse_str(&src).unwrap_or_else(|e| {
                                panic!("{kernel:?}:\n{}", e.emit_to_string(&src))
                            });
                            let info = Validator::new(ValidationFlags::all(), caps)
                                .validate(&module)
                                .unwrap_or_else(|e| {
                                    panic!("{kernel:?}:\n{}", e.emit_to_string(&src))
                                });
                            let words = naga::back::spv::write_vec(&module, &info, &options, None)
                                .unwrap_or_else(|e| panic!("{kernel:?}: SPIR-V: {e}"));
                            // Debian's spirv-val predates
                            // SPV_KHR_cooperative_matrix (capability 6022).
                            if spirv_val && emulate {
                                let path = dir.join(format!("{}.spv", kernel.file_name()));
                                let bytes: Vec<u8> =
                                    words.iter().flat_map(|w| w.to_le_bytes()).collect();
                                std::fs::write(&path, bytes).expect("writes the SPIR-V");
                                let out = std::process::Command::new("spirv-val")
                                    .args(["--target-env", "vulkan1.3"])
                                    .arg(&path)
                                    .output()
                                    .expect("runs spirv-val");
                                assert!(
                                    out.status.success(),
                                    "{kernel:?}: spirv-val: {}",
                                    String::from_utf8_lossy(&out.stderr)
                                );
                            }
                        }
                    }
                }
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
