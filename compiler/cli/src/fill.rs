//! `phobosc fill`: a Tandem stream of one element type, raw or `.npy`, to a
//! file or stdout, streamed in pieces so that no count needs the memory of
//! the whole output (see docs/fill.md and stdlib/tandem/SPEC.md section 14).

use crate::BackendArg;
use anyhow::{Context, Result, anyhow, bail};
use clap::{Args, ValueEnum};
use phobos_runtime::fills::{Engine, descr, parse_type, parse_u64, valid_k};
use phobos_runtime::gpu::{Gpu, fill_map};
use phobos_tandem::{Bulk, Dist, Key, Tandem};
use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

#[derive(Args)]
pub struct FillArgs {
    /// The element type: u8, u16, u32, u64, f16 (binary16 bits), f32, f64,
    /// bool (one byte, 0 or 1), below:N (uniform in [0, N); u32 for
    /// N < 2^32, else u64), below:LOW:N (uniform in [LOW, LOW + N); i32 when
    /// that fits and N < 2^32, else i64), normal_f32, normal_f64, exp_f32,
    /// exp_f64, choice:W1,W2,... (u32 indices drawn with the given weights).
    #[arg(value_name = "TYPE")]
    ty: String,
    /// The seed, a u64 in decimal or 0x hexadecimal; the stream's key is the
    /// spec's Key::from_seed(SEED).
    #[arg(long, value_name = "SEED", allow_hyphen_values = true)]
    key: String,
    /// Elements to write. May be left out for raw output: the stream then
    /// runs to its end (2^64 elements), that is, until the reader stops.
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    count: Option<String>,
    /// The first element's index: the output equals elements S.. of the fill
    /// from 0.
    #[arg(
        long,
        value_name = "S",
        default_value = "0",
        allow_hyphen_values = true
    )]
    start: String,
    /// `auto` and `cpu`: the fast CPU fill; `interp`: the reference
    /// implementation element by element (slow, for cross-checks); `gpu`:
    /// the GPU fill (every type).
    #[arg(long, value_enum, default_value = "auto")]
    backend: BackendArg,
    /// `raw`: little-endian elements, nothing else; `npy`: a NumPy .npy
    /// file of shape (N,).
    #[arg(long, value_enum, default_value = "raw")]
    format: Format,
    /// Where to write; `-` (the default) is stdout.
    #[arg(short = 'o', long = "output", value_name = "PATH")]
    output: Option<PathBuf>,
    /// The chunk length K of the stream (SPEC.md section 3.3): a power of two
    /// from 1 to 4096. K is part of the stream's identity, so another K gives
    /// other bits; every backend takes it.
    #[arg(
        long = "k",
        value_name = "K",
        default_value = "32",
        allow_hyphen_values = true
    )]
    k: String,
    /// Threads for the cpu backend (default: every core). The bits never
    /// depend on it.
    #[arg(long, value_name = "T")]
    threads: Option<usize>,
    /// Print a summary (type, count, backend, GiB/s) on stderr; it is also
    /// printed when the output is a file.
    #[arg(long)]
    verbose: bool,
    /// Make every piece of the stream on several devices at once, each a
    /// contiguous range of its elements, with the same bits: `all`, `N`,
    /// or a list of `gpuI` (or `I`) and `cpu` with optional `:WEIGHT`s, as
    /// for `run`. Overrides --backend.
    #[arg(long, value_name = "all|N|LIST")]
    devices: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Raw,
    Npy,
}

/// The chunk length of `--k`: a power of two from 1 to 4096, as
/// `Tandem::with_k` takes it.
fn parse_k(s: &str) -> Result<u32> {
    let k = parse_u64(s)
        .and_then(|k| u32::try_from(k).ok())
        .filter(|&k| valid_k(k));
    k.ok_or_else(|| {
        anyhow!(
            "--k `{s}`: the chunk length K must be a power of two from 1 to 4096 (1, 2, 4, ..., 4096; default 32)"
        )
    })
}

/// The .npy header of a 1-D C-order array of `n` elements, written by npyz.
/// The data that follows is the elements' little-endian bytes, which is
/// exactly what the fill produces, so it is written raw, in pieces.
fn npy_header(d: &Dist, n: u64) -> Result<Vec<u8>> {
    use npyz::WriterBuilder;
    fn header<T: npyz::Serialize>(dtype: &str, n: u64) -> io::Result<Vec<u8>> {
        let ts: npyz::TypeStr = dtype.parse().map_err(io::Error::other)?;
        let mut out = Vec::new();
        // Dropped before any element is pushed: npyz's drop then reports a
        // count mismatch that it ignores, and `out` holds just the header.
        drop(
            npyz::WriteOptions::<T>::new()
                .dtype(npyz::DType::Plain(ts))
                .shape(&[n])
                .writer(&mut out)
                .begin_nd()?,
        );
        Ok(out)
    }
    let h = match descr(d) {
        "|u1" => header::<u8>("|u1", n),
        "<u2" => header::<u16>("<u2", n),
        "<u4" => header::<u32>("<u4", n),
        "<u8" => header::<u64>("<u8", n),
        "<i4" => header::<i32>("<i4", n),
        "<i8" => header::<i64>("<i8", n),
        "<f4" => header::<f32>("<f4", n),
        "<f8" => header::<f64>("<f8", n),
        "|b1" => header::<bool>("|b1", n),
        // npyz serialises f16 only with its `half` feature; the header of
        // <u2 with the descr swapped for <f2 (same length) is the same file.
        "<f2" => header::<u16>("<u2", n).map(|mut h| {
            if let Some(p) = h.windows(5).position(|w| w == b"'<u2'") {
                h[p + 2] = b'f';
            }
            h
        }),
        other => unreachable!("dtype {other}"),
    };
    h.context("cannot build the .npy header")
}

/// Bytes per piece written: large enough to amortise starting the threads,
/// small enough to start a pipe's reader at once.
const PIECE_BYTES: usize = 4 << 20;

/// Bytes per piece on the GPU.
const GPU_PIECE_BYTES: usize = 64 << 20;

/// Bytes per piece: larger on the GPU, where each piece is a dispatch and
/// a readback.
fn piece_bytes(engine: &Engine) -> usize {
    match engine {
        Engine::Gpu(..) => GPU_PIECE_BYTES,
        Engine::Split(s) if s.has_gpu() => GPU_PIECE_BYTES,
        _ => PIECE_BYTES,
    }
}

pub fn fill(a: &FillArgs) -> Result<ExitCode> {
    let dist = parse_type(&a.ty).map_err(anyhow::Error::msg)?;
    let seed = parse_u64(&a.key).ok_or_else(|| {
        anyhow!(
            "--key `{}`: not a u64 seed (decimal, or hexadecimal with 0x)",
            a.key
        )
    })?;
    let start = parse_u64(&a.start).ok_or_else(|| {
        anyhow!(
            "--start `{}`: not an element index from 0 to 2^64 - 1",
            a.start
        )
    })?;
    let count = match &a.count {
        None => None,
        Some(c) => Some(parse_u64(c).ok_or_else(|| {
            anyhow!(
                "--count `{c}`: not a number of elements from 0 to 2^64 - 1 (decimal or 0x hex)"
            )
        })?),
    };
    let size = dist.elem_size() as u64;
    // Elements start .. start + count must exist (indices below 2^64).
    let room = (1u128 << 64) - u128::from(start);
    let count: u128 = match count {
        Some(n) if u128::from(n) > room => bail!(
            "--start {start} --count {n}: the stream has 2^64 elements, so at most {room} follow element {start}"
        ),
        Some(n) if n.checked_mul(size).is_none() => bail!(
            "--count {n}: {n} elements of {size} bytes pass 2^64 bytes, more than any output can hold"
        ),
        Some(n) => u128::from(n),
        None if a.format == Format::Npy => {
            bail!("--format npy needs --count: the .npy header records the length")
        }
        None => room,
    };
    if a.threads == Some(0) {
        bail!("--threads 0: at least one thread is needed");
    }
    let k = parse_k(&a.k)?;
    let rng = Tandem::with_k(Key::from_seed(seed), k).expect("parse_k checked K");
    let (engine, backend, threads) = match a.backend {
        _ if a.devices.is_some() => {
            let text = a.devices.as_deref().expect("checked");
            let devices = crate::devices::resolve(text)?;
            let split = phobos_runtime::split::fill(&dist, rng, &devices, a.threads)
                .map_err(|e| anyhow!("{e}"))?;
            (Engine::Split(split), "split", 1)
        }
        BackendArg::Auto | BackendArg::Cpu => {
            let mut b = Bulk::new(rng);
            if let Some(t) = a.threads {
                b = b.threads(t);
            }
            (Engine::Fast(b), "cpu", b.thread_count())
        }
        BackendArg::Interp => (Engine::Reference(rng), "interp (reference)", 1),
        BackendArg::Gpu => {
            if let Err(e) = fill_map(&dist) {
                bail!(
                    "--backend gpu, TYPE `{}`: {e} (the default) or interp",
                    a.ty
                );
            }
            let g = Gpu::shared().map_err(|e| {
                anyhow!("--backend gpu: {e}; use --backend cpu (the default) or interp")
            })?;
            (Engine::Gpu(g, rng), "gpu", 1)
        }
    };
    let to_stdout = a.output.is_none() || a.output.as_deref() == Some("-".as_ref());
    let mut sink: Box<dyn Write> = if to_stdout {
        Box::new(io::stdout().lock())
    } else {
        let path = a.output.as_ref().expect("a path");
        Box::new(io::BufWriter::with_capacity(
            1 << 16,
            std::fs::File::create(path)
                .with_context(|| format!("-o {}: cannot create the file", path.display()))?,
        ))
    };
    let t0 = Instant::now();
    let (written, phases) = match stream(&engine, &dist, start, count, a.format, &mut *sink) {
        Ok(n) => n,
        // A reader that stops early (`| head`, dieharder) is not an error.
        Err(e) if is_broken_pipe(&e) => return Ok(ExitCode::SUCCESS),
        // A split fill whose device failed leaves no partial file behind.
        Err(e) if a.devices.is_some() && !to_stdout => {
            drop(sink);
            if let Some(path) = &a.output {
                let _ = std::fs::remove_file(path);
            }
            return Err(e);
        }
        Err(e) => return Err(e),
    };
    let secs = t0.elapsed().as_secs_f64();
    if a.verbose || !to_stdout {
        let bytes = written * u128::from(size);
        eprintln!(
            "fill {}: {written} elements ({bytes} bytes, {}) from element {start}, key {seed:#x}, K {k}, backend {backend}, {threads} thread{}, {:.3} s, {:.2} GiB/s",
            a.ty,
            match a.format {
                Format::Raw => "raw",
                Format::Npy => "npy",
            },
            if threads == 1 { "" } else { "s" },
            secs,
            bytes as f64 / secs.max(1e-9) / f64::from(1u32 << 30),
        );
        if let Engine::Split(s) = &engine {
            for share in s.shares() {
                eprintln!(
                    "fill {}: device {} (weight {}): {} elements, {:.3} s",
                    a.ty, share.name, share.weight, share.elements, share.seconds
                );
            }
        }
        if a.verbose {
            let gib = |s: f64| bytes as f64 / s.max(1e-9) / f64::from(1u32 << 30);
            let making = if backend == "gpu" {
                "making them (GPU dispatch and readback)"
            } else {
                "making them"
            };
            let bound = if phases.writing > phases.making {
                format!(
                    "bounded by the writes to {} (the disk, or the reader of the pipe)",
                    if to_stdout {
                        "stdout".to_string()
                    } else {
                        a.output.as_ref().expect("a path").display().to_string()
                    }
                )
            } else {
                "bounded by making the numbers, not by the writes".to_string()
            };
            eprintln!(
                "fill {}: {making} {:.3} s ({:.2} GiB/s), writing {:.3} s ({:.2} GiB/s), overlapped: {bound}",
                a.ty,
                phases.making,
                gib(phases.making),
                phases.writing,
                gib(phases.writing),
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<io::Error>()
            .is_some_and(|io| io.kind() == io::ErrorKind::BrokenPipe)
    })
}

/// How long a fill spent making its elements and writing them.
struct Phases {
    /// Seconds generating pieces (on the GPU: dispatching and reading back).
    making: f64,
    /// Seconds in the writes to the output (the disk, or the reader of a
    /// pipe, and the format's header).
    writing: f64,
}

/// Writes elements `start .. start + count` piece by piece; returns how
/// many. The next piece is made on another thread while this one is being
/// written (two buffers), so the whole takes about the slower of the two,
/// not their sum; [`Phases`] says which that was.
fn stream(
    engine: &Engine,
    dist: &Dist,
    start: u64,
    count: u128,
    format: Format,
    out: &mut dyn Write,
) -> Result<(u128, Phases)> {
    let size = dist.elem_size();
    let mut phases = Phases {
        making: 0.0,
        writing: 0.0,
    };
    let t = Instant::now();
    if format == Format::Npy {
        out.write_all(&npy_header(dist, count as u64)?)?;
    }
    phases.writing += t.elapsed().as_secs_f64();
    let per_piece = (piece_bytes(engine) / size) as u128;
    let piece_len = (per_piece.min(count) as usize) * size;
    let (to_maker, empty) = std::sync::mpsc::channel::<Vec<u8>>();
    let (to_writer, full) = std::sync::mpsc::sync_channel::<Result<(Vec<u8>, usize, f64)>>(1);
    for _ in 0..2 {
        to_maker
            .send(vec![0u8; piece_len])
            .expect("the channel is open");
    }
    let mut done = 0u128;
    std::thread::scope(|scope| -> Result<()> {
        scope.spawn(move || {
            let mut made = 0u128;
            while made < count {
                let Ok(mut buf) = empty.recv() else { return };
                let n = (count - made).min(per_piece) as usize;
                let t = Instant::now();
                // start + made < 2^64 because made < count <= 2^64 - start.
                let r = engine
                    .fill(
                        dist,
                        (u128::from(start) + made) as u64,
                        &mut buf[..n * size],
                    )
                    .map_err(anyhow::Error::msg);
                let secs = t.elapsed().as_secs_f64();
                let failed = r.is_err();
                if to_writer.send(r.map(|()| (buf, n, secs))).is_err() || failed {
                    return;
                }
                made += n as u128;
            }
        });
        // Owned here, so that an early return (a failed write) drops them
        // and the maker, blocked on either channel, stops.
        let (full, to_maker) = (full, to_maker);
        while done < count {
            let (buf, n, secs) = full.recv().expect("the maker sends every piece")?;
            phases.making += secs;
            let t = Instant::now();
            out.write_all(&buf[..n * size])?;
            phases.writing += t.elapsed().as_secs_f64();
            done += n as u128;
            // The maker may have finished; a closed channel is fine.
            let _ = to_maker.send(buf);
        }
        Ok(())
    })?;
    let t = Instant::now();
    out.flush()?;
    phases.writing += t.elapsed().as_secs_f64();
    Ok((done, phases))
}
