//! The 128-bit key and its derivations: `from_seed`, `sub(purpose)` and
//! `split(g)`, with the purpose constants the library reserves.
//!
//! A derivation is `P(key ^ message) + key` word-wise, where `P` is twelve
//! derivation rounds (the step's round with the [`WEYL_DERIVE`] constant).
//! For a fixed parent key this is injective in the message, so distinct
//! purposes, distinct split indices and distinct seeds always give distinct
//! keys. It uses 32-bit operations only, so a GPU kernel can derive
//! `split(g)` of a miss's index itself. It is not a cryptographic function.

use crate::core::{Block, WEYL_DERIVE, round};

/// Rounds of the derivation permutation: half again the eight warm-up steps
/// that sufficed for neighbouring chunk indices under the all-zero key.
pub const DERIVE_ROUNDS: u32 = 12;

/// Domain tag (ASCII "seed", little-endian) of [`Key::from_seed`].
pub const DOMAIN_SEED: u32 = u32::from_le_bytes(*b"seed");
/// Domain tag (ASCII "sub\0") of [`Key::sub`].
pub const DOMAIN_SUB: u32 = u32::from_le_bytes(*b"sub\0");
/// Domain tag (ASCII "splt") of [`Key::split`].
pub const DOMAIN_SPLIT: u32 = u32::from_le_bytes(*b"splt");

/// Purpose of the key on whose splits rejected bounded draws are retried.
pub const PURPOSE_BELOW: u64 = 1;
/// Purpose of the key on whose splits f64 ziggurat misses continue.
pub const PURPOSE_NORMAL64: u64 = 2;
/// Purposes below this value are reserved for the library; user code that
/// derives its own independent keys should use `PURPOSE_USER + n`.
pub const PURPOSE_USER: u64 = 1 << 32;

/// A Tandem key: 128 bits as four 32-bit words.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Key {
    words: Block,
}

impl Key {
    /// A key given by its words. Keys with structure (such as small
    /// integers) are legal but can give overlapping streams for related keys;
    /// prefer [`Key::from_seed`] and the derivations, whose keys look random.
    pub const fn from_words(words: [u32; 4]) -> Key {
        Key { words }
    }

    /// The key of a 64-bit seed: derivation of the all-zero key in the seed
    /// domain.
    pub fn from_seed(seed: u64) -> Key {
        Key::from_words([0; 4]).derive(DOMAIN_SEED, seed)
    }

    /// An independent key for a purpose (see the `PURPOSE_*` constants).
    // The spec and the seeds name this derivation `sub`; it is not subtraction.
    #[allow(clippy::should_implement_trait)]
    pub fn sub(self, purpose: u64) -> Key {
        self.derive(DOMAIN_SUB, purpose)
    }

    /// The `g`-th independent child key (per element, per lane, per device).
    pub fn split(self, g: u64) -> Key {
        self.derive(DOMAIN_SPLIT, g)
    }

    /// The four words, word 0 first.
    pub const fn words(self) -> [u32; 4] {
        self.words
    }

    fn derive(self, domain: u32, value: u64) -> Key {
        let k = self.words;
        let mut s = [
            k[0] ^ value as u32,
            k[1] ^ (value >> 32) as u32,
            k[2] ^ domain,
            k[3],
        ];
        for t in 1..=DERIVE_ROUNDS {
            round(&mut s, t.wrapping_mul(WEYL_DERIVE));
        }
        Key {
            words: [
                s[0].wrapping_add(k[0]),
                s[1].wrapping_add(k[1]),
                s[2].wrapping_add(k[2]),
                s[3].wrapping_add(k[3]),
            ],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn derivations_differ() {
        let k = Key::from_seed(0);
        assert_ne!(k, Key::from_words([0; 4]));
        assert_ne!(k.sub(1), k.split(1));
        assert_ne!(k.sub(PURPOSE_BELOW), k.sub(PURPOSE_NORMAL64));
        assert_ne!(Key::from_seed(1), Key::from_seed(2));
    }
}
