//! Known-answer vectors: the rendering of `kat::render()` must equal the
//! checked-in `kat.txt`, and SPEC.md must quote that file verbatim.

#[test]
fn known_answers_are_unchanged() {
    let expected = include_str!("../kat.txt");
    let got = phobos_tandem::kat::render();
    if got != expected {
        for (i, (a, b)) in got.lines().zip(expected.lines()).enumerate() {
            assert_eq!(a, b, "first difference at line {}", i + 1);
        }
        panic!("known answers differ in length");
    }
}

#[test]
fn the_spec_quotes_the_known_answers() {
    let spec = include_str!("../SPEC.md");
    assert!(
        spec.contains(include_str!("../kat.txt")),
        "SPEC.md must quote kat.txt verbatim"
    );
}

/// Sections 2 and 3 of SPEC.md written again from the text alone, as a
/// port would, to check that the words of the spec define the crate's bits.
mod from_the_spec {
    fn qr(s: &mut [u32; 4]) {
        let [mut a, mut b, mut c, mut d] = *s;
        a = a.wrapping_add(b);
        d = (d ^ a).rotate_left(16);
        c = c.wrapping_add(d);
        b = (b ^ c).rotate_left(12);
        a = a.wrapping_add(b);
        d = (d ^ a).rotate_left(8);
        c = c.wrapping_add(d);
        b = (b ^ c).rotate_left(7);
        *s = [a, b, c, d];
    }

    fn round(s: &mut [u32; 4], w: u32) -> [u32; 4] {
        s[0] = s[0].wrapping_add(w);
        let y = *s;
        qr(s);
        qr(s);
        y
    }

    pub fn derive(k: [u32; 4], domain: u32, v: u64) -> [u32; 4] {
        let mut s = [
            k[0] ^ v as u32,
            k[1] ^ (v >> 32) as u32,
            k[2] ^ domain,
            k[3],
        ];
        for t in 1..=12u32 {
            round(&mut s, t.wrapping_mul(0xBB67_AE85));
        }
        [0, 1, 2, 3].map(|j| s[j].wrapping_add(k[j]))
    }

    pub fn block(k: [u32; 4], kk: u32, b: u64) -> [u32; 4] {
        let g = b / (8 * u64::from(kk));
        let r = b % (8 * u64::from(kk));
        let (j, lane) = (r / 8, r % 8);
        let c = 8 * g + lane;
        let mut s = [k[0], k[1] ^ kk, k[2] ^ c as u32, k[3] ^ (c >> 32) as u32];
        let mut out = [0; 4];
        for t in 1..=(9 + j as u32) {
            let y = round(&mut s, t.wrapping_mul(0x9E37_79B9));
            out = [0, 1, 2, 3].map(|q| s[q].wrapping_add(y[q]));
        }
        out
    }
}

#[test]
fn the_spec_text_defines_the_bits() {
    use phobos_tandem::{Key, Tandem};
    let seed = from_the_spec::derive([0; 4], u32::from_le_bytes(*b"seed"), 42);
    assert_eq!(Key::from_seed(42).words(), seed);
    let below = from_the_spec::derive(seed, u32::from_le_bytes(*b"sub\0"), 1);
    assert_eq!(Key::from_seed(42).sub(1).words(), below);
    let split = from_the_spec::derive(seed, u32::from_le_bytes(*b"splt"), 7);
    assert_eq!(Key::from_seed(42).split(7).words(), split);
    for k in [1u32, 8, 32, 4096] {
        let rng = Tandem::with_k(Key::from_words(seed), k).unwrap();
        for b in [0u64, 1, 7, 8, 9, 255, 256, 100_000, (1 << 35) + 3] {
            assert_eq!(
                rng.block(b),
                from_the_spec::block(seed, k, b),
                "K={k} b={b}"
            );
        }
    }
}
