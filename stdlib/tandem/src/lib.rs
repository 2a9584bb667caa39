//! Tandem, the bulk random-number generator of Phobos: its reference
//! implementation. `SPEC.md` beside this crate is the normative description;
//! every GPU and CPU port must reproduce these bits.
//!
//! A stream is fixed by a 128-bit [`Key`] and a chunk length `K` (default
//! 32). It is a sequence of 16-byte blocks computed by a 32-bit ARX step,
//! and every fill maps element `i` to a fixed set of draws, so any element
//! can be computed on its own and a fill started at any element equals the
//! tail of the whole fill.
//!
//! # Tutorial
//!
//! Derive keys from a seed, then fill arrays of the type you need:
//!
//! ```
//! use phobos_tandem::{AliasTable, Key, Tandem, PURPOSE_USER};
//!
//! // One key per seed; sub() and split() give independent keys for other
//! // purposes and other workers without coordination.
//! let key = Key::from_seed(42);
//! let noise_key = key.sub(PURPOSE_USER + 1);
//! let worker_3 = key.split(3);
//! assert_ne!(noise_key, worker_3);
//!
//! let rng = Tandem::new(key); // K = 32
//! let mut z = vec![0.0f64; 1000];
//! rng.fill_normal_f64(&mut z, 0)?;
//!
//! // Random access: element 500 on its own, or a fill starting there.
//! assert_eq!(rng.normal_f64(500), z[500]);
//! let mut tail = vec![0.0f64; 500];
//! rng.fill_normal_f64(&mut tail, 500)?;
//! assert_eq!(&tail[..], &z[500..]);
//!
//! // Bounded integers, weighted choice, and bad input as errors.
//! let mut dice = [0u32; 8];
//! rng.fill_below_u32(&mut dice, 0, 6)?;
//! assert!(dice.iter().all(|&d| d < 6));
//! let table = AliasTable::new(&[1.0, 2.0, 7.0])?;
//! let mut picks = [0u32; 8];
//! rng.fill_choice(&mut picks, 0, &table)?;
//! assert!(rng.fill_below_u32(&mut dice, 0, 0).is_err());
//! assert!(AliasTable::new(&[1.0, f64::NAN]).is_err());
//! # Ok::<(), phobos_tandem::Error>(())
//! ```
//!
//! # Bits
//!
//! Every float result is computed from IEEE `+ - * /` and `sqrt` in a fixed
//! order, with the crate's own logarithm, exponential and sine/cosine
//! polynomials: no libm and no fused multiply-add, so WGSL, SPIR-V and
//! Cranelift ports can match bit for bit.

mod alias;
mod bounded;
mod bulk;
pub mod core;
mod elements;
mod error;
pub mod kat;
mod key;
pub mod math;
mod tandem;
pub mod ziggurat;

pub use alias::AliasTable;
pub use bounded::{lemire32, lemire64};
pub use bulk::{Bulk, Dist};
pub use error::Error;
pub use key::{
    DERIVE_ROUNDS, DOMAIN_SEED, DOMAIN_SPLIT, DOMAIN_SUB, Key, PURPOSE_BELOW, PURPOSE_NORMAL64,
    PURPOSE_USER,
};
pub use tandem::Tandem;
