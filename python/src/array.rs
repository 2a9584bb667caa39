//! Arrays in and out: any CPU array (a NumPy array, or an object with
//! `__array__` or `__dlpack__`, such as a torch CPU tensor) to a host
//! `Tensor` of the parameter's element type, and `Tensor`s back to NumPy
//! arrays, new or given (`out=`). Each conversion copies once: the
//! runtime's tensors own their data, and a copy is what lets the launch
//! run with the GIL released while Python threads go on.

use numpy::{
    Element, PyArray1, PyArrayDescrMethods, PyArrayDyn, PyArrayMethods, PyUntypedArray,
    PyUntypedArrayMethods, dtype,
};
use phobos_core::tensor::{Data, Tensor};
use phobos_core::types::Scalar;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;

/// NumPy's name for each element type.
pub fn numpy_name(s: Scalar) -> &'static str {
    match s {
        Scalar::Bool => "bool",
        Scalar::I32 => "int32",
        Scalar::U32 => "uint32",
        Scalar::I64 => "int64",
        Scalar::U64 => "uint64",
        Scalar::F32 => "float32",
        Scalar::F64 => "float64",
        Scalar::F16 => "float16",
        // NumPy has none: ml_dtypes' `bfloat16`, or its bits as uint16.
        Scalar::BF16 => "bfloat16",
    }
}

/// Runs `$body` with `$t` the Rust type of the element type `$s`.
macro_rules! with_elem {
    ($s:expr, $t:ident => $body:expr) => {
        match $s {
            Scalar::Bool => {
                type $t = bool;
                $body
            }
            Scalar::I32 => {
                type $t = i32;
                $body
            }
            Scalar::U32 => {
                type $t = u32;
                $body
            }
            Scalar::I64 => {
                type $t = i64;
                $body
            }
            Scalar::U64 => {
                type $t = u64;
                $body
            }
            Scalar::F32 => {
                type $t = f32;
                $body
            }
            Scalar::F64 => {
                type $t = f64;
                $body
            }
            Scalar::F16 => {
                type $t = half::f16;
                $body
            }
            // Its bits, through a uint16 view of the array ([`bits_view`]).
            Scalar::BF16 => {
                type $t = u16;
                $body
            }
        }
    };
}

/// A bf16 tensor's array as uint16 (the same memory): an array of
/// ml_dtypes' `bfloat16` or of uint16 bits. Other element types as they are.
fn bits_view<'py>(
    elem: Scalar,
    a: &Bound<'py, PyUntypedArray>,
) -> PyResult<Bound<'py, PyUntypedArray>> {
    if elem != Scalar::BF16 || a.dtype().is_equiv_to(&dtype::<u16>(a.py())) {
        return Ok(a.clone());
    }
    Ok(a.call_method1("view", ("uint16",))?
        .cast_into::<PyUntypedArray>()?)
}

/// Whether `a` holds bf16: ml_dtypes' `bfloat16`, or uint16 bits.
fn is_bf16(a: &Bound<'_, PyUntypedArray>) -> bool {
    a.dtype().is_equiv_to(&dtype::<u16>(a.py())) || a.dtype().str().is_ok_and(|s| s == "bfloat16")
}

/// `obj` as a NumPy array without copying where it can: a NumPy array as
/// it is, an object with `__array__` through `numpy.asarray`, one with
/// `__dlpack__` through `numpy.from_dlpack`. An array on a device other
/// than the CPU (a torch CUDA tensor) is refused with what to do.
pub fn as_ndarray<'py>(
    name: &str,
    obj: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyUntypedArray>> {
    if let Ok(a) = obj.cast::<PyUntypedArray>() {
        return Ok(a.clone());
    }
    let py = obj.py();
    if obj.hasattr("__dlpack_device__")? {
        // DLPack's device types: 1 is the CPU (3, pinned CUDA host memory,
        // is host memory too).
        let (device, _): (i64, i64) = obj.call_method0("__dlpack_device__")?.extract()?;
        if device != 1 && device != 3 {
            return Err(PyTypeError::new_err(format!(
                "`{name}`: the {} given is on a device (DLPack device type {device}), not on the CPU; copy it to the host first (for a torch tensor, `t.cpu()`)",
                type_name(obj)
            )));
        }
    }
    let numpy = py.import("numpy")?;
    let converted = if obj.hasattr("__array__")? || obj.hasattr("__array_interface__")? {
        numpy.call_method1("asarray", (obj,))?
    } else if obj.hasattr("__dlpack__")? {
        numpy.call_method1("from_dlpack", (obj,))?
    } else {
        return Err(PyTypeError::new_err(format!(
            "`{name}` is a tensor parameter: pass an array (NumPy, or any CPU array with __array__ or __dlpack__), not a {}",
            type_name(obj)
        )));
    };
    converted.cast_into::<PyUntypedArray>().map_err(|_| {
        PyTypeError::new_err(format!(
            "`{name}`: the {} given did not convert to a NumPy array",
            type_name(obj)
        ))
    })
}

/// The Python type's name of `obj`, for messages.
pub fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map_or_else(|_| "object".to_string(), |n| n.to_string())
}

/// Refuses `a` unless it holds `elem`, naming the parameter.
pub fn check_dtype(name: &str, elem: Scalar, a: &Bound<'_, PyUntypedArray>) -> PyResult<()> {
    let py = a.py();
    let same = if elem == Scalar::BF16 {
        is_bf16(a)
    } else {
        with_elem!(elem, T => a.dtype().is_equiv_to(&dtype::<T>(py)))
    };
    if same {
        return Ok(());
    }
    Err(PyTypeError::new_err(format!(
        "`{name}` must hold {elem} (numpy {}), but the array given has dtype {}; convert it with .astype(numpy.{})",
        numpy_name(elem),
        a.dtype(),
        numpy_name(elem),
    )))
}

/// A copy of `a` (of element type `elem`, checked) as a host tensor, in C
/// order whatever its strides.
pub fn to_tensor(name: &str, elem: Scalar, a: &Bound<'_, PyUntypedArray>) -> PyResult<Tensor> {
    let shape = a.shape().to_vec();
    let a = &bits_view(elem, a)?;
    let data = with_elem!(elem, T => {
        let typed = a.cast::<PyArrayDyn<T>>()?;
        let ro = typed.try_readonly().map_err(|e| {
            PyValueError::new_err(format!("`{name}`: the array given cannot be read: {e}"))
        })?;
        let v: Vec<T> = match ro.as_slice() {
            Ok(s) => s.to_vec(),
            Err(_) => ro.as_array().iter().copied().collect(),
        };
        wrap::<T>(v)
    });
    Ok(Tensor { shape, data })
}

/// Refuses an array the launch would write into but cannot: read-only or
/// borrowed elsewhere.
pub fn check_writable(name: &str, elem: Scalar, a: &Bound<'_, PyUntypedArray>) -> PyResult<()> {
    let a = &bits_view(elem, a)?;
    with_elem!(elem, T => {
        let typed = a.cast::<PyArrayDyn<T>>()?;
        typed.try_readwrite().map(drop).map_err(|e| {
            PyValueError::new_err(format!(
                "`{name}`: the kernel writes it, but the array given cannot be written ({e})"
            ))
        })
    })
}

/// Copies `t` into the given array `a` (same dtype and shape, checked
/// before the launch), whatever its strides.
pub fn write_into(name: &str, t: Tensor, a: &Bound<'_, PyUntypedArray>) -> PyResult<()> {
    let a = &bits_view(t.elem(), a)?;
    with_elem!(t.elem(), T => {
        let v: Vec<T> = unwrap::<T>(t.data);
        let typed = a.cast::<PyArrayDyn<T>>()?;
        let mut rw = typed.try_readwrite().map_err(|e| {
            PyValueError::new_err(format!("`{name}`: cannot write the result into the array given: {e}"))
        })?;
        match rw.as_slice_mut() {
            Ok(s) => s.copy_from_slice(&v),
            Err(_) => {
                for (d, s) in rw.as_array_mut().iter_mut().zip(v) {
                    *d = s;
                }
            }
        }
        Ok(())
    })
}

/// `t` as a new NumPy array, taking its buffer without copying.
pub fn to_numpy<'py>(py: Python<'py>, t: Tensor) -> PyResult<Bound<'py, PyAny>> {
    let shape = t.shape.clone();
    let elem = t.elem();
    let array = with_elem!(elem, T => {
        let flat = PyArray1::<T>::from_vec(py, unwrap::<T>(t.data));
        flat.reshape(shape)?.into_any()
    });
    // bf16 as ml_dtypes' `bfloat16` where it is installed, else its bits.
    if elem == Scalar::BF16
        && let Ok(ml) = py.import("ml_dtypes")
    {
        return array.call_method1("view", (ml.getattr("bfloat16")?,));
    }
    Ok(array)
}

/// Element types and `Data`'s variants, both ways.
trait Stored: Element + Copy {
    fn wrap(v: Vec<Self>) -> Data;
    fn unwrap(d: Data) -> Option<Vec<Self>>;
}

macro_rules! stored {
    ($t:ty, $variant:ident) => {
        impl Stored for $t {
            fn wrap(v: Vec<Self>) -> Data {
                Data::$variant(v)
            }
            fn unwrap(d: Data) -> Option<Vec<Self>> {
                match d {
                    Data::$variant(v) => Some(v),
                    _ => None,
                }
            }
        }
    };
}

stored!(bool, Bool);
stored!(i32, I32);
stored!(u32, U32);
stored!(i64, I64);
stored!(u64, U64);
stored!(f32, F32);
stored!(f64, F64);
stored!(half::f16, F16);

/// bf16 tensors cross as their bits.
impl Stored for u16 {
    fn wrap(v: Vec<Self>) -> Data {
        Data::BF16(v.into_iter().map(half::bf16::from_bits).collect())
    }
    fn unwrap(d: Data) -> Option<Vec<Self>> {
        match d {
            Data::BF16(v) => Some(v.into_iter().map(half::bf16::to_bits).collect()),
            _ => None,
        }
    }
}

fn wrap<T: Stored>(v: Vec<T>) -> Data {
    T::wrap(v)
}

fn unwrap<T: Stored>(d: Data) -> Vec<T> {
    T::unwrap(d).expect("a tensor's data has its element type")
}
