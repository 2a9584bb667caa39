//! The web playground's compiler: one entry point, [`handle`], that takes a
//! JSON request (plus a binary blob for tensor data) and returns a JSON
//! answer (plus a blob), so that the page drives the compiler core through a string in and
//! a string out. The same function is the wasm export (`wasm.rs`, raw
//! `extern "C"` functions and 60 lines of JavaScript glue in
//! `web/src/wasm.js`; no wasm-bindgen, see `playground/README.md`) and the
//! host API the tests call.
//!
//! The requests (`op`):
//! - `check { source }`: diagnostics as data, with spans in UTF-16 offsets
//!   for the editor, and each kernel's parameters, dims and tuning space
//!   (`diag.rs`);
//! - `build { source, kernel?, config? }`: the kernel lowered to WGSL exactly
//!   as `phobosc build` writes it, with the layout and the grid;
//! - `run { source, kernel?, config?, dims?, args? }`: the kernel on the
//!   reference interpreter, on generated inputs (`phobos_core::inputs`, as
//!   `phobosc run`), with the file's `// check` lines; outputs are 32-bit
//!   words in the blob (`launch.rs`);
//! - `plan { ..., limits? }` (the same fields, and the device's
//!   `maxComputeWorkgroupStorageSize` and `maxComputeInvocationsPerWorkgroup`
//!   to plan within, WebGPU's defaults where absent): everything the page
//!   needs to run the kernel on WebGPU: the WGSL, the uniform block, the
//!   buffers and their initial contents, the workgroups to dispatch and the
//!   workgroup memory planned within;
//! - `figure { name, shape, elem, shading? }`, with the tensor's 32-bit
//!   words as the request's blob: the tile figure (`phobos_core::figure`,
//!   which Python's `phobos.figure` draws with too) as SVG text, its legend
//!   and its caption.
//!
//! Nothing here panics on any input: malformed requests, sources that do not
//! compile and launches over the bounds (`phobos_core::bounds::playground`)
//! are answered with `"ok": false` and a message.

mod diag;
mod launch;
#[cfg(target_arch = "wasm32")]
mod wasm;

pub use launch::{Prepared, prepare, words, work};

use serde::Deserialize;
use serde_json::{Value as Json, json};
use std::collections::BTreeMap;

/// The name the user's source is shown under in diagnostics.
pub const SOURCE_NAME: &str = "playground.ph";

/// An answer: the JSON text and the binary data its `offset`/`bytes` fields
/// point into.
#[derive(Clone, Debug, Default)]
pub struct Response {
    pub json: Json,
    pub blob: Vec<u8>,
}

impl Response {
    /// `{"ok": false, "error": message}`.
    pub fn fail(message: impl Into<String>) -> Response {
        Response {
            json: json!({ "ok": false, "error": message.into() }),
            blob: Vec::new(),
        }
    }

    /// `{"ok": false, "error": message, "interpreter": true}`: a `plan`
    /// this device's WebGPU cannot take (a kernel the GPU backend does not
    /// lower, or whose arrays exceed the device's limits), where the page
    /// still runs the interpreter and says why WebGPU was not used.
    pub fn fail_on_gpu(message: impl Into<String>) -> Response {
        Response {
            json: json!({ "ok": false, "error": message.into(), "interpreter": true }),
            blob: Vec::new(),
        }
    }

    /// The answer as the wasm export returns it: the JSON's length as a
    /// little-endian u32, the JSON, padding to a multiple of 4 bytes, then
    /// the blob (whose offsets count from its own start).
    pub fn encode(&self) -> Vec<u8> {
        let text = self.json.to_string();
        let mut out = Vec::with_capacity(8 + text.len() + self.blob.len());
        out.extend_from_slice(&(text.len() as u32).to_le_bytes());
        out.extend_from_slice(text.as_bytes());
        while out.len() % 4 != 0 {
            out.push(b' ');
        }
        out.extend_from_slice(&self.blob);
        out
    }
}

#[derive(Deserialize)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
enum Request {
    Check {
        source: String,
    },
    Build {
        source: String,
        #[serde(default)]
        kernel: Option<String>,
        #[serde(default)]
        config: BTreeMap<String, i64>,
    },
    Run(LaunchRequest),
    Plan(LaunchRequest),
    Figure {
        name: String,
        shape: Vec<u64>,
        elem: String,
        #[serde(default)]
        shading: Option<String>,
    },
}

/// A launch: the kernel, its configuration, the extent of each symbolic dim
/// and the scalar arguments (those left out are 0, as in `phobosc run`).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LaunchRequest {
    pub source: String,
    #[serde(default)]
    pub kernel: Option<String>,
    #[serde(default)]
    pub config: BTreeMap<String, i64>,
    #[serde(default)]
    pub dims: BTreeMap<String, Json>,
    #[serde(default)]
    pub args: BTreeMap<String, Json>,
    /// The WebGPU device's limits a `plan` is made within (the page asks
    /// its adapter for them when it opens the device); WebGPU's defaults
    /// where left out, as `phobosc build` plans.
    #[serde(default)]
    pub limits: Limits,
}

/// Limits of the device a `plan` is for, by WebGPU's names.
#[derive(Clone, Copy, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Limits {
    /// `maxComputeWorkgroupStorageSize`: the workgroup memory the plan may
    /// use (16,384 bytes by default).
    #[serde(default)]
    pub max_compute_workgroup_storage_size: Option<u64>,
    /// `maxComputeInvocationsPerWorkgroup` (256 by default): the most
    /// invocations the workgroup-size heuristic may give a workgroup.
    #[serde(default)]
    pub max_compute_invocations_per_workgroup: Option<u32>,
}

/// Answers one JSON request (see the crate documentation).
pub fn handle(request: &str) -> Response {
    handle_with(request, &[])
}

/// Answers one JSON request whose tensor data (a `figure`'s words) is
/// `blob`, 32-bit little-endian words.
pub fn handle_with(request: &str, blob: &[u8]) -> Response {
    let request: Request = match serde_json::from_str(request) {
        Ok(r) => r,
        Err(e) => return Response::fail(format!("malformed request: {e}")),
    };
    match request {
        Request::Check { source } => Response {
            json: diag::check(&source),
            blob: Vec::new(),
        },
        Request::Build {
            source,
            kernel,
            config,
        } => launch::build(&source, kernel.as_deref(), &config),
        Request::Run(r) => launch::run(&r),
        Request::Plan(r) => launch::plan(&r),
        Request::Figure {
            name,
            shape,
            elem,
            shading,
        } => figure(&name, &shape, &elem, shading.as_deref(), blob),
    }
}

/// The tile figure of a tensor given as words.
fn figure(name: &str, shape: &[u64], elem: &str, shading: Option<&str>, blob: &[u8]) -> Response {
    let Some(elem) = phobos_core::types::Scalar::from_name(elem) else {
        return Response::fail(format!("unknown element type `{elem}`"));
    };
    if !blob.len().is_multiple_of(4) {
        return Response::fail("the figure's data is not whole 32-bit words");
    }
    let words: Vec<u32> = blob
        .chunks_exact(4)
        .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
        .collect();
    let mut vals = phobos_core::figure::values(elem, &words);
    // An odd count of 16-bit elements ends in a padded half.
    let count = shape.iter().try_fold(1u64, |n, &d| n.checked_mul(d));
    if elem.is_half() && count.is_some_and(|n| vals.len() as u64 == n + 1) {
        vals.pop();
    }
    let mut fig = match phobos_core::figure::Figure::new(name, shape, &vals) {
        Ok(f) => f,
        Err(e) => return Response::fail(e),
    };
    if let Some(s) = shading {
        match phobos_core::figure::Shading::from_name(s) {
            Some(s) => fig = fig.with_shading(s),
            None => return Response::fail(format!("unknown shading `{s}`")),
        }
    }
    let (rows, cols) = fig.grid();
    Response {
        json: json!({
            "ok": true,
            "svg": fig.tile_svg(),
            "legend": fig.legend_svg(),
            "caption": fig.caption(),
            "shading": fig.shading().name(),
            "rows": rows,
            "cols": cols,
        }),
        blob: Vec::new(),
    }
}

/// [`handle`] for a request given as JSON, answering JSON only: what tests
/// and the server's own checks use when they need no blob.
pub fn handle_json(request: &Json) -> Json {
    handle(&request.to_string()).json
}
