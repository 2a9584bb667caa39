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

/// The numpy type string of an element type. NumPy has no bfloat16: a
/// bf16 tensor is written as its bits, `<u2` (view it with
/// `ml_dtypes.bfloat16`), and read from `<u2` or from the `V2` that
/// `np.save` writes for an `ml_dtypes.bfloat16` array ([`accepts`]).
pub fn descr(elem: Scalar) -> &'static str {
    match elem {
        Scalar::F16 => "<f2",
        Scalar::BF16 => "<u2",
        Scalar::Bool => "|b1",
        Scalar::I32 => "<i4",
        Scalar::U32 => "<u4",
        Scalar::I64 => "<i8",
        Scalar::U64 => "<u8",
        Scalar::F32 => "<f4",
        Scalar::F64 => "<f8",
    }
}

/// Whether a file of type string `got` may fill a tensor of `elem`.
fn accepts(elem: Scalar, got: &str) -> bool {
    got == descr(elem) || elem == Scalar::BF16 && matches!(got, "<V2" | "|V2")
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
    if !accepts(elem, &got) {
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
        Scalar::F16 => Data::F16(npy.into_vec().map_err(|e| err(e.to_string()))?),
        Scalar::BF16 if got.ends_with("V2") => Data::BF16(
            npy.into_vec::<npyz::FixedSizeBytes<2>>()
                .map_err(|e| err(e.to_string()))?
                .into_iter()
                .map(|b| half::bf16::from_le_bytes(b.0))
                .collect(),
        ),
        Scalar::BF16 => Data::BF16(
            npy.into_vec::<u16>()
                .map_err(|e| err(e.to_string()))?
                .into_iter()
                .map(half::bf16::from_bits)
                .collect(),
        ),
    };
    Ok(Tensor { shape, data })
}

/// The `.npy` (version 1.0) header of a C-order array of `elem` with this
/// shape: the magic string, the version, the header's length, and the
/// dictionary numpy writes, padded with spaces so the data starts at a
/// multiple of 64 bytes.
fn header(elem: Scalar, shape: &[usize]) -> Option<Vec<u8>> {
    let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
    let shape = match dims.as_slice() {
        [one] => format!("({one},)"),
        _ => format!("({})", dims.join(", ")),
    };
    let mut dict = format!(
        "{{'descr': '{}', 'fortran_order': False, 'shape': {shape}, }}",
        descr(elem)
    );
    let total = 10 + dict.len() + 1;
    dict.push_str(&" ".repeat(total.next_multiple_of(64) - total));
    dict.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend(u16::try_from(dict.len()).ok()?.to_le_bytes());
    out.extend(dict.bytes());
    Some(out)
}

/// A `.npy` file being written: its header is written when it is
/// created, then the elements' little-endian bytes in order, in pieces as
/// they come (from the GPU's read-back, say), so no copy of the tensor is
/// needed to write it.
pub struct Writer {
    file: std::fs::File,
    param: String,
    path: String,
    /// The data bytes the header promises, and those written so far.
    expected: u64,
    written: u64,
}

impl Writer {
    /// Creates the file for parameter `param` and writes the header of a
    /// C-order array of `elem` with this shape.
    pub fn create(
        param: &str,
        path: &Path,
        elem: Scalar,
        shape: &[usize],
    ) -> Result<Writer, NpyError> {
        use std::io::Write;
        let mut w = Writer {
            file: std::fs::File::create(path).map_err(|e| NpyError {
                param: param.to_string(),
                path: path.display().to_string(),
                why: format!("cannot write the file: {e}"),
            })?,
            param: param.to_string(),
            path: path.display().to_string(),
            expected: shape.iter().product::<usize>() as u64 * elem.size() as u64,
            written: 0,
        };
        let head = header(elem, shape).ok_or_else(|| {
            w.err(format!(
                "a shape of {} axes is too long for a .npy header",
                shape.len()
            ))
        })?;
        w.file.write_all(&head).map_err(|e| w.io(e))?;
        Ok(w)
    }

    fn err(&self, why: String) -> NpyError {
        NpyError {
            param: self.param.clone(),
            path: self.path.clone(),
            why,
        }
    }

    fn io(&self, e: std::io::Error) -> NpyError {
        self.err(format!("cannot write the file: {e}"))
    }

    /// Appends the next elements, as little-endian bytes.
    pub fn write_bytes(&mut self, bytes: &[u8]) -> Result<(), NpyError> {
        use std::io::Write;
        self.file.write_all(bytes).map_err(|e| self.io(e))?;
        self.written += bytes.len() as u64;
        Ok(())
    }

    /// Whether every element the header promises has been written.
    pub fn complete(&self) -> bool {
        self.written == self.expected
    }

    /// Ends the file; an error if fewer or more bytes came than the header
    /// promises.
    pub fn finish(mut self) -> Result<(), NpyError> {
        use std::io::Write;
        if !self.complete() {
            return Err(self.err(format!(
                "{} bytes of elements written where the shape needs {}",
                self.written, self.expected
            )));
        }
        self.file.flush().map_err(|e| self.io(e))
    }
}

/// Writes a tensor as `.npy`: the header, then the elements little-endian:
/// on a little-endian host straight from the tensor's memory in one write
/// (no copy), else in pieces of 64 Ki elements.
pub fn write(param: &str, path: &Path, t: &Tensor) -> Result<(), NpyError> {
    let mut w = Writer::create(param, path, t.elem(), &t.shape)?;
    if cfg!(target_endian = "little")
        && let Some(bytes) = crate::gpu::bytes_of(&t.data)
    {
        w.write_bytes(bytes)?;
        return w.finish();
    }
    let mut buf = Vec::with_capacity(8 << 16);
    macro_rules! put {
        ($v:expr, $bytes:expr) => {{
            for piece in $v.chunks(1 << 16) {
                buf.clear();
                for x in piece {
                    buf.extend_from_slice(&$bytes(*x));
                }
                w.write_bytes(&buf)?;
            }
        }};
    }
    match &t.data {
        Data::Bool(v) => put!(v, |b: bool| [u8::from(b)]),
        Data::I32(v) => put!(v, i32::to_le_bytes),
        Data::U32(v) => put!(v, u32::to_le_bytes),
        Data::I64(v) => put!(v, i64::to_le_bytes),
        Data::U64(v) => put!(v, u64::to_le_bytes),
        Data::F32(v) => put!(v, f32::to_le_bytes),
        Data::F64(v) => put!(v, f64::to_le_bytes),
        Data::F16(v) => put!(v, half::f16::to_le_bytes),
        Data::BF16(v) => put!(v, half::bf16::to_le_bytes),
    }
    w.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use phobos_core::types::Value;

    /// Every element type and a rank of 0, 1 and 3 round-trips through the
    /// file, and npyz reads the header the way numpy writes it.
    #[test]
    fn tensors_round_trip_through_npy_files() {
        let dir = std::env::temp_dir().join(format!("phobos-npy-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.npy");
        for elem in [
            Scalar::Bool,
            Scalar::I32,
            Scalar::U32,
            Scalar::I64,
            Scalar::U64,
            Scalar::F32,
            Scalar::F64,
            Scalar::F16,
            Scalar::BF16,
        ] {
            for shape in [&[][..], &[70_000][..], &[2, 3, 5][..]] {
                let t = Tensor::from_fn(elem, shape, |i| Value::I64(i as i64 * 7 - 3));
                write("T", &path, &t).unwrap();
                let bytes = std::fs::read(&path).unwrap();
                let data_at = 10 + u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
                assert_eq!(data_at % 64, 0, "{elem} {shape:?}");
                let back = read("T", &path, elem).unwrap();
                assert!(back.bits_eq(&t), "{elem} {shape:?}");
            }
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
