//! A Tandem fill split across devices: the elements of each piece cut
//! into contiguous ranges by weight ([`super::ranges::weighted`]), each
//! range made by one device on a thread of its own. Element `i` of a fill
//! is draw `i` of the stream, so a fill cut at any element is the whole
//! fill (stdlib/tandem/SPEC.md), and the pieces put end to end are the
//! single-device fill bit for bit.

use super::devices::{DeviceKind, DeviceSpec, open};
use super::ranges::weighted;
use super::{SplitError, devices::DevicesError};
use crate::fills::Engine;
use crate::gpu::fill_map;
use phobos_tandem::{Bulk, Dist, Tandem};
use std::sync::Mutex;
use std::time::Instant;

/// The devices of a split fill, opened, with what each has made so far.
pub struct SplitFill {
    parts: Vec<FillPart>,
    /// A device made to fail after making its range, for tests
    /// (`PHOBOS_SPLIT_FAIL=<index>`, as for launches).
    injected: Option<usize>,
}

struct FillPart {
    spec: DeviceSpec,
    name: String,
    engine: Engine,
    /// Elements made and seconds spent, over every piece.
    made: Mutex<(u64, f64)>,
}

/// One device's share of a split fill so far.
#[derive(Clone, Debug, PartialEq)]
pub struct FillShare {
    pub device: DeviceKind,
    /// The device as `phobosc fill --verbose` prints it.
    pub name: String,
    pub weight: f64,
    pub elements: u64,
    pub seconds: f64,
}

/// The engines of a fill of `dist` from `rng` across `devices`: a CPU
/// device is the fast CPU fill on `threads` threads (default: the cores
/// shared among the CPU devices), an adapter its GPU fill. A type without
/// a GPU fill, or a device that does not open, is an error naming the
/// device, before anything is made.
pub fn fill(
    dist: &Dist,
    rng: Tandem,
    devices: &[DeviceSpec],
    threads: Option<usize>,
) -> Result<SplitFill, SplitError> {
    if devices.is_empty() {
        return Err(DevicesError("a split needs at least one device".to_string()).into());
    }
    let gpus = open(devices)?;
    let cpus = devices.iter().filter(|d| d.kind == DeviceKind::Cpu).count();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads = threads.unwrap_or((cores / cpus.max(1)).max(1));
    let mut parts = Vec::new();
    for (spec, g) in devices.iter().zip(gpus) {
        let (name, engine) = match g {
            Some(g) => {
                fill_map(dist).map_err(|e| {
                    SplitError::Devices(DevicesError(format!("`{}`: {e}", spec.kind)))
                })?;
                (
                    format!("{} {}", spec.kind, g.describe()),
                    Engine::Gpu(g, rng),
                )
            }
            None => (
                format!("cpu ({threads} threads)"),
                Engine::Fast(Bulk::new(rng).threads(threads)),
            ),
        };
        parts.push(FillPart {
            spec: spec.clone(),
            name,
            engine,
            made: Mutex::new((0, 0.0)),
        });
    }
    let injected = std::env::var("PHOBOS_SPLIT_FAIL")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok());
    Ok(SplitFill { parts, injected })
}

impl SplitFill {
    /// Elements `start ..` of `d` as little-endian bytes into `out` (whose
    /// length is a multiple of the element size), every device making its
    /// range at once; a device that fails fails the whole, naming it.
    pub fn fill(&self, d: &Dist, start: u64, out: &mut [u8]) -> Result<(), String> {
        let size = d.elem_size();
        let n = (out.len() / size) as u64;
        let weights: Vec<f64> = self.parts.iter().map(|p| p.spec.weight).collect();
        let ranges = weighted(n, &weights);
        let mut rest = out;
        let mut pieces = Vec::new();
        for r in &ranges {
            let (piece, tail) = rest.split_at_mut(((r.end - r.start) as usize) * size);
            pieces.push((r.start, piece));
            rest = tail;
        }
        let results: Vec<Result<(), String>> = std::thread::scope(|s| {
            let handles: Vec<_> = (self.parts.iter().zip(pieces))
                .map(|(part, (first, piece))| {
                    s.spawn(move || {
                        if piece.is_empty() {
                            return Ok(());
                        }
                        let t = Instant::now();
                        part.engine.fill(d, start + first, piece)?;
                        let mut made = part.made.lock().unwrap_or_else(|e| e.into_inner());
                        made.0 += (piece.len() / size) as u64;
                        made.1 += t.elapsed().as_secs_f64();
                        Ok(())
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or_else(|_| Err("the device's thread panicked".to_string()))
                })
                .collect()
        });
        for (i, (r, part)) in results.into_iter().zip(&self.parts).enumerate() {
            let r = match r {
                Ok(()) if self.injected == Some(i) => {
                    Err("a failure injected for tests (PHOBOS_SPLIT_FAIL)".to_string())
                }
                r => r,
            };
            if let Err(e) = r {
                return Err(format!(
                    "device {i} of the split ({}) failed, so the fill stops: {e}",
                    part.spec.kind
                ));
            }
        }
        Ok(())
    }

    /// Whether any device is a GPU (whose fills are best made in larger
    /// pieces).
    pub fn has_gpu(&self) -> bool {
        self.parts
            .iter()
            .any(|p| matches!(p.spec.kind, DeviceKind::Gpu(_)))
    }

    /// What each device has made so far, in `--devices` order.
    pub fn shares(&self) -> Vec<FillShare> {
        self.parts
            .iter()
            .map(|p| {
                let (elements, seconds) = *p.made.lock().unwrap_or_else(|e| e.into_inner());
                FillShare {
                    device: p.spec.kind,
                    name: p.name.clone(),
                    weight: p.spec.weight,
                    elements,
                    seconds,
                }
            })
            .collect()
    }
}
