//! The Tandem fill modules: naga validation, WGSL that parses back, and
//! SPIR-V (exact mode's post-processed words) that spirv-val accepts.

use phobos_gpu::Precision;
use phobos_gpu::tandem::{FillMap, fill_compiled, fill_spirv};

const MAPS: [FillMap; 4] = [FillMap::Raw, FillMap::F16, FillMap::F32, FillMap::F64];

#[test]
fn fill_modules_validate_and_parse_back() {
    for map in MAPS {
        let (module, info) = fill_compiled(map).expect("validates");
        let text = phobos_gpu::wgsl(&module, &info);
        let back = naga::front::wgsl::parse_str(&text)
            .unwrap_or_else(|e| panic!("{map:?}: WGSL does not parse back: {e}\n{text}"));
        naga::valid::Validator::new(
            naga::valid::ValidationFlags::all(),
            naga::valid::Capabilities::empty(),
        )
        .validate(&back)
        .expect("the parsed-back module validates");
        // One vec4 store per step, the only store to the output.
        assert_eq!(text.matches("out[").count(), 1, "{text}");
    }
}

#[test]
fn fill_spirv_passes_spirv_val() {
    for map in MAPS {
        for precision in [Precision::Exact, Precision::Fast] {
            let words = fill_spirv(map, precision).unwrap();
            let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
            let dir = std::env::temp_dir().join(format!("phobos-tandem-{}", std::process::id()));
            std::fs::create_dir_all(&dir).unwrap();
            let file = dir.join(format!("{}-{precision:?}.spv", map.name()));
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
                "spirv-val rejected the {map:?} fill ({precision:?}): {}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
}
