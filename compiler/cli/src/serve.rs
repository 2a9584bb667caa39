//! `phobosc serve`: the playground page from assets built into this binary
//! (`build.rs` embeds `playground/dist/`), and `POST /api/run`, which runs a
//! kernel on this machine's backend (the GPU through wgpu, else Cranelift)
//! so that the page can compare the browser's result with a native one.
//!
//! It listens on 127.0.0.1 unless told otherwise, and bounds what a request
//! can cost, with the numbers of `phobos_core::bounds::server`: bodies of at
//! most [`MAX_BODY`] bytes, the playground's bound on a launch's tensors
//! (`bounds::playground::MAX_TENSOR_BYTES`), at most [`MAX_WORK`] expression
//! nodes a run, at most [`MAX_RUNS`] runs at once (more are refused with
//! 503), and an answer within [`RUN_TIMEOUT`] (a run still going then is
//! answered with 503 and finishes in the background, holding its slot).
//! Every response carries a Content-Security-Policy that allows nothing but
//! this host, so the page makes no request elsewhere and runs no inline
//! script.

use anyhow::{Context, Result, bail};
use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{DefaultBodyLimit, Path, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use clap::Args;
use phobos_core::bounds::server::{MAX_BODY, MAX_RUNS, MAX_WORDS_BYTES, MAX_WORK, RUN_TIMEOUT};
use phobos_core::ir::ParamKind;
use phobos_core::launch::Arg;
use phobos_runtime::{Backend, Options, launch};
use serde_json::{Value as Json, json};
use std::net::{IpAddr, SocketAddr};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::Semaphore;

mod assets {
    include!(concat!(env!("OUT_DIR"), "/assets.rs"));
}

const CSP: &str = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; \
                   style-src 'self' 'unsafe-inline'; img-src 'self' data:; \
                   connect-src 'self'; worker-src 'self'; object-src 'none'; \
                   base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

#[derive(Args)]
pub struct ServeArgs {
    /// The port to listen on (0 picks a free one).
    #[arg(long, default_value_t = 8080)]
    port: u16,
    /// The address to listen on; anything but loopback lets other machines
    /// run kernels here.
    #[arg(long, default_value = "127.0.0.1")]
    host: IpAddr,
    /// Open the page in the default browser.
    #[arg(long)]
    open: bool,
}

/// What the server's runs share: the slots of the runs in progress and how
/// long a request waits for its run.
struct App {
    runs: Arc<Semaphore>,
    timeout: Duration,
}

pub fn serve(a: &ServeArgs) -> Result<ExitCode> {
    if assets::ASSETS.is_empty() {
        bail!(
            "this phobosc was built without the playground's assets: run playground/build.sh, \
             then build phobosc again"
        );
    }
    if !a.host.is_loopback() {
        eprintln!(
            "warning: serving on {}, not a loopback address: anyone who can reach it can run kernels on this machine",
            a.host
        );
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .build()
        .context("starting the server's runtime")?;
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind(SocketAddr::new(a.host, a.port))
            .await
            .with_context(|| format!("listening on {}:{}", a.host, a.port))?;
        let addr = listener.local_addr()?;
        let url = match addr.ip() {
            IpAddr::V6(ip) => format!("http://[{ip}]:{}/", addr.port()),
            IpAddr::V4(ip) => format!("http://{ip}:{}/", addr.port()),
        };
        println!("phobosc serve: the playground is at {url}");
        if a.open {
            open_browser(&url);
        }
        let app = App {
            runs: Arc::new(Semaphore::new(MAX_RUNS)),
            timeout: RUN_TIMEOUT,
        };
        axum::serve(listener, router(app))
            .await
            .context("serving")?;
        Ok(ExitCode::SUCCESS)
    })
}

/// The server's routes, for `serve` and the tests.
fn router(app: App) -> Router {
    let app = Arc::new(app);
    Router::new()
        .route("/", get(|| async { asset("index.html") }))
        .route(
            "/{file}",
            get(|Path(file): Path<String>| async move { asset(&file) }),
        )
        .route("/api/run", post(run))
        .fallback(|| async { text(StatusCode::NOT_FOUND, "not found") })
        .layer(DefaultBodyLimit::max(MAX_BODY))
        .layer(axum::middleware::map_response(secure))
        .with_state(app)
}

async fn secure(mut r: Response) -> Response {
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    r
}

fn text(status: StatusCode, body: &str) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        body.to_string(),
    )
        .into_response()
}

fn asset(name: &str) -> Response {
    match assets::ASSETS.iter().find(|(n, _, _)| *n == name) {
        Some((_, mime, bytes)) => (
            [
                (header::CONTENT_TYPE, *mime),
                (header::CACHE_CONTROL, "no-cache"),
            ],
            Body::from(*bytes),
        )
            .into_response(),
        None => text(StatusCode::NOT_FOUND, "not found"),
    }
}

fn answer(status: StatusCode, json: Json) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        json.to_string(),
    )
        .into_response()
}

fn refuse(status: StatusCode, message: impl Into<String>) -> Response {
    answer(status, json!({ "ok": false, "error": message.into() }))
}

/// `POST /api/run` with the playground's launch request (`source`, `kernel`,
/// `config`, `dims`, `args`): the kernel on this machine's best backend.
async fn run(State(app): State<Arc<App>>, body: Bytes) -> Response {
    let request: phobos_playground::LaunchRequest = match serde_json::from_slice(&body) {
        Ok(r) => r,
        Err(e) => return refuse(StatusCode::BAD_REQUEST, format!("malformed request: {e}")),
    };
    let Ok(permit) = app.runs.clone().try_acquire_owned() else {
        return refuse(
            StatusCode::SERVICE_UNAVAILABLE,
            format!("busy: {MAX_RUNS} runs are in progress; try again"),
        );
    };
    let job = tokio::task::spawn_blocking(move || {
        let out = run_blocking(&request);
        drop(permit);
        out
    });
    match tokio::time::timeout(app.timeout, job).await {
        Ok(Ok(json)) => answer(StatusCode::OK, json),
        Ok(Err(e)) => refuse(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("the run failed: {e}"),
        ),
        Err(_) => refuse(
            StatusCode::SERVICE_UNAVAILABLE,
            format!(
                "the run did not finish in {} s and was abandoned",
                app.timeout.as_secs_f64()
            ),
        ),
    }
}

fn run_blocking(request: &phobos_playground::LaunchRequest) -> Json {
    let mut p = match phobos_playground::prepare(request) {
        Ok(p) => p,
        Err(r) => return r.json,
    };
    let work = phobos_playground::work(&p);
    if work > MAX_WORK {
        return json!({
            "ok": false,
            "error": format!(
                "this launch would evaluate about {work} expression nodes, more than the server's bound of {MAX_WORK}; use smaller dims"
            ),
        });
    }
    let options = Options {
        backend: Backend::Auto,
        ..Options::default()
    };
    let t0 = Instant::now();
    let prov = match launch(&p.kernel, &mut p.args, &options) {
        Ok(prov) => prov,
        Err(e) => return json!({ "ok": false, "error": e.to_string() }),
    };
    let ms = t0.elapsed().as_secs_f64() * 1e3;
    let mut outputs = Vec::new();
    let mut budget = MAX_WORDS_BYTES;
    for (param, arg) in p.kernel.params.iter().zip(&p.args) {
        if let (ParamKind::Tensor { written: true, .. }, Arg::Tensor(t)) = (&param.kind, arg) {
            let bytes = phobos_playground::words(t);
            let words = (bytes.len() <= budget).then(|| {
                budget -= bytes.len();
                bytes
                    .chunks(4)
                    .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                    .collect::<Vec<u32>>()
            });
            outputs.push(json!({
                "name": param.name,
                "elem": t.elem().name(),
                "shape": t.shape,
                "words": words,
            }));
        }
    }
    json!({
        "ok": true,
        "backend": prov.backend.name(),
        "device": prov.device,
        "ms": ms,
        "outputs": outputs,
    })
}

/// Best effort: the platform's opener, in the background.
fn open_browser(url: &str) {
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else if cfg!(target_os = "windows") {
        "explorer"
    } else {
        "xdg-open"
    };
    if let Err(e) = std::process::Command::new(opener).arg(url).spawn() {
        eprintln!("could not open a browser ({opener}: {e}); open {url} yourself");
    }
}

#[cfg(test)]
mod tests {
    //! The server's bounds at their edges, on a server of this process
    //! (`/api/run` needs no page built): `MAX_BODY`, `MAX_RUNS` and the run
    //! timeout.
    use super::*;
    use std::io::{Read, Write};
    use std::net::TcpStream;

    const RANDOM_TILE: &str = include_str!("../../../playground/examples/random_tile.ph");

    /// Serves `app` on a free loopback port, on a thread of its own.
    fn start(app: App) -> u16 {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_io()
                .enable_time()
                .build()
                .unwrap();
            rt.block_on(async move {
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
                tx.send(listener.local_addr().unwrap().port()).unwrap();
                axum::serve(listener, router(app)).await.unwrap();
            });
        });
        rx.recv().unwrap()
    }

    /// `POST /api/run` with `body`: the status and the answer's text.
    fn post(port: u16, body: &[u8]) -> (u16, String) {
        let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
        let head = format!(
            "POST /api/run HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: {}\r\n\r\n",
            body.len()
        );
        s.write_all(head.as_bytes()).unwrap();
        // The server may answer 413 and close before the whole body is sent.
        let _ = s.write_all(body);
        let mut bytes = Vec::new();
        let _ = s.read_to_end(&mut bytes);
        let text = String::from_utf8_lossy(&bytes).to_string();
        let status = text
            .split_whitespace()
            .nth(1)
            .and_then(|c| c.parse().ok())
            .unwrap_or(0);
        let body = text.split_once("\r\n\r\n").map_or("", |(_, b)| b);
        (status, body.to_string())
    }

    fn app(runs: &Arc<Semaphore>, timeout: Duration) -> App {
        App {
            runs: runs.clone(),
            timeout,
        }
    }

    fn launch() -> Vec<u8> {
        json!({"source": RANDOM_TILE, "dims": {"ROWS": 8, "COLS": 32}, "args": {"seed": 1}})
            .to_string()
            .into_bytes()
    }

    /// A body of `MAX_BODY` bytes is read (and answered as the malformed
    /// request it is); one byte more is refused with 413 unread.
    #[test]
    fn bodies_up_to_max_body_are_read() {
        let port = start(app(&Arc::new(Semaphore::new(MAX_RUNS)), RUN_TIMEOUT));
        let (status, body) = post(port, &vec![b'x'; MAX_BODY]);
        assert_eq!(status, 400, "{body}");
        assert!(body.contains("malformed request"), "{body}");
        // A launch padded with spaces to exactly the bound runs.
        let mut padded = launch();
        padded.resize(MAX_BODY, b' ');
        let (status, body) = post(port, &padded);
        assert_eq!(status, 200, "{body}");
        assert!(body.contains("\"ok\":true"), "{body}");
        let (status, _) = post(port, &vec![b'x'; MAX_BODY + 1]);
        assert_eq!(status, 413);
    }

    /// With every one of the `MAX_RUNS` slots taken a run is refused with
    /// 503; with one free it runs.
    #[test]
    fn runs_past_max_runs_are_refused() {
        let runs = Arc::new(Semaphore::new(MAX_RUNS));
        let port = start(app(&runs, RUN_TIMEOUT));
        let taken = runs
            .clone()
            .try_acquire_many_owned(MAX_RUNS as u32)
            .unwrap();
        let (status, body) = post(port, &launch());
        assert_eq!(status, 503, "{body}");
        assert!(
            body.contains(&format!("busy: {MAX_RUNS} runs are in progress")),
            "{body}"
        );
        drop(taken);
        let one = runs
            .clone()
            .try_acquire_many_owned(MAX_RUNS as u32 - 1)
            .unwrap();
        let (status, body) = post(port, &launch());
        assert_eq!(status, 200, "{body}");
        drop(one);
    }

    /// A run that outlasts the timeout is answered with 503 and keeps its
    /// slot until it ends; the server keeps serving.
    #[test]
    fn a_run_past_the_timeout_is_abandoned_with_a_message() {
        let runs = Arc::new(Semaphore::new(1));
        // Compiling the kernel alone takes longer than a microsecond.
        let port = start(app(&runs, Duration::from_micros(1)));
        let (status, body) = post(port, &launch());
        assert_eq!(status, 503, "{body}");
        assert!(
            body.contains("the run did not finish in 0.000001 s and was abandoned"),
            "{body}"
        );
        // The abandoned run gives its slot back when it ends.
        let slot = std::time::Instant::now();
        while runs.available_permits() == 0 {
            assert!(
                slot.elapsed() < Duration::from_secs(60),
                "the run never ended"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        let (status, body) = post(port, b"{");
        assert_eq!(status, 400, "{body}");
    }
}
