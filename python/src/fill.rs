//! `phobos.fill`, the Tandem stream as a NumPy array with the bits of
//! `phobosc fill` (both name their types and make their elements through
//! `phobos_runtime::fills`), and `phobos.tandem.Key`, the stream's key and
//! its derivations.

use numpy::{Element, PyArray1, PyArrayMethods};
use phobos_runtime::fills::{self, Engine};
use phobos_tandem::{Bulk, Tandem};
use pyo3::exceptions::{PyMemoryError, PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;

/// A Tandem key: 128 bits as four 32-bit words. `Key(seed)` is the key of
/// a u64 seed (the key `phobosc fill --key SEED` and the kernels'
/// `tandem_*(seed, i)` draws use); `sub(purpose)` and `split(g)` derive
/// independent keys (stdlib/tandem/SPEC.md).
#[pyclass(frozen, eq, hash, module = "phobos.tandem")]
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Key(phobos_tandem::Key);

#[pymethods]
impl Key {
    #[new]
    fn new(seed: u64) -> Key {
        Key(phobos_tandem::Key::from_seed(seed))
    }

    /// The key given by its four words, word 0 first.
    #[staticmethod]
    fn from_words(words: [u32; 4]) -> Key {
        Key(phobos_tandem::Key::from_words(words))
    }

    /// An independent key for a purpose; user code takes
    /// `PURPOSE_USER + n` (smaller purposes are the library's).
    fn sub(&self, purpose: u64) -> Key {
        Key(self.0.sub(purpose))
    }

    /// The `g`-th independent child key (per worker, per device).
    fn split(&self, g: u64) -> Key {
        Key(self.0.split(g))
    }

    /// The four words, word 0 first.
    #[getter]
    fn words(&self) -> [u32; 4] {
        self.0.words()
    }

    fn __repr__(&self) -> String {
        let w = self.0.words();
        format!(
            "Key.from_words(({:#010x}, {:#010x}, {:#010x}, {:#010x}))",
            w[0], w[1], w[2], w[3]
        )
    }
}

/// Elements `start .. start + count` of the Tandem stream of `key` mapped
/// to TYPE, as a 1-D NumPy array: the bits `phobosc fill TYPE --key KEY
/// --start START --count COUNT --k K --backend BACKEND` writes.
#[pyfunction]
#[pyo3(signature = (ty, key, count, start = 0, k = 32, backend = "auto", threads = None, devices = None))]
#[allow(clippy::too_many_arguments)]
pub fn fill<'py>(
    py: Python<'py>,
    ty: &str,
    key: &Bound<'py, PyAny>,
    count: u64,
    start: u64,
    k: u32,
    backend: &str,
    threads: Option<usize>,
    devices: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let dist = fills::parse_type(ty).map_err(PyValueError::new_err)?;
    let key = match key.cast::<Key>() {
        Ok(k) => k.get().0,
        Err(_) => phobos_tandem::Key::from_seed(key.extract::<u64>().map_err(|_| {
            PyTypeError::new_err(
                "key must be a seed (an int from 0 to 2^64 - 1) or a phobos.tandem.Key",
            )
        })?),
    };
    if !fills::valid_k(k) {
        return Err(PyValueError::new_err(format!(
            "k = {k}: the chunk length K must be a power of two from 1 to 4096 (default 32)"
        )));
    }
    let rng = Tandem::with_k(key, k).expect("valid_k checked K");
    // Elements start .. start + count must exist (indices below 2^64).
    let room = (1u128 << 64) - u128::from(start);
    if u128::from(count) > room {
        return Err(PyValueError::new_err(format!(
            "start = {start}, count = {count}: the stream has 2^64 elements, so at most {room} follow element {start}"
        )));
    }
    if threads == Some(0) {
        return Err(PyValueError::new_err(
            "threads = 0: at least one thread is needed",
        ));
    }
    // `devices=` (as `phobosc fill --devices`) overrides the backend.
    let devices = match devices {
        Some(d) => crate::kernel::devices(d)?,
        None => None,
    };
    let engine = match backend {
        _ if devices.is_some() => {
            let devices = devices.as_deref().expect("checked");
            Engine::Split(
                phobos_runtime::split::fill(&dist, rng, devices, threads)
                    .map_err(|e| PyValueError::new_err(e.to_string()))?,
            )
        }
        "auto" | "cpu" => {
            let b = Bulk::new(rng);
            Engine::Fast(threads.map_or(b, |t| b.threads(t)))
        }
        "interp" => Engine::Reference(rng),
        "gpu" => Engine::gpu(&dist, rng)
            .map_err(|e| PyRuntimeError::new_err(format!("backend 'gpu', TYPE `{ty}`: {e}")))?,
        other => {
            return Err(PyValueError::new_err(format!(
                "backend must be 'auto', 'cpu', 'interp' or 'gpu', not {other:?}"
            )));
        }
    };
    let bytes = u128::from(count) * dist.elem_size() as u128;
    let available = phobos_runtime::memory::available();
    let n = usize::try_from(count)
        .ok()
        .filter(|_| bytes <= u128::from(available));
    let Some(n) = n else {
        return Err(PyMemoryError::new_err(format!(
            "count = {count}: {bytes} bytes, more than this machine's available memory ({available} bytes)"
        )));
    };
    let fill = |out: &mut [u8]| engine.fill(&dist, start, out);
    match fills::descr(&dist) {
        "|u1" => filled::<u8>(py, n, 1, fill),
        "<u2" => filled::<u16>(py, n, 2, fill),
        // NumPy's float16 holds the binary16 bits the fill writes.
        "<f2" => filled::<u16>(py, n, 2, fill)?.call_method1("view", ("float16",)),
        "|b1" => filled::<bool>(py, n, 1, fill),
        "<u4" => filled::<u32>(py, n, 4, fill),
        "<i4" => filled::<i32>(py, n, 4, fill),
        "<u8" => filled::<u64>(py, n, 8, fill),
        "<i8" => filled::<i64>(py, n, 8, fill),
        "<f4" => filled::<f32>(py, n, 4, fill),
        "<f8" => filled::<f64>(py, n, 8, fill),
        other => unreachable!("dtype {other}"),
    }
}

// The fills write little-endian bytes straight into arrays of native
// elements; a big-endian host would need them swapped.
const _: () = assert!(cfg!(target_endian = "little"), "little-endian hosts only");

/// A new array of `n` elements of `size` bytes that `fill` writes as
/// little-endian bytes, without the GIL.
fn filled<'py, T: Element>(
    py: Python<'py>,
    n: usize,
    size: usize,
    fill: impl FnOnce(&mut [u8]) -> Result<(), String> + Send,
) -> PyResult<Bound<'py, PyAny>> {
    debug_assert_eq!(size, std::mem::size_of::<T>());
    // Zeros from calloc: pages are touched first by the fill, on its threads.
    let array = PyArray1::<T>::zeros(py, [n], false);
    let ptr = array.data().cast::<u8>() as usize;
    // The array is new and no Python code sees it before this returns, so
    // nothing else reads or writes its buffer while the GIL is released.
    py.detach(move || {
        let out = unsafe { std::slice::from_raw_parts_mut(ptr as *mut u8, n * size) };
        fill(out)
    })
    .map_err(PyRuntimeError::new_err)?;
    Ok(array.into_any())
}
