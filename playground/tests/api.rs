//! The playground's requests on the host: the same `handle` the wasm build
//! exports.

use phobos_core::bounds::playground::{MAX_GPU_WORK, MAX_TENSOR_BYTES, MAX_WORK};
use phobos_playground::{LaunchRequest, Response, handle, handle_json, handle_with, prepare};
use serde_json::{Value as Json, json};

const RANDOM_TILE: &str = include_str!("../examples/random_tile.ph");
const TANDEM_NOISE: &str = include_str!("../examples/tandem_noise.ph");
const DROPOUT_ROWS: &str = include_str!("../../examples/dropout_rows.ph");

fn words(r: &Response, output: &Json) -> Vec<u32> {
    let at = output["offset"].as_u64().unwrap() as usize;
    let n = output["bytes"].as_u64().unwrap() as usize;
    r.blob[at..at + n]
        .chunks(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fn tile(seed: i32, rows: u64, cols: u64) -> Response {
    let r = handle(
        &json!({"op": "run", "source": RANDOM_TILE, "dims": {"ROWS": rows, "COLS": cols}, "args": {"seed": seed}})
            .to_string(),
    );
    assert_eq!(r.json["ok"], true, "{}", r.json);
    r
}

fn mean(r: &Response, name: &str) -> f64 {
    let out = r.json["outputs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["name"] == name)
        .unwrap();
    let w = words(r, out);
    w.iter().map(|&b| f32::from_bits(b) as f64).sum::<f64>() / w.len() as f64
}

#[test]
fn the_seed_caption_holds_for_seed_1() {
    // The seed's caption: `uniform: 256 counters, mean 0.513`.
    let r = tile(1, 8, 32);
    assert_eq!(format!("{:.3}", mean(&r, "uniform")), "0.513");
    let checks = r.json["checks"].as_array().unwrap();
    assert_eq!(checks.len(), 3);
    for c in checks {
        assert_eq!(c["holds"], 256, "{c}");
        assert_eq!(c["total"], 256, "{c}");
    }
    // The narrow layout draws 192 counters, 0 to 191: the first 192 of the wide tile.
    let narrow = tile(1, 12, 16);
    let wide_out = &r.json["outputs"][0];
    let narrow_out = &narrow.json["outputs"][0];
    assert_eq!(narrow_out["shape"], json!([12, 16]));
    assert_eq!(words(&narrow, narrow_out)[..], words(&r, wide_out)[..192]);
    // Other seeds draw other tiles.
    assert_ne!(
        words(&tile(2, 8, 32), &tile(2, 8, 32).json["outputs"][0]),
        words(&r, wide_out)
    );
}

#[test]
fn the_figure_of_a_run_is_the_seed_figure() {
    // A run's output words, given back as a `figure` request's blob, draw
    // the tile (a rect a cell) and give the seed's caption.
    let r = tile(1, 8, 32);
    for out in r.json["outputs"].as_array().unwrap() {
        let blob: Vec<u8> = words(&r, out)
            .iter()
            .flat_map(|w| w.to_le_bytes())
            .collect();
        let request = json!({"op": "figure", "name": out["name"], "shape": out["shape"], "elem": out["elem"]});
        let fig = handle_with(&request.to_string(), &blob).json;
        assert_eq!(fig["ok"], true, "{fig}");
        assert_eq!(
            fig["shading"], out["name"],
            "the seed's names shade as themselves"
        );
        let svg = fig["svg"].as_str().unwrap();
        assert_eq!(svg.matches("<rect ").count(), 256);
        assert!(svg.contains(r#"data-rows="8" data-cols="32""#));
        if out["name"] == "uniform" {
            assert_eq!(
                fig["caption"],
                "uniform: 256 counters, mean 0.513; each a multiple of 2^-23 in [0, 1)."
            );
        }
    }
    // Words that do not fill the shape, an unknown type or shading, and a
    // request without its blob are refused.
    for (request, blob) in [
        (
            json!({"op": "figure", "name": "y", "shape": [2, 2], "elem": "f32"}),
            vec![0u8; 12],
        ),
        (
            json!({"op": "figure", "name": "y", "shape": [1], "elem": "f8"}),
            vec![0u8; 4],
        ),
        (
            json!({"op": "figure", "name": "y", "shape": [1], "elem": "f32", "shading": "x"}),
            vec![0u8; 4],
        ),
        (
            json!({"op": "figure", "name": "y", "shape": [1], "elem": "f32"}),
            vec![0u8; 3],
        ),
        (
            json!({"op": "figure", "name": "y", "shape": [1], "elem": "f32"}),
            vec![],
        ),
    ] {
        let answer = handle_with(&request.to_string(), &blob).json;
        assert_eq!(answer["ok"], false, "{request}: {answer}");
    }
}

#[test]
fn plan_runs_the_wgsl_phobosc_build_writes() {
    let build = handle_json(&json!({"op": "build", "source": RANDOM_TILE}));
    assert_eq!(build["ok"], true, "{build}");
    let plan = handle(
        &json!({"op": "plan", "source": RANDOM_TILE, "dims": {"ROWS": 8, "COLS": 30}, "args": {"seed": 3}})
            .to_string(),
    );
    assert_eq!(plan.json["ok"], true, "{}", plan.json);
    assert_eq!(plan.json["wgsl"], build["wgsl"]);
    assert_eq!(plan.json["specialized"], false);
    assert_eq!(plan.json["workgroups"], json!([1, 1, 1]));
    // The uniform block: seed 3, then ROWS and COLS, then the grid.
    let u = &plan.blob[..plan.json["uniform"]["bytes"].as_u64().unwrap() as usize];
    let word = |i: usize| u32::from_le_bytes(u[4 * i..4 * i + 4].try_into().unwrap());
    assert_eq!(
        (word(0), word(1), word(2), word(3), word(4), word(5)),
        (3, 8, 30, 1, 1, 1)
    );
    let buffers = plan.json["buffers"].as_array().unwrap();
    assert_eq!(buffers.len(), 3);
    assert!(
        buffers
            .iter()
            .all(|b| b["init"].is_null() && b["size"] == 960)
    );
    // Slices of rows a multiple of 4 long get a pipeline of their own,
    // which moves them 16 bytes at a time, as the runtime's does.
    let flat = "kernel flat(X: tensor<f32>[N], Y: tensor<f32>[N]) {\n  let i = ctx.block.x * 64\n  Y[i :+ 64] = X[i :+ 64] * 2.0\n}";
    for (n, quads) in [(96, true), (94, false)] {
        let plan = handle_json(&json!({"op": "plan", "source": flat, "dims": {"N": n}}));
        assert_eq!(plan["ok"], true, "{plan}");
        assert_eq!(plan["specialized"], quads, "{plan}");
        let wgsl = plan["wgsl"].as_str().unwrap();
        assert_eq!(wgsl.contains("array<vec4<f32>>"), quads, "{wgsl}");
    }
}

#[test]
fn inputs_are_those_phobosc_run_generates() {
    let plan = handle(
        &json!({"op": "plan", "source": DROPOUT_ROWS, "dims": {"M": 20}, "args": {"seed": 1}})
            .to_string(),
    );
    assert_eq!(plan.json["ok"], true, "{}", plan.json);
    let x = &plan.json["buffers"][0];
    assert_eq!(x["name"], "X");
    let data = &plan.blob[x["init"]["offset"].as_u64().unwrap() as usize..];
    let expected = phobos_core::inputs::tensor(phobos_core::types::Scalar::F32, &[20, 256]);
    for i in [0usize, 1, 5119] {
        let got = f32::from_le_bytes(data[4 * i..4 * i + 4].try_into().unwrap());
        assert_eq!(phobos_core::types::Value::F32(got), expected.get(i));
    }
    // cdiv(20, 16) blocks.
    assert_eq!(plan.json["grid"], json!([2, 1, 1]));
}

#[test]
fn tandem_noise_checks_on_the_interpreter() {
    let r = handle_json(
        &json!({"op": "run", "source": TANDEM_NOISE, "dims": {"M": 4}, "args": {"seed": 7}, "config": {"R": 64}}),
    );
    assert_eq!(r["ok"], true, "{r}");
    assert_eq!(r["checks"][0]["holds"], 1024, "{r}");
}

#[test]
fn diagnostics_point_into_the_source_in_utf16() {
    let source = "// é\nkernel k(Y: tensor<f32>[4]) {\n  Y[:] = 1.0 + true\n}\n";
    let r = handle_json(&json!({"op": "check", "source": source}));
    assert_eq!(r["ok"], false);
    let d = &r["diagnostics"][0];
    assert_eq!(d["code"], "E0103", "{d}");
    let label = &d["labels"][0];
    assert_eq!(label["user"], true);
    assert_eq!(label["line"], 3);
    let from = label["from"].as_u64().unwrap() as usize;
    let to = label["to"].as_u64().unwrap() as usize;
    let units: Vec<u16> = source.encode_utf16().collect();
    let text = String::from_utf16(&units[from..to]).unwrap();
    // The literal that cannot be bool, after a two-byte `é` on line 1.
    assert_eq!(text, "1.0", "in {d}");
    assert_eq!(label["col"], 10);
    assert!(d["rendered"].as_str().unwrap().contains("E0103"));
    // A clean file: no diagnostics, and the kernel described.
    let ok = handle_json(&json!({"op": "check", "source": RANDOM_TILE}));
    assert_eq!(ok["ok"], true, "{ok}");
    assert_eq!(ok["kernels"][0]["dims"], json!(["ROWS", "COLS"]));
    assert_eq!(ok["kernels"][0]["params"][3]["kind"], "scalar");
}

#[test]
fn bad_requests_are_answered_not_panicked() {
    for bad in [
        "",
        "{",
        "null",
        r#"{"op": "nope"}"#,
        r#"{"op": "check"}"#,
        r#"{"op": "check", "source": 3}"#,
        r#"{"op": "check", "source": "", "extra": 1}"#,
    ] {
        let r = handle(bad);
        assert_eq!(r.json["ok"], false, "{bad}");
        assert!(
            r.json["error"]
                .as_str()
                .unwrap()
                .starts_with("malformed request")
        );
    }
    let cases = [
        (json!({"op": "run", "source": RANDOM_TILE}), "not bound"),
        (
            json!({"op": "run", "source": RANDOM_TILE, "dims": {"ROWS": -1, "COLS": 2}}),
            "non-negative",
        ),
        (
            json!({"op": "run", "source": RANDOM_TILE, "dims": {"ROWS": 1, "COLS": 2, "Q": 1}}),
            "no dimension `Q`",
        ),
        (
            json!({"op": "run", "source": RANDOM_TILE, "dims": {"ROWS": 1, "COLS": 2}, "args": {"seed": "x"}}),
            "not a valid i32",
        ),
        (
            json!({"op": "run", "source": RANDOM_TILE, "dims": {"ROWS": 1, "COLS": 2}, "args": {"nope": 1}}),
            "`random_tile` has no parameter `nope`; its scalar parameters are seed",
        ),
        (
            json!({"op": "run", "source": RANDOM_TILE, "dims": {"ROWS": 1, "COLS": 2}, "args": {"uniform": 1}}),
            "`uniform` is a tensor, not a scalar",
        ),
        (
            json!({"op": "run", "source": RANDOM_TILE, "dims": {"ROWS": 1, "COLS": [2]}}),
            "dimension `COLS`: `[2]` is not a non-negative integer",
        ),
        (
            json!({"op": "run", "source": RANDOM_TILE, "kernel": "other", "dims": {}}),
            "no kernel named",
        ),
        (
            json!({"op": "run", "source": RANDOM_TILE, "config": {"R": 2}, "dims": {}}),
            "not a tuning parameter",
        ),
        (json!({"op": "run", "source": "// nothing"}), "no kernel"),
        (
            json!({"op": "build", "source": "kernel k(Y: tensor<f32>[4]) { Y = }"}),
            "E0002",
        ),
        // A huge tensor is refused before anything is allocated.
        (
            json!({"op": "plan", "source": RANDOM_TILE, "dims": {"ROWS": 1u64 << 40, "COLS": 1u64 << 40}}),
            "bound",
        ),
        (
            json!({"op": "run", "source": DROPOUT_ROWS, "dims": {"M": 1u64 << 24}}),
            "bound",
        ),
    ];
    for (req, want) in cases {
        let r = handle_json(&req);
        assert_eq!(r["ok"], false, "{req}");
        let e = r["error"].as_str().unwrap();
        assert!(e.contains(want), "{e:?} should say {want:?}");
    }
}

#[test]
fn a_long_run_is_refused_before_it_starts() {
    // 65,536 rows of dropout_rows: 64 MiB of tensors, within the memory
    // bound, but about 2^30 node evaluations.
    let r = handle_json(&json!({"op": "run", "source": DROPOUT_ROWS, "dims": {"M": 65536}}));
    assert_eq!(r["ok"], false);
    assert!(
        r["error"].as_str().unwrap().contains("expression nodes"),
        "{r}"
    );
    // The GPU plan of the same launch is fine.
    let p = handle_json(&json!({"op": "plan", "source": DROPOUT_ROWS, "dims": {"M": 65536}}));
    assert_eq!(p["ok"], true, "{}", p["error"]);
}

#[test]
fn encoded_responses_are_aligned() {
    let r = handle(r#"{"op": "check", "source": "kernel"}"#);
    let e = r.encode();
    let n = u32::from_le_bytes(e[..4].try_into().unwrap()) as usize;
    let text = std::str::from_utf8(&e[4..4 + n]).unwrap();
    assert_eq!(serde_json::from_str::<Json>(text).unwrap(), r.json);
    assert_eq!(e.len() % 4, 0);
}

/// Stepped Tandem blocks of 32 invocations run two to a workgroup
/// (`Compiled::blocks_per_workgroup`), so the plan dispatches half as many
/// workgroups as blocks, rounded up.
#[test]
fn plan_dispatches_the_workgroups_of_shared_blocks() {
    let source = include_str!("../examples/tandem_noise.ph");
    let plan = handle(
        &json!({"op": "plan", "source": source, "dims": {"M": 80}, "config": {"R": 16}, "args": {"seed": 1}})
            .to_string(),
    );
    assert_eq!(plan.json["ok"], true, "{}", plan.json);
    // 80 rows of 256 in blocks of 16 rows: 5 blocks, 3 workgroups.
    assert_eq!(plan.json["workgroups"], json!([3, 1, 1]));
}

/// Loops and reductions count in the interpreter's work bound: a loop of
/// 2^31 iterations over a tiny tile, a nested loop whose bound grows with
/// the enclosing loop's variable to 2^30, one whose bound the estimate
/// cannot follow (`%`), and a reduction over a long row in every element of
/// a large tile are refused before they start; small ones run, nested
/// loops whose bounds read an enclosing variable included (the fixture
/// `for_loop.ph` among them).
#[test]
fn loops_and_reductions_count_in_the_work_bound() {
    let refused = [
        "@grid(1)\nkernel k(Y: tensor<i32>[1]) {\n  var a: i32 = 0\n  for i in 0 .. 2147483647 {\n    a = a + 1\n  }\n  Y[0] = a\n}",
        "@grid(1)\nkernel k(Y: tensor<i32>[1]) {\n  var a: i32 = 0\n  for i in 0 .. 2 {\n    for j in 0 .. i * 1073741824 {\n      a = a + 1\n    }\n  }\n  Y[0] = a\n}",
        "@grid(1)\nkernel k(Y: tensor<i32>[1]) {\n  var a: i32 = 0\n  for i in 0 .. 2 {\n    for j in 0 .. i % 3 {\n      a = a + 1\n    }\n  }\n  Y[0] = a\n}",
        "kernel k(X: tensor<f32>[M, N], Y: tensor<f32>[M, N]) {\n  Y = X - sum(X, axis = 1)\n}",
    ];
    for (i, src) in refused.iter().enumerate() {
        let dims = if src.contains("M, N") {
            json!({"M": 4096, "N": 4096})
        } else {
            json!({})
        };
        let r = handle_json(&json!({"op": "run", "source": src, "dims": dims}));
        assert_eq!(r["ok"], false, "case {i}: {r}");
        assert!(
            r["error"].as_str().unwrap().contains("expression nodes"),
            "case {i}: {r}"
        );
    }
    let small = "@grid(1)\nkernel k(X: tensor<f32>[4, 8], Y: tensor<f32>[4, 1]) {\n  var a: tile<f32>[4, 1] = 0.0\n  for i in 0 .. 3 {\n    a = a + sum(X, axis = 1)\n  }\n  Y = a\n}";
    let r = handle_json(&json!({"op": "run", "source": small}));
    assert_eq!(r["ok"], true, "{r}");
    let nested = "@grid(1)\nkernel k(Y: tensor<i32>[1]) {\n  var a: i32 = 0\n  for i in 0 .. 5 {\n    for j in i - 1 .. 2 * i {\n      a = a + 1\n    }\n  }\n  Y[0] = a\n}";
    let r = handle(&json!({"op": "run", "source": nested}).to_string());
    assert_eq!(r.json["ok"], true, "{}", r.json);
    let y = r.json["outputs"].as_array().unwrap()[0].clone();
    // j runs over i - 1 .. 2i: 1 + 2 + 3 + 4 + 5 iterations.
    assert_eq!(words(&r, &y), [15]);
    let fixture = include_str!("../../tests/fixtures/ok/for_loop.ph");
    let r = handle_json(&json!({"op": "run", "source": fixture, "dims": {"M": 21, "N": 320}}));
    assert_eq!(r["ok"], true, "{r}");
}

/// `bounds::playground::MAX_TENSOR_BYTES` at its edge: a launch whose
/// tensors hold exactly 128 MiB is planned, one more element is refused
/// with the tensor's name and the bound.
#[test]
fn tensors_at_the_byte_bound_are_taken_and_one_element_more_is_refused() {
    let source =
        "kernel k(X: tensor<f32>[N], Y: tensor<u32>[M]) {\n  Y[0 :+ 1] = u32(X[0 :+ 1])\n}";
    let n = MAX_TENSOR_BYTES / 4 - 1;
    let at = handle_json(&json!({"op": "plan", "source": source, "dims": {"N": n, "M": 1}}));
    assert_eq!(at["ok"], true, "{}", at["error"]);
    let over = handle_json(&json!({"op": "plan", "source": source, "dims": {"N": n, "M": 2}}));
    assert_eq!(over["ok"], false);
    let e = over["error"].as_str().unwrap();
    assert!(e.contains("`Y` with shape [2]"), "{e}");
    assert!(e.contains("128 MiB, the playground's bound"), "{e}");
}

/// `bounds::playground::MAX_WORK` at its edge, for `dropout_rows`: the
/// largest `M` whose work is within the bound is prepared and measured
/// within it (running it would take the interpreter 2^28 evaluations, too
/// long for a test), and one row more is refused before it runs, with the
/// bound in the message.
#[test]
fn the_work_bound_refuses_one_row_past_its_edge() {
    let work = |m: u64| {
        let r: LaunchRequest =
            serde_json::from_value(json!({"source": DROPOUT_ROWS, "dims": {"M": m}})).unwrap();
        let p = prepare(&r).ok().unwrap();
        phobos_playground::work(&p)
    };
    // The last M within the bound, by bisection (work grows with M).
    // 2^16 rows: 128 MiB of tensors, within the byte bound, and over the
    // work bound.
    let (mut lo, mut hi) = (1u64, 1 << 16);
    assert!(work(lo) <= MAX_WORK && work(hi) > MAX_WORK);
    while hi - lo > 1 {
        let mid = (lo + hi) / 2;
        if work(mid) <= MAX_WORK {
            lo = mid
        } else {
            hi = mid
        }
    }
    let over = handle_json(&json!({"op": "run", "source": DROPOUT_ROWS, "dims": {"M": hi}}));
    assert_eq!(over["ok"], false);
    let e = over["error"].as_str().unwrap();
    assert!(
        e.contains(&format!("about {} expression nodes", work(hi))),
        "{e}"
    );
    assert!(
        e.contains(&format!("the playground's bound of {MAX_WORK}")),
        "{e}"
    );
    assert!(work(lo) <= MAX_WORK);
}

/// WebGPU launches keep `MAX_GPU_WORK`: nested loops over a dim whose
/// work is within it are planned, one more row is refused before anything
/// is dispatched, and so is a loop the measure cannot follow.
#[test]
fn webgpu_launches_past_the_gpu_work_bound_are_refused() {
    let looped = "@grid(1)\nkernel k(X: tensor<i32>[N], Y: tensor<i32>[1]) {\n  var a: i32 = 0\n  for i in 0 .. N {\n    for j in 0 .. N {\n      a = a + 1\n    }\n  }\n  Y[0] = a\n}";
    let work = |n: u64| {
        let r: LaunchRequest =
            serde_json::from_value(json!({"source": looped, "dims": {"N": n}})).unwrap();
        phobos_playground::work(&prepare(&r).ok().unwrap())
    };
    // The loops' iterations (N^2) times a cost per iteration.
    assert_eq!(work(40) - work(20), 4 * (work(20) - work(10)));
    let r = handle(&json!({"op": "run", "source": looped, "dims": {"N": 100}}).to_string());
    assert_eq!(r.json["ok"], true, "{}", r.json);
    let y = r.json["outputs"][0].clone();
    assert_eq!(words(&r, &y), [10_000]);
    // The largest N within the GPU bound, by bisection (2^20 ints of X are
    // 4 MiB, within the byte bound, and far over the work bound).
    let (mut lo, mut hi) = (1u64, 1 << 20);
    assert!(work(lo) <= MAX_GPU_WORK && work(hi) > MAX_GPU_WORK);
    while hi - lo > 1 {
        let mid = (lo + hi) / 2;
        if work(mid) <= MAX_GPU_WORK {
            lo = mid
        } else {
            hi = mid
        }
    }
    let at = handle_json(&json!({"op": "plan", "source": looped, "dims": {"N": lo}}));
    assert_eq!(at["ok"], true, "{}", at["error"]);
    let over = handle_json(&json!({"op": "plan", "source": looped, "dims": {"N": hi}}));
    assert_eq!(over["ok"], false);
    let e = over["error"].as_str().unwrap();
    assert!(
        e.contains(&format!(
            "about {} expression nodes, more than the playground's bound of {MAX_GPU_WORK} for WebGPU",
            work(hi)
        )),
        "{e}"
    );
    let unknown = looped.replace("0 .. N {\n      a", "0 .. N % 7 {\n      a");
    assert_ne!(unknown, looped);
    let r = handle_json(&json!({"op": "plan", "source": unknown, "dims": {"N": 3}}));
    assert_eq!(r["ok"], false);
    assert!(
        r["error"]
            .as_str()
            .unwrap()
            .contains("a loop's bounds are not built from"),
        "{r}"
    );
}

/// A plan is made within the limits of the device the page opened (the
/// request's `limits`, by WebGPU's names), else within WebGPU's defaults:
/// a kernel whose `let` tile takes 20 KiB is refused within the default
/// 16 KiB, naming the tile, its bytes and the limit, and planned within a
/// device's 32 KiB; a softmax over rows of 4096 gets more than 256
/// invocations a workgroup where the device runs 1024.
#[test]
fn plans_are_made_within_the_devices_limits() {
    // `t` is read through a slice, so the plan keeps it in workgroup memory.
    let big = "@autotune(R in [5])\nkernel big(X: tensor<f32>[M, 1024], Y: tensor<f32>[M, 1024]) {\n  let r = ctx.block.x * R\n  let t = X[r :+ R, :] * 2.0\n  Y[r :+ R, :] = t + t[:, 0 :+ 1]\n}\n";
    let plan = |source: &str, dims: Json, limits: Json| {
        handle_json(&json!({"op": "plan", "source": source, "dims": dims, "limits": limits}))
    };
    let default = plan(big, json!({"M": 10}), json!({}));
    assert_eq!(default["ok"], false, "{default}");
    // The page still runs it on the interpreter.
    assert_eq!(default["interpreter"], true, "{default}");
    let error = default["error"].as_str().unwrap();
    assert!(
        error.contains("`let t") && error.contains("20480") && error.contains("16384"),
        "{error}"
    );
    let roomy = plan(
        big,
        json!({"M": 10}),
        json!({"maxComputeWorkgroupStorageSize": 32768}),
    );
    assert_eq!(roomy["ok"], true, "{roomy}");
    assert_eq!(roomy["workgroup_memory"], 32768);

    let softmax = include_str!("../../examples/softmax_dropout.ph");
    let rows = json!({"M": 4, "N": 4096});
    let portable = plan(softmax, rows.clone(), json!({}));
    let wide = plan(
        softmax,
        rows,
        json!({"maxComputeInvocationsPerWorkgroup": 1024}),
    );
    assert_eq!(portable["ok"], true, "{portable}");
    assert_eq!(wide["ok"], true, "{wide}");
    assert!(
        portable["workgroup_size"].as_u64().unwrap() <= 256,
        "{portable}"
    );
    assert!(wide["workgroup_size"].as_u64().unwrap() > 256, "{wide}");
    // Unknown limits are refused by name, not ignored.
    let odd = plan(big, json!({"M": 10}), json!({"maxWorkgroupMemory": 1}));
    assert_eq!(odd["ok"], false, "{odd}");
    assert!(
        odd["error"]
            .as_str()
            .unwrap()
            .contains("maxWorkgroupMemory"),
        "{odd}"
    );
}
