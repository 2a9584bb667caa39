//! The Tandem fill modules (and the misses modules of the bounded fills):
//! naga validation, WGSL that parses back, and SPIR-V (exact mode's
//! post-processed words) that spirv-val accepts.

use phobos_gpu::Precision;
use phobos_gpu::tandem::{FillMap, Kernel, fill_compiled, kernel_spirv, misses_compiled};

const MAPS: [FillMap; 13] = FillMap::ALL;

fn kernels(map: FillMap) -> Vec<Kernel> {
    if map.has_misses() {
        vec![Kernel::Fill, Kernel::Misses]
    } else {
        vec![Kernel::Fill]
    }
}

#[test]
fn fill_modules_validate_and_parse_back() {
    for map in MAPS {
        for kernel in kernels(map) {
            let (module, info) = match kernel {
                Kernel::Fill => fill_compiled(map, 32),
                Kernel::Misses => misses_compiled(map),
            }
            .expect("validates");
            let text = phobos_gpu::wgsl(&module, &info);
            let back = naga::front::wgsl::parse_str(&text)
                .unwrap_or_else(|e| panic!("{map:?}: WGSL does not parse back: {e}\n{text}"));
            // The f64 maps compute in f64 (SHADER_F64).
            let caps = match map.needs_f64() {
                true => naga::valid::Capabilities::FLOAT64,
                false => naga::valid::Capabilities::empty(),
            };
            naga::valid::Validator::new(naga::valid::ValidationFlags::all(), caps)
                .validate(&back)
                .expect("the parsed-back module validates");
            // The fill kernel stores each step's output words as vectors (one
            // store for a block of four words, 8 for bools), the misses kernel
            // one or two words; the f64 maps store a block's two f64 values
            // as one vec2<f64>, and normal_f64's fill kernel also stores a
            // miss it resolves in place when its workgroup lists its misses.
            let stores = text.matches("out[").count() as u32;
            let want = match kernel {
                Kernel::Fill if map == FillMap::NormalF64 => 2,
                Kernel::Fill if map.needs_f64() => 1,
                Kernel::Fill => map.out_words().div_ceil(4),
                Kernel::Misses if map.needs_f64() => 1,
                Kernel::Misses => 1 + u32::from(map != FillMap::Below32),
            };
            assert_eq!(stores, want, "{map:?} {kernel:?}: {text}");
        }
    }
}

#[test]
fn fill_spirv_passes_spirv_val() {
    for map in MAPS {
        for kernel in kernels(map) {
            for (precision, wide_div, int64, subgroup_shuffle) in [
                (Precision::Exact, false, false, false),
                (Precision::Exact, true, true, false),
                (Precision::Exact, true, true, true),
                (Precision::Fast, false, false, false),
            ] {
                let options = phobos_gpu::GpuOptions {
                    precision,
                    wide_div,
                    int64,
                    subgroup_shuffle,
                    ..Default::default()
                };
                let words = kernel_spirv(map, kernel, 32, &options).unwrap();
                let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
                let dir =
                    std::env::temp_dir().join(format!("phobos-tandem-{}", std::process::id()));
                std::fs::create_dir_all(&dir).unwrap();
                let file = dir.join(format!(
                    "{}-{kernel:?}-{precision:?}-{wide_div}-{int64}-{subgroup_shuffle}.spv",
                    map.name()
                ));
                std::fs::write(&file, bytes).unwrap();
                let out = match std::process::Command::new("spirv-val")
                    .args(["--target-env", "vulkan1.1"])
                    .arg(&file)
                    .output()
                {
                    Ok(o) => o,
                    Err(_) => {
                        eprintln!("skipped: spirv-val not found (apt-get install spirv-tools)");
                        return;
                    }
                };
                assert!(
                    out.status.success(),
                    "spirv-val rejected the {map:?} {kernel:?} kernel ({precision:?}, wide {wide_div}): {}{}",
                    String::from_utf8_lossy(&out.stdout),
                    String::from_utf8_lossy(&out.stderr)
                );
            }
        }
    }
}

/// Where subgroups are 32 wide, the fills bound by their stores (the raw
/// stream and the uniform floats) exchange a batch of four blocks with four
/// shuffles after one vote (`tandem/shuffle.rs`); the others, and every
/// misses kernel, do not.
#[test]
fn fills_exchange_blocks_where_subgroups_are_32_wide() {
    const ALL: u32 = 334;
    const SHUFFLE_XOR: u32 = 346;
    let shuffled = [FillMap::Raw, FillMap::F16, FillMap::F32, FillMap::F64];
    for map in MAPS {
        for kernel in kernels(map) {
            for subgroup_shuffle in [false, true] {
                let options = phobos_gpu::GpuOptions {
                    precision: Precision::Exact,
                    wide_div: true,
                    int64: true,
                    subgroup_shuffle,
                    ..Default::default()
                };
                let words = kernel_spirv(map, kernel, 32, &options).unwrap();
                let count = |want: u32| {
                    let (mut i, mut n) = (5, 0);
                    while i < words.len() {
                        n += u32::from(words[i] & 0xffff == want);
                        i += (words[i] >> 16) as usize;
                    }
                    n
                };
                let on = subgroup_shuffle && kernel == Kernel::Fill && shuffled.contains(&map);
                let what = format!("{map:?} {kernel:?} shuffle {subgroup_shuffle}");
                assert_eq!(count(ALL), u32::from(on), "{what}");
                assert_eq!(count(SHUFFLE_XOR), if on { 4 } else { 0 }, "{what}");
            }
        }
    }
}
