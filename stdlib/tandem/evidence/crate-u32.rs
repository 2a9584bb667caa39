//! The u32 stream of `phobosc fill u32 --key SEED` (K = 32) written straight
//! from the reference crate `phobos-tandem`, for run-stream-unchanged.sh:
//!
//!     crate-u32 bulk|reference SEED BYTES
//!
//! `bulk` makes the bytes as the CLI's CPU fill does (`Bulk::fill_bytes` of
//! `Dist::U32` on `Tandem::with_k(Key::from_seed(SEED), 32)`, 4 MiB pieces);
//! `reference` with `Tandem::fill_u32`, element by element (slow). BYTES is
//! a multiple of 4. The script builds this file against the crate of each
//! commit it compares, so it uses only API that both have.

use std::io::{self, Write};

use phobos_tandem::{Bulk, Dist, Key, Tandem};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() != 3 || !(args[0] == "bulk" || args[0] == "reference") {
        eprintln!("usage: crate-u32 bulk|reference SEED BYTES");
        std::process::exit(2);
    }
    let seed: u64 = args[1].parse().expect("SEED must be a u64 in decimal");
    let bytes: u64 = args[2].parse().expect("BYTES must be a number");
    assert!(bytes % 4 == 0, "BYTES must be a multiple of 4");
    let rng = Tandem::with_k(Key::from_seed(seed), 32).expect("K = 32 is valid");
    let bulk = Bulk::new(rng);
    // The CLI's PIECE_BYTES.
    const PIECE: u64 = 4 << 20;
    let mut buf = vec![0u8; PIECE.min(bytes) as usize];
    let mut words = vec![0u32; buf.len() / 4];
    let mut out = io::stdout().lock();
    let mut done = 0u64;
    while done < bytes {
        let n = (bytes - done).min(PIECE) as usize;
        let start = done / 4;
        if args[0] == "bulk" {
            bulk.fill_bytes(&Dist::U32, start, &mut buf[..n])
                .expect("within the stream");
        } else {
            rng.fill_u32(&mut words[..n / 4], start)
                .expect("within the stream");
            for (b, w) in buf[..n].chunks_exact_mut(4).zip(&words) {
                b.copy_from_slice(&w.to_le_bytes());
            }
        }
        if out.write_all(&buf[..n]).is_err() {
            return; // The reader has had enough.
        }
        done += n as u64;
    }
    out.flush().expect("stdout");
}
