//! The playground and `phobosc serve`: the page's WGSL is the WGSL `phobosc
//! build` writes, and the server answers (or, built without the page's
//! assets, says how to build them). The page itself is tested in a browser
//! by `playground/web/tests/browser.mjs`.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[test]
fn the_playground_shows_the_wgsl_phobosc_build_writes() {
    let out = tempfile::tempdir().unwrap();
    for (file, configs) in [
        ("playground/examples/random_tile.ph", vec![None]),
        ("examples/dropout_rows.ph", vec![None]),
        (
            "playground/examples/tandem_noise.ph",
            vec![Some(16), Some(64)],
        ),
    ] {
        let source = std::fs::read_to_string(root().join(file)).unwrap();
        for r in configs {
            let mut args = vec![
                "build".to_string(),
                file.to_string(),
                "-o".to_string(),
                out.path().display().to_string(),
                "--target".to_string(),
                "wgsl".to_string(),
            ];
            let mut config = serde_json::Map::new();
            if let Some(r) = r {
                args.push("--config".to_string());
                args.push(format!("R={r}"));
                config.insert("R".to_string(), r.into());
            }
            let status = Command::new(env!("CARGO_BIN_EXE_phobosc"))
                .args(&args)
                .current_dir(root())
                .output()
                .unwrap();
            assert!(status.status.success(), "{status:?}");
            let manifest: serde_json::Value =
                serde_json::from_slice(&std::fs::read(out.path().join("manifest.json")).unwrap())
                    .unwrap();
            let wgsl_file = manifest["kernels"][0]["configurations"][0]["wgsl"]
                .as_str()
                .unwrap();
            let built = std::fs::read_to_string(out.path().join(wgsl_file)).unwrap();
            let page = phobos_playground::handle_json(
                &serde_json::json!({"op": "build", "source": source, "config": config}),
            );
            assert_eq!(page["ok"], true, "{page}");
            assert_eq!(
                page["wgsl"].as_str().unwrap(),
                built,
                "{file} {r:?}: the page's WGSL differs from phobosc build's"
            );
        }
    }
}

/// One HTTP/1.1 request; the status code and the body.
fn http(port: u16, request: &str) -> (u16, String) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.write_all(request.as_bytes()).unwrap();
    let mut bytes = Vec::new();
    s.read_to_end(&mut bytes).unwrap();
    let text = String::from_utf8_lossy(&bytes);
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let body = text.split_once("\r\n\r\n").map_or("", |(_, b)| b);
    (status, body.to_string())
}

#[test]
fn serve_answers_on_loopback_or_says_how_to_build_the_page() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_phobosc"))
        .args(["serve", "--port", "0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    if line.is_empty() {
        let status = child.wait().unwrap();
        let mut err = String::new();
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut err)
            .unwrap();
        assert!(!status.success());
        assert!(err.contains("playground/build.sh"), "{err}");
        assert!(
            std::env::var("CI").is_err(),
            "CI builds the playground's assets first: {err}"
        );
        eprintln!("skipping the server test: phobosc was built without the page ({err})");
        return;
    }
    let url = line.trim().rsplit(' ').next().unwrap().to_string();
    assert!(url.starts_with("http://127.0.0.1:"), "{line}");
    let port: u16 = url
        .trim_end_matches('/')
        .rsplit(':')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let get = |path: &str| {
        http(
            port,
            &format!("GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"),
        )
    };
    let post = |body: &str| {
        http(
            port,
            &format!(
                "POST /api/run HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
                body.len()
            ),
        )
    };
    let (status, body) = get("/");
    assert_eq!(status, 200);
    assert!(body.contains("Phobos playground"));
    assert_eq!(get("/phobos_playground.wasm").0, 200);
    assert_eq!(get("/nope.txt").0, 404);
    let (status, body) = post("{not json");
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("malformed request"), "{body}");
    let source =
        std::fs::read_to_string(root().join("playground/examples/random_tile.ph")).unwrap();
    let request =
        serde_json::json!({"source": source, "dims": {"ROWS": 8, "COLS": 32}, "args": {"seed": 1}});
    let (status, body) = post(&request.to_string());
    assert_eq!(status, 200, "{body}");
    let answer: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(answer["ok"], true, "{answer}");
    let words = answer["outputs"][0]["words"].as_array().unwrap();
    let mean = words
        .iter()
        .map(|w| f32::from_bits(w.as_u64().unwrap() as u32) as f64)
        .sum::<f64>()
        / words.len() as f64;
    assert_eq!(format!("{mean:.3}"), "0.513");
    let huge =
        serde_json::json!({"source": source, "dims": {"ROWS": 1u64 << 30, "COLS": 1u64 << 30}});
    let (_, body) = post(&huge.to_string());
    assert!(body.contains("bound"), "{body}");
    // Still serving.
    assert_eq!(get("/").0, 200);
    child.kill().unwrap();
    child.wait().unwrap();
}
