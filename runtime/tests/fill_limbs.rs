//! The GPU fills whose products are 32 x 32 -> 64 bits (Lemire's bounded
//! integers, the alias table's column) with 16-bit limbs, as on a device
//! without 64-bit integers: `PHOBOS_NO_INT64` turns `GpuOptions::int64`
//! off for this process (its own test binary, one test, so no other test
//! sees the variable). `fill.rs` checks the 64-bit products where the
//! device has them (lavapipe and the H200 do).

use phobos_tandem::{AliasTable, Dist, Key, Tandem};

mod common;

#[test]
fn bounded_and_choice_fills_with_limb_products_equal_the_reference() {
    // SAFETY: set before any thread reads the environment; this binary has
    // one test and the GPU is created after.
    unsafe { std::env::set_var("PHOBOS_NO_INT64", "1") };
    let Some(gpu) = common::gpu_or_skip() else {
        return;
    };
    let rng = Tandem::new(Key::from_seed(77));
    let table = AliasTable::new(&[1.0, 2.0, 3.0, 0.0, 4.5]).unwrap();
    let dists = [
        Dist::BelowU32 { n: 1000 },
        Dist::BelowU32 { n: u32::MAX - 1 },
        Dist::BelowU32 { n: (1 << 31) + 1 },
        Dist::BelowI32 { low: -10, n: 21 },
        Dist::BelowI64U32 {
            low: -(1 << 40),
            n: 6,
        },
        Dist::BelowU64 { n: u64::MAX - 1 },
        Dist::BelowU64 { n: (1 << 63) + 1 },
        Dist::BelowU64 { n: 1000 },
        Dist::BelowI64 {
            low: i64::MIN,
            n: u64::MAX,
        },
        Dist::Choice(table),
    ];
    for d in dists {
        let (start, n) = (1003u64, 20_000usize);
        let mut want = vec![0u8; n * d.elem_size()];
        phobos_tandem::Bulk::new(rng)
            .fill_bytes(&d, start, &mut want)
            .unwrap();
        let mut got = vec![0u8; want.len()];
        gpu.fill(&d, rng, start, &mut got).unwrap();
        assert!(
            got == want,
            "{d:?}: the GPU fill with limb products differs"
        );
    }
}
