//! Bad input gets an error that names the parameter, and the output is left
//! untouched.

use phobos_tandem::{Error, Key, Tandem};

#[test]
fn k_must_be_a_power_of_two_up_to_4096() {
    let key = Key::from_seed(1);
    for k in [0, 3, 48, 8192] {
        assert_eq!(Tandem::with_k(key, k), Err(Error::InvalidK { k }));
    }
    for k in [1, 2, 8, 32, 4096] {
        assert_eq!(Tandem::with_k(key, k).unwrap().k(), k);
    }
    assert!(Error::InvalidK { k: 3 }.to_string().contains("`k`"));
}

#[test]
fn below_zero_is_refused_and_writes_nothing() {
    let r = Tandem::new(Key::from_seed(2));
    let mut out = [7u32; 4];
    let e = r.fill_below_u32(&mut out, 0, 0).unwrap_err();
    assert_eq!(e, Error::EmptyRange { parameter: "n" });
    assert!(e.to_string().contains("`n`"));
    assert_eq!(out, [7; 4]);
    assert!(r.fill_below_u64(&mut [0u64; 1], 0, 0).is_err());
    assert!(r.below_u32(0, 0).is_err());
    assert!(r.fill_below_i64(&mut [0i64; 1], 0, 5, 0).is_err());
}

#[test]
fn ranges_that_overflow_the_type_are_refused() {
    let r = Tandem::new(Key::from_seed(3));
    assert!(matches!(
        r.fill_below_i32(&mut [0; 1], 0, 1, u32::MAX),
        Err(Error::RangeOverflow { parameter: "n", .. })
    ));
    assert!(r.fill_below_i32(&mut [0; 1], 0, i32::MIN, u32::MAX).is_ok());
    assert!(r.fill_below_i64(&mut [0; 1], 0, 0, u64::MAX).is_err());
    assert!(r.fill_below_i64(&mut [0; 1], 0, i64::MIN, u64::MAX).is_ok());
}

#[test]
fn counts_beyond_the_stream_are_refused() {
    let r = Tandem::new(Key::from_seed(4));
    let mut out = [9u8; 2];
    assert_eq!(
        r.fill_u8(&mut out, u64::MAX),
        Err(Error::BeyondCapacity {
            start: u64::MAX,
            len: 2
        })
    );
    assert_eq!(out, [9, 9]);
    assert!(r.fill_u8(&mut out[..1], u64::MAX).is_ok());
    assert!(r.fill_normal_f64(&mut [0.0; 3], u64::MAX - 1).is_err());
}
