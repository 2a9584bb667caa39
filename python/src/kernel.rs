//! A kernel called from Python: keyword arguments bound through the core's
//! binder (`phobos_core::bind`, as `phobosc run` binds its flags), the
//! configuration chosen by the runtime's tuner (`phobos_runtime::tune`,
//! with the CLI's disk cache), the launch run with the GIL released, and
//! the stored tensors returned as NumPy arrays or written into the arrays
//! given for them.

use crate::array::{
    self, as_ndarray, check_dtype, check_writable, to_numpy, to_tensor, write_into,
};
use phobos_core::bind::{BindError, Binder};
use phobos_core::ir::{self, ParamKind};
use phobos_core::launch::Arg;
use phobos_core::types::Scalar;
use phobos_core::{Program, render};
use phobos_runtime::split::{DeviceKind, DeviceSpec, Devices, SplitError, SplitRun};
use phobos_runtime::tune::{self, CacheUse, Candidate, Tuning};
use phobos_runtime::{Backend, Options, Precision, Provenance, RuntimeError, memory};
use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyList, PyTuple};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// The keyword arguments that are options of the call rather than
/// arguments of the kernel (a kernel parameter of the same name wins).
const OPTIONS: [&str; 8] = [
    "dims",
    "out",
    "backend",
    "precision",
    "config",
    "tune",
    "threads",
    "devices",
];

/// One kernel of a compiled module. Call it with keyword arguments to run
/// it: `y = mod.dropout_rows(X=x, seed=3)`.
#[pyclass(frozen, module = "phobos")]
pub struct Kernel {
    program: Arc<Program>,
    name: String,
    /// Checked in its first configuration: what binding reads (the
    /// parameters and dims are the same in every configuration).
    kernel: Arc<ir::Kernel>,
    memo: Mutex<Memo>,
}

/// What earlier calls worked out, so that a call repeats neither the
/// checker nor the tuning cache's lookup.
#[derive(Default)]
struct Memo {
    /// Checked kernels by configuration.
    kernels: HashMap<Vec<(String, i64)>, Arc<ir::Kernel>>,
    /// The configuration chosen for a backend, precision, thread count
    /// and the dims' extents.
    chosen: HashMap<ChoiceKey, (Candidate, Tuning)>,
}

/// What a choice of configuration depends on: the backend's name, the
/// precision, the thread count and each dim's extent.
type ChoiceKey = (&'static str, Precision, Option<usize>, Vec<u64>);

/// The stored tensors of a call by parameter name, as Python arrays.
type Outputs<'py> = Vec<(String, Bound<'py, PyAny>)>;

/// A call's keyword arguments, sorted out.
struct Call<'py> {
    args: Vec<Arg>,
    /// Every stored tensor parameter and the array given for it, if any.
    written: Vec<(usize, Option<Bound<'py, numpy::PyUntypedArray>>)>,
    options: Options,
    config: Option<Vec<(String, i64)>>,
    tune: bool,
    /// `devices=`: the launch split across these (`phobos_runtime::split`).
    devices: Option<Vec<DeviceSpec>>,
}

/// Why a launch failed, turned into a Python exception with the GIL held.
enum Failure {
    Runtime(RuntimeError),
    Config(String),
    Split(SplitError),
}

impl Kernel {
    pub fn new(program: Arc<Program>, name: String, kernel: ir::Kernel) -> Kernel {
        let kernel = Arc::new(kernel);
        let mut memo = Memo::default();
        memo.kernels.insert(kernel.config.clone(), kernel.clone());
        Kernel {
            program,
            name,
            kernel,
            memo: Mutex::new(memo),
        }
    }

    fn memo(&self) -> std::sync::MutexGuard<'_, Memo> {
        // A panic while the lock was held left only caches behind.
        self.memo.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The kernel checked in `config` (`@autotune` values; those left out
    /// take their first value), from the memo when it was checked before.
    fn checked(&self, config: &[(String, i64)]) -> Result<Arc<ir::Kernel>, String> {
        if let Some(k) = self.memo().kernels.get(config) {
            return Ok(k.clone());
        }
        let k = Arc::new(
            self.program
                .kernel(&self.name, config)
                .map_err(|d| render(&d, &self.program.sources, false))?,
        );
        self.memo().kernels.insert(config.to_vec(), k.clone());
        Ok(k)
    }

    /// The parameter named `name`.
    fn param(&self, name: &str) -> Option<(usize, &ir::Param)> {
        self.kernel
            .params
            .iter()
            .enumerate()
            .find(|(_, p)| p.name == name)
    }

    fn param_names(&self) -> String {
        let v: Vec<&str> = self.kernel.params.iter().map(|p| p.name.as_str()).collect();
        v.join(", ")
    }

    /// Sorts the keyword arguments into the kernel's arguments and the
    /// call's options, refusing what does not fit by parameter name.
    fn bind<'py>(
        &self,
        py: Python<'py>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Call<'py>> {
        let k = &*self.kernel;
        let mut binder = Binder::new(k);
        let mut given = vec![false; k.params.len()];
        let mut arrays: Vec<Option<Bound<'py, numpy::PyUntypedArray>>> = vec![None; k.params.len()];
        let mut call = Call {
            args: Vec::new(),
            written: Vec::new(),
            options: Options::default(),
            config: None,
            tune: true,
            devices: None,
        };
        let mut tensors = Vec::new();
        let mut out = None;
        if let Some(kwargs) = kwargs {
            // Dims first, so that a conflicting array names where the dim
            // came from.
            if let Some(dims) = kwargs
                .get_item("dims")?
                .filter(|_| self.param("dims").is_none())
            {
                self.bind_dims(&mut binder, &dims)?;
            }
            for (key, value) in kwargs.iter() {
                let key: String = key.extract()?;
                match self.param(&key) {
                    Some((i, p)) => {
                        given[i] = true;
                        match p.kind {
                            ParamKind::Scalar(ty) => {
                                let text = scalar_text(&key, ty, &value)?;
                                binder
                                    .scalar(&key, &text)
                                    .map_err(|e| bind_error(&key, e))?;
                            }
                            ParamKind::Tensor { .. } => tensors.push((i, key, value)),
                        }
                    }
                    None if OPTIONS.contains(&key.as_str()) => match key.as_str() {
                        "dims" => {}
                        "out" => out = Some(value),
                        "backend" => call.options.backend = backend(&value)?,
                        "precision" => call.options.precision = precision(&value)?,
                        "config" => call.config = Some(config(&value)?),
                        "tune" => call.tune = value.extract::<bool>()?,
                        "threads" => call.options.threads = threads(&value)?,
                        "devices" => call.devices = devices(&value)?,
                        _ => unreachable!("every option is matched"),
                    },
                    None => {
                        return Err(PyTypeError::new_err(format!(
                            "{}() got an unexpected keyword argument '{key}'; its parameters are {}",
                            self.name,
                            self.param_names()
                        )));
                    }
                }
            }
        }
        if let Some(out) = out {
            for (i, value) in self.outs(&out)? {
                if given[i] {
                    return Err(PyTypeError::new_err(format!(
                        "{}() got `{}` both by name and in out=",
                        self.name, k.params[i].name
                    )));
                }
                given[i] = true;
                tensors.push((i, k.params[i].name.clone(), value));
            }
        }
        for (i, key, value) in tensors {
            let ParamKind::Tensor { elem, written, .. } = k.params[i].kind else {
                unreachable!("tensors only")
            };
            let a = as_ndarray(&key, &value)?;
            check_dtype(&key, elem, &a)?;
            if written {
                check_writable(&key, elem, &a)?;
            }
            let t = to_tensor(&key, elem, &a)?;
            binder
                .tensor(
                    &key,
                    t,
                    &format!("`{key}`"),
                    &format!("the array given for `{key}`"),
                )
                .map_err(|e| bind_error(&key, e))?;
            arrays[i] = Some(a);
        }
        // Everything the kernel reads must be given; what it only writes
        // is made (zeros) and returned.
        let missing: Vec<String> = k
            .params
            .iter()
            .zip(&given)
            .filter(|(p, g)| {
                !**g && match p.kind {
                    ParamKind::Scalar(_) => true,
                    ParamKind::Tensor { read, .. } => read,
                }
            })
            .map(|(p, _)| format!("'{}'", p.name))
            .collect();
        if !missing.is_empty() {
            return Err(PyTypeError::new_err(format!(
                "{}() missing required argument{}: {}",
                self.name,
                if missing.len() == 1 { "" } else { "s" },
                missing.join(", ")
            )));
        }
        let (args, _) = binder.finish(budget(), false).map_err(|e| match e {
            BindError::Unbound { ref dim, .. } => PyValueError::new_err(format!(
                "{e}: pass dims={{'{dim}': N}}, or an array that has it"
            )),
            BindError::TooLarge { .. } => pyo3::exceptions::PyMemoryError::new_err(e.to_string()),
            e => PyValueError::new_err(e.to_string()),
        })?;
        call.args = args;
        call.written = k
            .params
            .iter()
            .enumerate()
            .filter(|(_, p)| matches!(p.kind, ParamKind::Tensor { written: true, .. }))
            .map(|(i, _)| (i, arrays[i].take()))
            .collect();
        let _ = py;
        Ok(call)
    }

    fn bind_dims(&self, binder: &mut Binder<'_>, dims: &Bound<'_, PyAny>) -> PyResult<()> {
        let dims = dims.cast::<PyDict>().map_err(|_| {
            PyTypeError::new_err(
                "dims= takes a dict of dimension names to extents, such as {'M': 1000}",
            )
        })?;
        for (name, extent) in dims.iter() {
            let name: String = name.extract()?;
            let extent: u64 = extent.extract().map_err(|_| {
                PyValueError::new_err(format!(
                    "dims: `{name}` must be a non-negative integer, not {}",
                    extent
                        .repr()
                        .map_or_else(|_| "that".to_string(), |r| r.to_string())
                ))
            })?;
            binder
                .dim(&name, &extent.to_string(), "dims=")
                .map_err(|e| PyValueError::new_err(format!("dims: {e}")))?;
        }
        Ok(())
    }

    /// The stored tensors `out=` gives: one array when the kernel stores
    /// one tensor, else a dict by name or a sequence in parameter order.
    fn outs<'py>(&self, out: &Bound<'py, PyAny>) -> PyResult<Vec<(usize, Bound<'py, PyAny>)>> {
        let written: Vec<usize> = self.written().collect();
        if let Ok(d) = out.cast::<PyDict>() {
            let mut v = Vec::new();
            for (name, value) in d.iter() {
                let name: String = name.extract()?;
                match self.param(&name) {
                    Some((i, _)) if written.contains(&i) => v.push((i, value)),
                    _ => {
                        return Err(PyValueError::new_err(format!(
                            "out: `{name}` is not a tensor `{}` writes; it writes {}",
                            self.name,
                            self.written_names()
                        )));
                    }
                }
            }
            return Ok(v);
        }
        if out.is_instance_of::<PyTuple>() || out.is_instance_of::<PyList>() {
            let items: Vec<Bound<'py, PyAny>> = out.extract()?;
            if items.len() != written.len() {
                return Err(PyValueError::new_err(format!(
                    "out: {} arrays given, but `{}` writes {} ({})",
                    items.len(),
                    self.name,
                    written.len(),
                    self.written_names()
                )));
            }
            return Ok(written.into_iter().zip(items).collect());
        }
        match written[..] {
            [one] => Ok(vec![(one, out.clone())]),
            _ => Err(PyValueError::new_err(format!(
                "out: `{}` writes {} tensors ({}); pass a dict by name or a tuple in that order",
                self.name,
                written.len(),
                self.written_names()
            ))),
        }
    }

    fn written(&self) -> impl Iterator<Item = usize> + '_ {
        (self.kernel.params.iter().enumerate())
            .filter(|(_, p)| matches!(p.kind, ParamKind::Tensor { written: true, .. }))
            .map(|(i, _)| i)
    }

    fn written_names(&self) -> String {
        let v: Vec<&str> = self
            .written()
            .map(|i| self.kernel.params[i].name.as_str())
            .collect();
        if v.is_empty() {
            "none".to_string()
        } else {
            v.join(", ")
        }
    }

    /// Chooses the configuration (fixed, remembered, or the tuner's) and
    /// launches; runs without the GIL.
    fn launch(
        &self,
        args: &mut [Arg],
        options: &Options,
        config: Option<&[(String, i64)]>,
        tune_on: bool,
        devices: Option<&[DeviceSpec]>,
    ) -> Result<(Provenance, Option<SplitRun>), Failure> {
        // A split chooses its one configuration on its first device's
        // backend (the blocks come from one grid).
        let split_options;
        let choosing = match devices.and_then(|d| d.first()) {
            Some(first) => {
                split_options = Options {
                    backend: match first.kind {
                        DeviceKind::Gpu(_) => Backend::Gpu,
                        DeviceKind::Cpu => Backend::Cpu,
                    },
                    ..options.clone()
                };
                &split_options
            }
            None => options,
        };
        let (candidate, tuning) = match config {
            Some(c) => {
                let k = self.checked(c).map_err(Failure::Config)?;
                (
                    Candidate {
                        config: k.config.clone(),
                        workgroup_size: None,
                    },
                    Tuning::fixed(),
                )
            }
            None => self.choose(args, choosing, tune_on)?,
        };
        let kernel = self.checked(&candidate.config).map_err(Failure::Config)?;
        let options = Options {
            workgroup_size: candidate.workgroup_size,
            ..options.clone()
        };
        if let Some(devices) = devices {
            let mut run = phobos_runtime::split::launch_split(&kernel, args, &options, devices)
                .map_err(Failure::Split)?;
            run.provenance.tuning = tuning;
            return Ok((run.provenance.clone(), Some(run)));
        }
        let mut prov = phobos_runtime::launch(&kernel, args, &options).map_err(Failure::Runtime)?;
        prov.tuning = tuning;
        Ok((prov, None))
    }

    /// The runtime's choice ([`tune::choose`]: the tuning cache on disk,
    /// else a tune now, else the heuristic's), made once per backend,
    /// precision, thread count and extents in this process.
    fn choose(
        &self,
        args: &mut [Arg],
        options: &Options,
        tune_on: bool,
    ) -> Result<(Candidate, Tuning), Failure> {
        let dims = phobos_core::launch::bind(&self.kernel, args)
            .map_err(|e| Failure::Runtime(RuntimeError::Launch(e)))?
            .dims;
        let key = (
            options.backend.name(),
            options.precision,
            options.threads,
            dims,
        );
        if tune_on && let Some((c, t)) = self.memo().chosen.get(&key) {
            let mut t = t.clone();
            if t.source == tune::Source::Tuned {
                t.cache = CacheUse::Hit;
                t.note = Some("chosen earlier in this process".to_string());
                t.ms = None;
            }
            return Ok((c.clone(), t));
        }
        let chosen = tune::choose(
            &self.program,
            &self.name,
            args,
            options,
            tune_on,
            &mut |_| {},
        )
        .map_err(Failure::Runtime)?;
        if tune_on {
            self.memo().chosen.insert(key, chosen.clone());
        }
        Ok(chosen)
    }

    /// Binds, launches without the GIL, and hands back the stored tensors
    /// by parameter (as new arrays, or written into the arrays given).
    fn call<'py>(
        &self,
        py: Python<'py>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<(Outputs<'py>, Provenance, Option<SplitRun>)> {
        let Call {
            mut args,
            written,
            options,
            config,
            tune,
            devices,
        } = self.bind(py, kwargs)?;
        let (prov, split) = py
            .detach(|| {
                self.launch(
                    &mut args,
                    &options,
                    config.as_deref(),
                    tune,
                    devices.as_deref(),
                )
            })
            .map_err(|f| match f {
                Failure::Config(text) => PyValueError::new_err(format!("config: {text}")),
                Failure::Runtime(RuntimeError::Launch(e)) => PyValueError::new_err(e.to_string()),
                Failure::Runtime(e) => PyRuntimeError::new_err(e.to_string()),
                // A device that failed mid-run; the other refusals come
                // before anything runs, from what was asked.
                Failure::Split(e @ SplitError::Device { .. }) => {
                    PyRuntimeError::new_err(e.to_string())
                }
                Failure::Split(e) => PyValueError::new_err(e.to_string()),
            })?;
        let mut outputs = Vec::new();
        for (i, given) in written {
            let name = self.kernel.params[i].name.clone();
            let Arg::Tensor(t) = std::mem::replace(
                &mut args[i],
                Arg::Scalar(phobos_core::types::Value::Bool(false)),
            ) else {
                unreachable!("stored parameters are tensors")
            };
            let array = match given {
                Some(a) => {
                    write_into(&name, t, &a)?;
                    a.into_any()
                }
                None => to_numpy(py, t)?,
            };
            outputs.push((name, array));
        }
        Ok((outputs, prov, split))
    }
}

#[pymethods]
impl Kernel {
    /// Runs the kernel and returns what it stores: one NumPy array, or a
    /// tuple of them in parameter order when it stores several. Arrays
    /// given for stored parameters (by name or `out=`) are written into
    /// and returned. Options: `dims={'M': n}`, `out=`, `backend='auto' |
    /// 'cpu' | 'interp' | 'gpu'`, `precision='exact' | 'fast'`,
    /// `config={'R': 16}`, `tune=True`, `threads=None`, `devices=None` (a
    /// launch split across several devices with the same bits: `'all'`,
    /// a count, or `'gpu0,cpu'` / `['gpu0', 'cpu:2']`, as `phobosc run
    /// --devices` takes it).
    #[pyo3(signature = (**kwargs))]
    fn __call__<'py>(
        &self,
        py: Python<'py>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let (outputs, _, _) = self.call(py, kwargs)?;
        let mut arrays: Vec<Bound<'py, PyAny>> = outputs.into_iter().map(|(_, a)| a).collect();
        match arrays.len() {
            0 => Ok(py.None().into_bound(py)),
            1 => Ok(arrays.remove(0)),
            _ => Ok(PyTuple::new(py, arrays)?.into_any()),
        }
    }

    /// Runs the kernel as a call does and returns a `Run`: `outputs` (a
    /// dict of the stored arrays by name) and `provenance` (a dict: backend,
    /// device, configuration, how it was chosen, ...).
    #[pyo3(signature = (**kwargs))]
    fn run<'py>(&self, py: Python<'py>, kwargs: Option<&Bound<'py, PyDict>>) -> PyResult<Run> {
        let (outputs, prov, split) = self.call(py, kwargs)?;
        let dict = PyDict::new(py);
        for (name, a) in outputs {
            dict.set_item(name, a)?;
        }
        let provenance = provenance(py, &prov, &self.kernel)?;
        provenance.set_item(
            "split",
            split.as_ref().map(|r| split_json(py, r)).transpose()?,
        )?;
        Ok(Run {
            outputs: dict.unbind(),
            provenance: provenance.unbind(),
        })
    }

    /// The kernel as WGSL, as `phobosc build` writes it for `config` and
    /// `precision`.
    #[pyo3(signature = (config = None, precision = "exact"))]
    fn wgsl(&self, config: Option<&Bound<'_, PyAny>>, precision: &str) -> PyResult<String> {
        Ok(self.lowered(config, precision)?.wgsl())
    }

    /// The kernel as SPIR-V (bytes), as `phobosc build` writes it.
    #[pyo3(signature = (config = None, precision = "exact"))]
    fn spirv<'py>(
        &self,
        py: Python<'py>,
        config: Option<&Bound<'_, PyAny>>,
        precision: &str,
    ) -> PyResult<Bound<'py, pyo3::types::PyBytes>> {
        let words = self.lowered(config, precision)?.spirv();
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        Ok(pyo3::types::PyBytes::new(py, &bytes))
    }

    /// What the GPU lowering decided, as text: where each value lives.
    #[pyo3(signature = (config = None, precision = "exact"))]
    fn plan(&self, config: Option<&Bound<'_, PyAny>>, precision: &str) -> PyResult<String> {
        Ok(self.lowered(config, precision)?.explain())
    }

    /// The kernel's name.
    #[getter]
    fn name(&self) -> &str {
        &self.name
    }

    /// Each parameter as a dict: name, kind ('tensor' or 'scalar'), dtype
    /// (NumPy's name), and for tensors the declared shape and whether the
    /// kernel reads and writes it.
    #[getter]
    fn params<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let list = PyList::empty(py);
        for p in &self.kernel.params {
            let d = PyDict::new(py);
            d.set_item("name", &p.name)?;
            match &p.kind {
                ParamKind::Scalar(s) => {
                    d.set_item("kind", "scalar")?;
                    d.set_item("dtype", array::numpy_name(*s))?;
                }
                ParamKind::Tensor {
                    elem,
                    shape,
                    read,
                    written,
                } => {
                    d.set_item("kind", "tensor")?;
                    d.set_item("dtype", array::numpy_name(*elem))?;
                    d.set_item("shape", self.kernel.shape_text(shape))?;
                    d.set_item("read", *read)?;
                    d.set_item("written", *written)?;
                }
            }
            list.append(d)?;
        }
        Ok(list)
    }

    /// The `@autotune` configurations, each a dict.
    #[getter]
    fn configs<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let list = PyList::empty(py);
        for c in self.program.configs(&self.name) {
            let d = PyDict::new(py);
            for (k, v) in c {
                d.set_item(k, v)?;
            }
            list.append(d)?;
        }
        Ok(list)
    }

    fn __repr__(&self) -> String {
        let params: Vec<String> = (self.kernel.params.iter())
            .map(|p| match &p.kind {
                ParamKind::Scalar(s) => format!("{}: {s}", p.name),
                ParamKind::Tensor { elem, shape, .. } => {
                    format!(
                        "{}: tensor<{elem}>{}",
                        p.name,
                        self.kernel.shape_text(shape)
                    )
                }
            })
            .collect();
        format!("<phobos.Kernel {}({})>", self.name, params.join(", "))
    }
}

impl Kernel {
    fn lowered(
        &self,
        config: Option<&Bound<'_, PyAny>>,
        precision_name: &str,
    ) -> PyResult<phobos_gpu::Compiled> {
        let cfg = match config {
            Some(c) => self::config(c)?,
            None => Vec::new(),
        };
        let kernel = self
            .checked(&cfg)
            .map_err(|e| PyValueError::new_err(format!("config: {e}")))?;
        let precision = phobos_gpu::Precision::parse(precision_name).ok_or_else(|| {
            PyValueError::new_err(format!(
                "precision must be 'exact' or 'fast', not {precision_name:?}"
            ))
        })?;
        let options = phobos_gpu::GpuOptions {
            precision,
            ..phobos_gpu::GpuOptions::for_kernel(&kernel)
        };
        phobos_gpu::compile(&kernel, &options).map_err(|e| PyRuntimeError::new_err(e.to_string()))
    }
}

/// A run's outputs and provenance (`Kernel.run`).
#[pyclass(frozen, module = "phobos")]
pub struct Run {
    /// The stored arrays by parameter name.
    #[pyo3(get)]
    outputs: Py<PyDict>,
    /// How the result was produced: backend, device, threads, precision,
    /// config, dims, grid, tuning, workgroup_size, compile_ms,
    /// compile_cache_hit, lowering.
    #[pyo3(get)]
    provenance: Py<PyDict>,
}

#[pymethods]
impl Run {
    /// The tile figure of an output (`phobos.figure` of its array under its
    /// name); `name` may be left out when the kernel stores one tensor.
    #[pyo3(signature = (name = None))]
    fn figure<'py>(&self, py: Python<'py>, name: Option<&str>) -> PyResult<Bound<'py, PyAny>> {
        let outputs = self.outputs.bind(py);
        let name = match name {
            Some(n) => n.to_string(),
            None if outputs.len() == 1 => outputs.keys().get_item(0)?.extract()?,
            None => {
                return Err(PyTypeError::new_err(format!(
                    "Run.figure: the kernel stores {} tensors {}; name one",
                    outputs.len(),
                    outputs.keys().repr()?
                )));
            }
        };
        let Some(array) = outputs.get_item(&name)? else {
            return Err(PyValueError::new_err(format!(
                "Run.figure: no output named {name:?}; the outputs are {}",
                outputs.keys().repr()?
            )));
        };
        py.import("phobos")?.getattr("figure")?.call1((array, name))
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "<phobos.Run outputs={} provenance={}>",
            self.outputs.bind(py).keys().repr()?,
            self.provenance.bind(py).repr()?
        ))
    }
}

/// The provenance as a dict, with the keys of `phobosc run --json`'s.
fn provenance<'py>(
    py: Python<'py>,
    p: &Provenance,
    k: &ir::Kernel,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("backend", p.backend.name())?;
    d.set_item("device", &p.device)?;
    d.set_item("threads", p.threads)?;
    d.set_item("precision", p.precision.name())?;
    let config = PyDict::new(py);
    for (n, v) in &p.config {
        config.set_item(n, v)?;
    }
    d.set_item("config", config)?;
    let dims = PyDict::new(py);
    for (n, v) in k.dims.iter().zip(&p.bound.dims) {
        dims.set_item(n, v)?;
    }
    d.set_item("dims", dims)?;
    d.set_item("grid", p.bound.grid.to_vec())?;
    d.set_item("tuning_cache", p.tuning.cache.name())?;
    d.set_item("tuning", json(py, &p.tuning.to_json())?)?;
    d.set_item("workgroup_size", p.workgroup_size)?;
    d.set_item("compile_ms", p.compile_ms)?;
    d.set_item("compile_cache_hit", p.cache_hit)?;
    d.set_item("lowering", &p.lowering)?;
    // `phobosc run --explain`'s plan: on the GPU, that of the module that
    // ran; else None.
    d.set_item("plan", &p.plan)?;
    Ok(d)
}

/// A JSON value as the Python value `json.loads` would give.
fn json<'py>(py: Python<'py>, v: &serde_json::Value) -> PyResult<Bound<'py, PyAny>> {
    use pyo3::IntoPyObjectExt;
    use serde_json::Value;
    Ok(match v {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => b.into_bound_py_any(py)?,
        Value::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(i), _, _) => i.into_bound_py_any(py)?,
            (_, Some(u), _) => u.into_bound_py_any(py)?,
            (_, _, f) => f.into_bound_py_any(py)?,
        },
        Value::String(s) => s.into_bound_py_any(py)?,
        Value::Array(a) => {
            let l = PyList::empty(py);
            for x in a {
                l.append(json(py, x)?)?;
            }
            l.into_any()
        }
        Value::Object(o) => {
            let d = PyDict::new(py);
            for (k, x) in o {
                d.set_item(k, json(py, x)?)?;
            }
            d.into_any()
        }
    })
}

/// A binder's refusal, naming the parameter.
fn bind_error(name: &str, e: BindError) -> PyErr {
    PyValueError::new_err(format!("`{name}`: {e}"))
}

/// A Python scalar as the text the binder parses for a parameter of type
/// `ty` (the text `phobosc run --arg` would take), refusing the wrong kind
/// of value: a float for an integer, an int or float for a bool.
fn scalar_text(name: &str, ty: Scalar, v: &Bound<'_, PyAny>) -> PyResult<String> {
    let wrong = |what: &str| {
        PyTypeError::new_err(format!(
            "`{name}` is a scalar {ty} ({}), but a {} was given",
            what,
            array::type_name(v)
        ))
    };
    match ty {
        Scalar::Bool => {
            let b: bool = v.extract().map_err(|_| wrong("True or False"))?;
            Ok(b.to_string())
        }
        Scalar::F32 | Scalar::F64 => {
            if v.is_instance_of::<PyBool>() {
                return Err(wrong("a float"));
            }
            let f: f64 = v.extract().map_err(|_| wrong("a float"))?;
            // Rust's shortest round-trip text; the binder reads it as the
            // CLI reads `--arg`, so an f32 gets the correctly rounded value.
            Ok(format!("{f:?}"))
        }
        _ => {
            if v.is_instance_of::<PyBool>() || v.is_instance_of::<PyFloat>() {
                return Err(wrong("an integer"));
            }
            if let Ok(i) = v.extract::<i64>() {
                Ok(i.to_string())
            } else if let Ok(u) = v.extract::<u64>() {
                Ok(u.to_string())
            } else if v.hasattr("__index__")? {
                Err(PyValueError::new_err(format!(
                    "`{name}`: {} is out of the range of {ty}",
                    v.repr()?
                )))
            } else {
                Err(wrong("an integer"))
            }
        }
    }
}

fn backend(v: &Bound<'_, PyAny>) -> PyResult<Backend> {
    let s: String = v.extract()?;
    Backend::parse(&s).ok_or_else(|| {
        PyValueError::new_err(format!(
            "backend must be 'auto', 'interp', 'cpu' or 'gpu', not {s:?}"
        ))
    })
}

fn precision(v: &Bound<'_, PyAny>) -> PyResult<Precision> {
    let s: String = v.extract()?;
    Precision::parse(&s).ok_or_else(|| {
        PyValueError::new_err(format!("precision must be 'exact' or 'fast', not {s:?}"))
    })
}

fn config(v: &Bound<'_, PyAny>) -> PyResult<Vec<(String, i64)>> {
    let d = v.cast::<PyDict>().map_err(|_| {
        PyTypeError::new_err(
            "config= takes a dict of @autotune parameters to values, such as {'R': 16}",
        )
    })?;
    let mut out = Vec::new();
    for (k, x) in d.iter() {
        let name: String = k.extract()?;
        let value: i64 = x
            .extract()
            .map_err(|_| PyTypeError::new_err(format!("config: `{name}` must be an integer")))?;
        out.push((name, value));
    }
    Ok(out)
}

/// `devices=`: `None`, a string as `--devices` takes it, or a list of its
/// items; checked against the adapters present before anything runs.
pub(crate) fn devices(v: &Bound<'_, PyAny>) -> PyResult<Option<Vec<DeviceSpec>>> {
    if v.is_none() {
        return Ok(None);
    }
    let text = match (v.extract::<String>(), v.extract::<Vec<String>>()) {
        (Ok(t), _) => t,
        (_, Ok(items)) => items.join(","),
        _ => {
            return Err(PyValueError::new_err(format!(
                "devices must be None, a string such as 'gpu0,cpu' or 'all', or a list of \
                 device names, not {}",
                v.repr()?
            )));
        }
    };
    let resolved = Devices::parse(&text).and_then(|d| d.resolve());
    resolved
        .map(Some)
        .map_err(|e| PyValueError::new_err(e.to_string()))
}

/// A split launch's devices for `Run.provenance['split']`, with the keys
/// of `phobosc run --json`'s `split`.
fn split_json<'py>(py: Python<'py>, run: &SplitRun) -> PyResult<Bound<'py, PyAny>> {
    json(py, &run.json())
}

fn threads(v: &Bound<'_, PyAny>) -> PyResult<Option<usize>> {
    match v.extract::<Option<usize>>() {
        Ok(Some(0)) | Err(_) => Err(PyValueError::new_err(format!(
            "threads must be None (every core) or a positive integer, not {}",
            v.repr()?
        ))),
        Ok(t) => Ok(t),
    }
}

/// The bytes the tensors a call makes may take: the host's available
/// memory ([`memory::available`]), read at most once a second, since
/// reading `/proc/meminfo` costs a good part of a small call's overhead
/// and the budget only guards against absurd extents.
fn budget() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::time::{Duration, Instant};
    static READ: Mutex<Option<Instant>> = Mutex::new(None);
    static BYTES: AtomicU64 = AtomicU64::new(0);
    let mut read = READ.lock().unwrap_or_else(|e| e.into_inner());
    if read.is_none_or(|at| at.elapsed() > Duration::from_secs(1)) {
        BYTES.store(memory::available(), Ordering::Relaxed);
        *read = Some(Instant::now());
    }
    BYTES.load(Ordering::Relaxed)
}
