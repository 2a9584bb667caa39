//! Writes a Tandem u32 fill as raw little-endian words to stdout, for test
//! batteries: `stream SEED [K]` | `dieharder -g 200 -d N`. Runs until the
//! reader closes the pipe.

use std::io::{self, Write};

use phobos_tandem::{Key, Tandem};

fn main() {
    let mut args = std::env::args().skip(1);
    let seed: u64 = args
        .next()
        .map_or(0, |s| s.parse().expect("SEED must be a u64"));
    let k: u32 = args
        .next()
        .map_or(32, |s| s.parse().expect("K must be a u32"));
    let rng = Tandem::with_k(Key::from_seed(seed), k).expect("valid K");
    let mut out = io::stdout().lock();
    let mut words = vec![0u32; 1 << 16];
    let mut bytes = vec![0u8; words.len() * 4];
    let mut start = 0u64;
    loop {
        rng.fill_u32(&mut words, start).expect("within the stream");
        for (b, w) in bytes.chunks_exact_mut(4).zip(&words) {
            b.copy_from_slice(&w.to_le_bytes());
        }
        if out.write_all(&bytes).is_err() {
            return; // The reader has had enough.
        }
        start += words.len() as u64;
    }
}
