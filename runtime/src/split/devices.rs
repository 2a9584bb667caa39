//! `--devices`: which devices a split launch or fill runs on, read from
//! text, and the devices themselves, opened once per process.
//!
//! The syntax (docs/fill.md and README's CLI section say it for users):
//!
//! - `all`: every hardware adapter wgpu finds (a software one such as
//!   lavapipe only when there is no other), one device each;
//! - `N`, a number alone: the first `N` of `all`'s adapters;
//! - a list, `gpu0,gpu1,cpu` (or `0,1,cpu`): adapters by their index in
//!   [`crate::gpu::Gpu::adapters`], and `cpu`, the Cranelift backend on the
//!   host's cores. An adapter may appear more than once: each time opens
//!   another device on it (`0,0` splits over two devices of one GPU).
//!
//! Any item may end in `:W`, a positive weight: the item's share of the
//! blocks (or elements) is `W` over the sum of the weights (`gpu0:3,cpu:1`
//! gives the GPU three quarters). Items without one weigh 1.

use crate::gpu::{Gpu, GpuError};
use std::collections::HashMap;
use std::fmt;
use std::sync::{Mutex, OnceLock};

/// One device of a split: an adapter's index, or the host's CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DeviceKind {
    /// Adapter `index` of [`Gpu::adapters`].
    Gpu(usize),
    /// The Cranelift backend on the host's cores.
    Cpu,
}

/// One item of `--devices`: a device and its weight.
#[derive(Clone, Debug, PartialEq)]
pub struct DeviceSpec {
    pub kind: DeviceKind,
    pub weight: f64,
}

impl fmt::Display for DeviceKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DeviceKind::Gpu(i) => write!(f, "gpu{i}"),
            DeviceKind::Cpu => write!(f, "cpu"),
        }
    }
}

/// `--devices` as written, before adapters are looked at.
#[derive(Clone, Debug, PartialEq)]
pub enum Devices {
    /// Every hardware adapter (or every adapter, where none is hardware).
    All,
    /// The first `n` of [`Devices::All`]'s adapters.
    First(usize),
    /// These devices, in this order.
    List(Vec<DeviceSpec>),
}

/// A `--devices` text that does not parse, or names no device that
/// exists; the message says which item and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DevicesError(pub String);

impl fmt::Display for DevicesError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "--devices: {}", self.0)
    }
}

impl std::error::Error for DevicesError {}

impl Devices {
    /// Reads `all`, `N` or a list of `gpuI`, `I` and `cpu` items, each with
    /// an optional `:W` weight.
    pub fn parse(text: &str) -> Result<Devices, DevicesError> {
        let t = text.trim();
        if t == "all" {
            return Ok(Devices::All);
        }
        if !t.contains(',')
            && let Ok(n) = t.parse::<usize>()
        {
            if n == 0 {
                return Err(DevicesError(
                    "`0`: a number alone asks for the first N adapters, and a split needs at \
                     least one; to name adapter 0, write `gpu0`"
                        .to_string(),
                ));
            }
            return Ok(Devices::First(n));
        }
        let mut list = Vec::new();
        for item in t.split(',') {
            let item = item.trim();
            let (name, weight) = match item.split_once(':') {
                Some((n, w)) => {
                    let w: f64 = w.trim().parse().map_err(|_| {
                        DevicesError(format!("`{item}`: the weight `{w}` is not a number"))
                    })?;
                    if !(w.is_finite() && w > 0.0) {
                        return Err(DevicesError(format!(
                            "`{item}`: a weight must be a positive number"
                        )));
                    }
                    (n.trim(), w)
                }
                None => (item, 1.0),
            };
            let index = name.strip_prefix("gpu").unwrap_or(name);
            let kind = if name == "cpu" {
                DeviceKind::Cpu
            } else if let Ok(i) = index.parse::<usize>() {
                DeviceKind::Gpu(i)
            } else {
                return Err(DevicesError(format!(
                    "`{item}` is not a device; write `all`, a count, or a list of \
                     gpuI (or I) and cpu, each with an optional :WEIGHT"
                )));
            };
            list.push(DeviceSpec { kind, weight });
        }
        Ok(Devices::List(list))
    }

    /// The devices this names on this machine, checked against the
    /// adapters present: an index past them is an error naming it and
    /// listing the adapters, before anything runs.
    pub fn resolve(&self) -> Result<Vec<DeviceSpec>, DevicesError> {
        let adapters = Gpu::adapters();
        let listing = || {
            if adapters.is_empty() {
                "wgpu finds no adapter here (use cpu)".to_string()
            } else {
                let names: Vec<String> = (adapters.iter().enumerate())
                    .map(|(i, a)| format!("gpu{i} {} ({:?})", a.name, a.backend))
                    .collect();
                format!("the adapters here are {}", names.join(", "))
            }
        };
        let hardware: Vec<usize> = (0..adapters.len())
            .filter(|&i| adapters[i].device_type != wgpu::DeviceType::Cpu)
            .collect();
        let all = if hardware.is_empty() {
            (0..adapters.len()).collect()
        } else {
            hardware
        };
        let gpus = |ids: &[usize]| -> Vec<DeviceSpec> {
            ids.iter()
                .map(|&i| DeviceSpec {
                    kind: DeviceKind::Gpu(i),
                    weight: 1.0,
                })
                .collect()
        };
        match self {
            Devices::All if all.is_empty() => Err(DevicesError(format!(
                "`all`: no adapter to split over; {}",
                listing()
            ))),
            Devices::All => Ok(gpus(&all)),
            Devices::First(n) if *n > all.len() => Err(DevicesError(format!(
                "`{n}`: {n} devices asked for but {} adapter{} here; {} (an adapter may be \
                 named more than once, `0,0`)",
                all.len(),
                if all.len() == 1 { " is" } else { "s are" },
                listing()
            ))),
            Devices::First(n) => Ok(gpus(&all[..*n])),
            Devices::List(list) => {
                for d in list {
                    if let DeviceKind::Gpu(i) = d.kind
                        && i >= adapters.len()
                    {
                        return Err(DevicesError(format!(
                            "`gpu{i}`: there is no adapter {i}; {}",
                            listing()
                        )));
                    }
                }
                Ok(list.clone())
            }
        }
    }
}

/// The devices of a split, opened: the `n`-th item naming an adapter opens
/// the `k`-th device on it, where `k` counts the earlier items naming the
/// same adapter. Devices stay open for the process, so that launches and
/// tests after the first reuse them and their pipelines.
pub fn open(specs: &[DeviceSpec]) -> Result<Vec<Option<&'static Gpu>>, DevicesError> {
    let mut seen: HashMap<usize, usize> = HashMap::new();
    specs
        .iter()
        .map(|s| match s.kind {
            DeviceKind::Cpu => Ok(None),
            DeviceKind::Gpu(i) => {
                let copy = seen.entry(i).or_insert(0);
                let k = *copy;
                *copy += 1;
                device(i, k)
                    .map(Some)
                    .map_err(|e| DevicesError(format!("`gpu{i}` would not open: {e}")))
            }
        })
        .collect()
}

/// Device `copy` of adapter `adapter`, opened on first use.
fn device(adapter: usize, copy: usize) -> Result<&'static Gpu, GpuError> {
    static OPENED: OnceLock<Mutex<HashMap<(usize, usize), &'static Gpu>>> = OnceLock::new();
    let mut opened = OPENED
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    if let Some(g) = opened.get(&(adapter, copy)) {
        return Ok(g);
    }
    // Kept for the process, as `Gpu::shared` is.
    let g: &'static Gpu = Box::leak(Box::new(Gpu::on_adapter(adapter)?));
    opened.insert((adapter, copy), g);
    Ok(g)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_form() {
        assert_eq!(Devices::parse("all"), Ok(Devices::All));
        assert_eq!(Devices::parse("2"), Ok(Devices::First(2)));
        let list = Devices::parse("gpu0:3, 1,cpu:0.5").unwrap();
        assert_eq!(
            list,
            Devices::List(vec![
                DeviceSpec {
                    kind: DeviceKind::Gpu(0),
                    weight: 3.0
                },
                DeviceSpec {
                    kind: DeviceKind::Gpu(1),
                    weight: 1.0
                },
                DeviceSpec {
                    kind: DeviceKind::Cpu,
                    weight: 0.5
                },
            ])
        );
        let zero = Devices::parse("0").unwrap_err().0;
        assert!(zero.contains("write `gpu0`"), "{zero}");
        assert!(Devices::parse("gpu").is_err());
        assert!(Devices::parse("tpu0").is_err());
        assert!(Devices::parse("cpu:0").is_err());
        assert!(Devices::parse("cpu:x").is_err());
        assert!(Devices::parse("cpu,").is_err());
    }

    #[test]
    fn an_adapter_past_the_last_is_named() {
        let e = Devices::parse("cpu,gpu999").unwrap().resolve().unwrap_err();
        assert!(
            e.to_string().contains("`gpu999`: there is no adapter 999"),
            "{e}"
        );
    }
}
