//! The stdlib written again in plain Rust, from the seed's definitions, so
//! that known-answer tests compare the Phobos source against an independent
//! transcription.

/// lowbias32 on the i32 bit pattern.
pub fn hash32(x: i32) -> i32 {
    let mut x = x as u32;
    x ^= x >> 16;
    x = x.wrapping_mul(0x7feb_352d);
    x ^= x >> 15;
    x = x.wrapping_mul(0x846c_a68b);
    x ^= x >> 16;
    x as i32
}

pub fn uniform(seed: i32, counter: i32) -> f32 {
    ((hash32(counter ^ hash32(seed)) & 0x7f_ffff) as f32) * (1.0 / 8_388_608.0)
}

pub fn randn(seed: i32, counter: i32) -> f32 {
    let u1 = uniform(seed, counter.wrapping_mul(2));
    let u2 = uniform(seed, counter.wrapping_mul(2).wrapping_add(1));
    (-2.0 * log(1.0 - u1)).sqrt() * cos(c(0x40c9_0fdb) * u2)
}

pub fn dropout(x: f32, p: f32, seed: i32, counter: i32) -> f32 {
    if uniform(seed, counter) >= p {
        x / (1.0 - p)
    } else {
        0.0
    }
}

/// fdlibm's logf reduction and polynomial, in f32 operations only.
pub fn log(x: f32) -> f32 {
    if x == 0.0 {
        return f32::NEG_INFINITY;
    }
    if x < 0.0 || x.is_nan() {
        return f32::NAN;
    }
    if x == f32::INFINITY {
        return x;
    }
    let (x, k0) = if x < f32::MIN_POSITIVE {
        (x * 33_554_432.0, -25)
    } else {
        (x, 0)
    };
    let iy = (x.to_bits() as i32) + (0x3f80_0000 - 0x3f35_04f3);
    let k = k0 + ((iy >> 23) - 127);
    let f = f32::from_bits(((iy & 0x7f_ffff) + 0x3f35_04f3) as u32) - 1.0;
    let dk = k as f32;
    let s = f / (2.0 + f);
    let hfsq = 0.5 * f * f;
    let z = s * s;
    let w = z * z;
    let r = z * (c(0x3f2a_aaaa) + w * c(0x3e91_e9ee)) + w * (c(0x3ecc_ce13) + w * c(0x3e78_9e26));
    s * (hfsq + r) + dk * c(0x3717_f7d1) - hfsq + f + dk * c(0x3f31_7180)
}

/// Cephes' cosf: octant reduction with a three-part pi/4, then a polynomial.
pub fn cos(x: f32) -> f32 {
    let xa = x.abs();
    if xa == f32::INFINITY || x.is_nan() {
        return f32::NAN;
    }
    let mut j = (xa * c(0x3fa2_f983)) as i32;
    j = j.wrapping_add(j & 1);
    let y = j as f32;
    let r = ((xa - y * c(0x3f49_0000)) - y * c(0x397d_a000)) - y * c(0x3322_2169);
    let q = j & 7;
    let z = r * r;
    let v = if q & 2 == 0 {
        ((c(0x37cc_f5ce) * z - c(0x3ab6_061a)) * z + c(0x3d2a_aaa5)) * z * z - 0.5 * z + 1.0
    } else {
        ((-c(0x394c_a1f9) * z + c(0x3c08_839e)) * z - c(0x3e2a_aaa3)) * z * r + r
    };
    if q == 2 || q == 4 { -v } else { v }
}

/// An f32 constant by its bits, as fdlibm and Cephes publish them.
fn c(bits: u32) -> f32 {
    f32::from_bits(bits)
}
