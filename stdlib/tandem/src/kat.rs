//! The known-answer vectors: a text rendering of keys, stream blocks, the
//! first elements of every fill, the elementary functions and the ziggurat
//! table. `kat.txt` holds the expected text (checked by a test) and SPEC.md
//! quotes it; a port renders the same text from its own code and diffs it.

use crate::alias::AliasTable;
use crate::key::{Key, PURPOSE_BELOW, PURPOSE_NORMAL64};
use crate::math::{self, cos_sin_turn_f32, exp_neg_f64, neg_ln_u32, neg_ln_u64};
use crate::tandem::Tandem;
use crate::ziggurat::{self, LAYERS};

fn hex_words(w: &[u32]) -> String {
    w.iter()
        .map(|x| format!("{x:08x}"))
        .collect::<Vec<_>>()
        .join(" ")
}

fn hex_u64(w: &[u64]) -> String {
    w.iter()
        .map(|x| format!("{x:016x}"))
        .collect::<Vec<_>>()
        .join(" ")
}

fn f32s(v: &[f32]) -> String {
    v.iter()
        .map(|x| format!("{:08x}({x:e})", x.to_bits()))
        .collect::<Vec<_>>()
        .join(" ")
}

fn f64s(v: &[f64]) -> String {
    v.iter()
        .map(|x| format!("{:016x}({x:e})", x.to_bits()))
        .collect::<Vec<_>>()
        .join(" ")
}

fn ints<T: std::fmt::Display>(v: &[T]) -> String {
    v.iter()
        .map(|x| x.to_string())
        .collect::<Vec<_>>()
        .join(" ")
}

/// FNV-1a over the little-endian bytes of the words, a table checksum that
/// needs no library in any language.
pub fn fnv1a64(words: impl Iterator<Item = u64>) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for w in words {
        for byte in w.to_le_bytes() {
            h = (h ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    h
}

/// Renders every vector. Elements are `name[start..end]`; floats are shown
/// as their bits followed by the value.
pub fn render() -> String {
    let mut s = String::new();
    let mut line = |l: String| {
        s.push_str(&l);
        s.push('\n');
    };
    let seed42 = Key::from_seed(42);
    line("keys (words 0..3)".into());
    for (name, k) in [
        ("from_seed(0)", Key::from_seed(0)),
        ("from_seed(1)", Key::from_seed(1)),
        ("from_seed(42)", seed42),
        (
            "from_seed(42).sub(PURPOSE_BELOW = 1)",
            seed42.sub(PURPOSE_BELOW),
        ),
        (
            "from_seed(42).sub(PURPOSE_NORMAL64 = 2)",
            seed42.sub(PURPOSE_NORMAL64),
        ),
        ("from_seed(42).split(0)", seed42.split(0)),
        ("from_seed(42).split(7)", seed42.split(7)),
    ] {
        line(format!("  {name} = {}", hex_words(&k.words())));
    }

    let zero = Tandem::new(Key::from_words([0; 4]));
    line("blocks of key 00000000 00000000 00000000 00000000, K = 32".into());
    for b in [0u64, 1, 7, 8, 255, 256, 1 << 40] {
        line(format!("  block {b} = {}", hex_words(&zero.block(b))));
    }

    let r = Tandem::new(seed42);
    line("fills of from_seed(42), K = 32 unless stated".into());
    let mut w = [0u32; 8];
    r.fill_u32(&mut w, 0).unwrap();
    line(format!("  u32[0..8] = {}", hex_words(&w)));
    r.fill_u32(&mut w, 1_000_003).unwrap();
    line(format!("  u32[1000003..1000011] = {}", hex_words(&w)));
    for k in [1, 8, 4096] {
        Tandem::with_k(seed42, k)
            .unwrap()
            .fill_u32(&mut w, 0)
            .unwrap();
        line(format!("  K = {k}: u32[0..8] = {}", hex_words(&w)));
        Tandem::with_k(seed42, k)
            .unwrap()
            .fill_u32(&mut w, 32)
            .unwrap();
        line(format!("  K = {k}: u32[32..40] = {}", hex_words(&w)));
    }
    let mut b8 = [0u8; 8];
    r.fill_u8(&mut b8, 0).unwrap();
    line(format!("  u8[0..8] = {}", ints(&b8)));
    let mut h = [0u16; 4];
    r.fill_u16(&mut h, 0).unwrap();
    line(format!("  u16[0..4] = {}", ints(&h)));
    let mut d = [0u64; 4];
    r.fill_u64(&mut d, 0).unwrap();
    line(format!("  u64[0..4] = {}", hex_u64(&d)));
    let mut h8 = [0u16; 8];
    r.fill_f16_bits(&mut h8, 0).unwrap();
    line(format!(
        "  f16_bits[0..8] = {}",
        h8.iter()
            .map(|x| format!("{x:04x}"))
            .collect::<Vec<_>>()
            .join(" ")
    ));
    let mut f = [0f32; 4];
    r.fill_f32(&mut f, 0).unwrap();
    line(format!("  f32[0..4] = {}", f32s(&f)));
    let mut g = [0f64; 4];
    r.fill_f64(&mut g, 0).unwrap();
    line(format!("  f64[0..4] = {}", f64s(&g)));
    let mut bits = [false; 64];
    r.fill_bool(&mut bits, 0).unwrap();
    line(format!(
        "  bool[0..64] = {}",
        bits.iter()
            .map(|&x| if x { '1' } else { '0' })
            .collect::<String>()
    ));
    r.fill_below_u32(&mut w, 0, 1000).unwrap();
    line(format!("  below_u32(1000)[0..8] = {}", ints(&w)));
    r.fill_below_u32(&mut w, 0, (1 << 31) + 1).unwrap();
    line(format!("  below_u32(2^31 + 1)[0..8] = {}", ints(&w)));
    r.fill_below_u64(&mut d, 0, u64::MAX - 1).unwrap();
    line(format!("  below_u64(2^64 - 2)[0..4] = {}", ints(&d)));
    r.fill_below_u64(&mut d, 0, (1 << 63) + 1).unwrap();
    line(format!("  below_u64(2^63 + 1)[0..4] = {}", ints(&d)));
    let mut i32s = [0i32; 8];
    r.fill_below_i32(&mut i32s, 0, -10, 21).unwrap();
    line(format!(
        "  below_i32(low -10, n 21)[0..8] = {}",
        ints(&i32s)
    ));
    let mut i64s = [0i64; 4];
    r.fill_below_i64_u32(&mut i64s, 0, -(1 << 40), 6).unwrap();
    line(format!(
        "  below_i64_u32(low -2^40, n 6)[0..4] = {}",
        ints(&i64s)
    ));
    r.fill_below_i64(&mut i64s, 0, i64::MIN, u64::MAX).unwrap();
    line(format!(
        "  below_i64(low -2^63, n 2^64 - 1)[0..4] = {}",
        ints(&i64s)
    ));
    let mut z32 = [0f32; 8];
    r.fill_normal_f32(&mut z32, 0).unwrap();
    line(format!("  normal_f32[0..8] = {}", f32s(&z32)));
    let mut z64 = [0f64; 8];
    r.fill_normal_f64(&mut z64, 0).unwrap();
    line(format!("  normal_f64[0..8] = {}", f64s(&z64)));
    let table = ziggurat::table();
    let misses: Vec<u64> = (0..)
        .filter(|&i| ziggurat::fast(table, r.draw_u64(i)).is_none())
        .take(4)
        .collect();
    for i in misses {
        line(format!(
            "  normal_f64[{i}] (a miss) = {}",
            f64s(&[r.normal_f64(i)])
        ));
    }
    r.fill_exponential_f32(&mut f, 0).unwrap();
    line(format!("  exponential_f32[0..4] = {}", f32s(&f)));
    r.fill_exponential_f64(&mut g, 0).unwrap();
    line(format!("  exponential_f64[0..4] = {}", f64s(&g)));
    let alias = AliasTable::new(&[1.0, 2.0, 3.0, 4.0]).unwrap();
    let mut c = [0u32; 16];
    r.fill_choice(&mut c, 0, &alias).unwrap();
    line(format!("  choice([1, 2, 3, 4])[0..16] = {}", ints(&c)));

    line("alias table of weights [1, 2, 3, 4] (threshold, alias)".into());
    for col in 0..alias.len() {
        let (t, a) = alias.column(col);
        line(format!("  column {col} = {t:016x} {a}"));
    }

    line("constants of the elementary functions (bits)".into());
    let c64 = |v: &[f64]| {
        v.iter()
            .map(|x| format!("{:016x}", x.to_bits()))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let c32 = |v: &[f32]| {
        v.iter()
            .map(|x| format!("{:08x}", x.to_bits()))
            .collect::<Vec<_>>()
            .join(" ")
    };
    line(format!(
        "  LN_SERIES_F64 (2/3, 2/5, ..., 2/19) = {}",
        c64(&math::LN_SERIES_F64)
    ));
    line(format!(
        "  LOG1P_Q_F32 (Q of ln(1 + t) = t + t^2 Q(t), constant first) = {}",
        c32(&math::LOG1P_Q_F32)
    ));
    line(format!(
        "  EXP_SERIES_F64 (1/0!, ..., 1/13!) = {}",
        c64(&math::EXP_SERIES_F64)
    ));
    line(format!(
        "  SIN_SERIES_F32 (-1/3!, 1/5!, -1/7!, 1/9!) = {}",
        c32(&math::SIN_SERIES_F32)
    ));
    line(format!(
        "  COS_SERIES_F32 (-1/2!, 1/4!, ..., -1/10!) = {}",
        c32(&math::COS_SERIES_F32)
    ));
    line("elementary functions".into());
    for x in [
        0u32,
        1,
        0x8000_0000,
        0xB504_F332,
        0xB504_F333,
        0xFFFF_FFFE,
        0x1234_5678,
        0xDEAD_BEEF,
    ] {
        line(format!(
            "  neg_ln_u32({x:08x}) = {}",
            f32s(&[neg_ln_u32(x)])
        ));
    }
    for x in [0u64, 1, 1 << 63, u64::MAX - 1, 0x0123_4567_89AB_CDEF] {
        line(format!(
            "  neg_ln_u64({x:016x}) = {}",
            f64s(&[neg_ln_u64(x)])
        ));
    }
    for h in [0.0, 0.5, 1.0, 9.125, 700.0] {
        line(format!("  exp_neg_f64({h}) = {}", f64s(&[exp_neg_f64(h)])));
    }
    for x in [0u32, 0x2000_0000, 0x4000_0000, 0x1234_5678, 0xDEAD_BEEF] {
        let (cos, sin) = cos_sin_turn_f32(x);
        line(format!(
            "  cos_sin_turn_f32({x:08x}) = {}",
            f32s(&[cos, sin])
        ));
    }

    line("ziggurat table".into());
    for i in [0, 1, 2, 512, LAYERS - 1, LAYERS] {
        line(format!(
            "  x[{i}] = {}  f[{i}] = {}",
            f64s(&[table.x[i]]),
            f64s(&[table.f[i]])
        ));
    }
    let sum = fnv1a64(table.x.iter().chain(table.f.iter()).map(|v| v.to_bits()));
    line(format!(
        "  fnv1a64(x[0..=1024] then f[0..=1024], little-endian bits) = {sum:016x}"
    ));
    s
}
