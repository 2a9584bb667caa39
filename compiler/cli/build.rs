//! Embeds the playground's built assets (`playground/dist/`, made by
//! `playground/build.sh`) into `phobosc`, for `phobosc serve`. When they
//! have not been built, `phobosc` builds without them and `serve` says how
//! to build them.

use std::fmt::Write as _;
use std::path::Path;

/// The files of the page, with the content type each is served with.
const ASSETS: &[(&str, &str)] = &[
    ("index.html", "text/html; charset=utf-8"),
    ("style.css", "text/css; charset=utf-8"),
    ("app.js", "text/javascript; charset=utf-8"),
    ("worker.js", "text/javascript; charset=utf-8"),
    ("phobos_playground.wasm", "application/wasm"),
];

fn main() {
    let manifest = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let playground = Path::new(&manifest).join("../../playground");
    let dist = playground.join("dist");
    let present = ASSETS.iter().all(|(f, _)| dist.join(f).is_file());
    let mut code = String::from("/// The playground's files: name, content type, bytes.\n");
    if present {
        code.push_str("pub const ASSETS: &[(&str, &str, &[u8])] = &[\n");
        for (file, mime) in ASSETS {
            let path = dist.join(file).canonicalize().expect("the asset exists");
            println!("cargo:rerun-if-changed={}", path.display());
            let _ = writeln!(
                code,
                "    ({file:?}, {mime:?}, include_bytes!({:?})),",
                path.display().to_string()
            );
        }
        code.push_str("];\n");
    } else {
        // Rerun once dist/ appears: the playground directory changes then.
        println!("cargo:rerun-if-changed={}", playground.display());
        code.push_str("pub const ASSETS: &[(&str, &str, &[u8])] = &[];\n");
    }
    let out = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    std::fs::write(Path::new(&out).join("assets.rs"), code).expect("OUT_DIR is writable");
}
