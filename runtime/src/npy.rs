//! `.npy` files in and out, through npyz. Errors name the parameter.
//!
//! Both directions stream through a buffer of the file: neither holds a
//! second copy of the tensor's bytes, which at 3 GiB tensors is the
//! difference between fitting in memory and not.

use phobos_core::tensor::{Data, Tensor};
use phobos_core::types::Scalar;
use std::fmt;
use std::path::Path;

#[derive(Debug)]
pub struct NpyError {
    pub param: String,
    pub path: String,
    pub why: String,
}

impl fmt::Display for NpyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}` ({}): {}", self.param, self.path, self.why)
    }
}

impl std::error::Error for NpyError {}

/// The numpy type string of an element type.
pub fn descr(elem: Scalar) -> &'static str {
    match elem {
        Scalar::Bool => "|b1",
        Scalar::I32 => "<i4",
        Scalar::U32 => "<u4",
        Scalar::I64 => "<i8",
        Scalar::U64 => "<u8",
        Scalar::F32 => "<f4",
        Scalar::F64 => "<f8",
    }
}

/// Reads the tensor for parameter `param`, which must hold `elem`.
pub fn read(param: &str, path: &Path, elem: Scalar) -> Result<Tensor, NpyError> {
    let err = |why: String| NpyError {
        param: param.to_string(),
        path: path.display().to_string(),
        why,
    };
    let file = std::fs::File::open(path).map_err(|e| err(format!("cannot read the file: {e}")))?;
    let npy = npyz::NpyFile::new(std::io::BufReader::with_capacity(1 << 20, file))
        .map_err(|e| err(format!("not a .npy file: {e}")))?;
    let got = match npy.dtype() {
        npyz::DType::Plain(ts) => ts.to_string(),
        other => other.descr(),
    };
    if got != descr(elem) {
        return Err(err(format!(
            "expected dtype {} ({elem}), but the file holds {got}",
            descr(elem)
        )));
    }
    if npy.order() != npyz::Order::C {
        return Err(err(
            "the array is in Fortran order; save it in C order".to_string()
        ));
    }
    let shape: Vec<usize> = npy.shape().iter().map(|&d| d as usize).collect();
    let data = match elem {
        Scalar::Bool => Data::Bool(npy.into_vec::<bool>().map_err(|e| err(e.to_string()))?),
        Scalar::I32 => Data::I32(npy.into_vec().map_err(|e| err(e.to_string()))?),
        Scalar::U32 => Data::U32(npy.into_vec().map_err(|e| err(e.to_string()))?),
        Scalar::I64 => Data::I64(npy.into_vec().map_err(|e| err(e.to_string()))?),
        Scalar::U64 => Data::U64(npy.into_vec().map_err(|e| err(e.to_string()))?),
        Scalar::F32 => Data::F32(npy.into_vec().map_err(|e| err(e.to_string()))?),
        Scalar::F64 => Data::F64(npy.into_vec().map_err(|e| err(e.to_string()))?),
    };
    Ok(Tensor { shape, data })
}

/// Writes a tensor as `.npy`.
pub fn write(param: &str, path: &Path, t: &Tensor) -> Result<(), NpyError> {
    let err = |why: String| NpyError {
        param: param.to_string(),
        path: path.display().to_string(),
        why,
    };
    let file =
        std::fs::File::create(path).map_err(|e| err(format!("cannot write the file: {e}")))?;
    let mut out = std::io::BufWriter::with_capacity(1 << 20, file);
    let shape: Vec<u64> = t.shape.iter().map(|&d| d as u64).collect();
    macro_rules! put {
        ($v:expr) => {{
            use npyz::WriterBuilder;
            let mut w = npyz::WriteOptions::new()
                .default_dtype()
                .shape(&shape)
                .writer(&mut out)
                .begin_nd()
                .map_err(|e| err(e.to_string()))?;
            w.extend($v.iter().copied())
                .map_err(|e| err(e.to_string()))?;
            w.finish().map_err(|e| err(e.to_string()))?;
        }};
    }
    match &t.data {
        Data::Bool(v) => put!(v),
        Data::I32(v) => put!(v),
        Data::U32(v) => put!(v),
        Data::I64(v) => put!(v),
        Data::U64(v) => put!(v),
        Data::F32(v) => put!(v),
        Data::F64(v) => put!(v),
    }
    use std::io::Write;
    out.flush()
        .map_err(|e| err(format!("cannot write the file: {e}")))
}
