//! The one error type of the crate: every rejected input, naming the
//! parameter it concerns.

use std::fmt;

/// Why a generator could not be built or a fill could not run. No fill
/// writes anything when it returns an error.
#[derive(Clone, Debug, PartialEq)]
pub enum Error {
    /// `k` is not a power of two in `1..=4096`.
    InvalidK { k: u32 },
    /// `n` of `below(n)` is zero: there is no value to draw.
    EmptyRange { parameter: &'static str },
    /// `low + n - 1` does not fit the output type.
    RangeOverflow {
        parameter: &'static str,
        low: i128,
        n: u128,
    },
    /// The weights of a choice are empty.
    EmptyWeights,
    /// A weight is negative, NaN or infinite.
    InvalidWeight { index: usize, value: f64 },
    /// Every weight is zero, so no index can be chosen.
    AllWeightsZero,
    /// More weights than 32-bit indices can name.
    TooManyWeights { len: usize },
    /// `start + len` passes the last element index, 2^64 - 1.
    BeyondCapacity { start: u64, len: usize },
    /// A byte output whose length is not a whole number of elements.
    OutputLength { len: usize, elem_size: usize },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::InvalidK { k } => write!(
                f,
                "invalid parameter `k` = {k}: the chunk length must be a power of two from 1 to 4096 (default 32)"
            ),
            Error::EmptyRange { parameter } => write!(
                f,
                "invalid parameter `{parameter}` = 0: below(n) needs n >= 1"
            ),
            Error::RangeOverflow { parameter, low, n } => write!(
                f,
                "invalid parameter `{parameter}`: low {low} plus n {n} passes the largest value of the output type"
            ),
            Error::EmptyWeights => write!(f, "invalid parameter `weights`: it is empty"),
            Error::InvalidWeight { index, value } => write!(
                f,
                "invalid parameter `weights`: weight {index} is {value}; weights must be finite and >= 0"
            ),
            Error::AllWeightsZero => write!(
                f,
                "invalid parameter `weights`: every weight is zero, so nothing can be chosen"
            ),
            Error::TooManyWeights { len } => write!(
                f,
                "invalid parameter `weights`: {len} weights, at most 2^32 are allowed"
            ),
            Error::BeyondCapacity { start, len } => write!(
                f,
                "invalid parameters `start` = {start} and output length {len}: the stream has 2^64 elements"
            ),
            Error::OutputLength { len, elem_size } => write!(
                f,
                "invalid parameter `out`: {len} bytes is not a whole number of {elem_size}-byte elements"
            ),
        }
    }
}

impl std::error::Error for Error {}
