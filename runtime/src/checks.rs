//! Evaluating a file's `// check NAME: EXPR` lines on a kernel's results.

use phobos_core::Program;
use phobos_core::interp;
use phobos_core::ir::{Kernel, ParamKind};
use phobos_core::launch::{Arg, bind};
use phobos_core::tensor::Tensor;
use std::fmt;

/// For how many elements a check held.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckResult {
    pub name: String,
    pub holds: usize,
    pub total: usize,
}

impl CheckResult {
    pub fn all(&self) -> bool {
        self.holds == self.total
    }
}

#[derive(Debug)]
pub struct CheckError {
    pub check: String,
    pub why: String,
}

impl fmt::Display for CheckError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "check `{}`: {}", self.check, self.why)
    }
}

impl std::error::Error for CheckError {}

/// Runs the checks of kernel `name` (checked as `kernel`) over `args`, the
/// arguments after the kernel ran. Checks run on the interpreter; an element
/// holds when the check's value there is nonzero (or true).
pub fn evaluate(
    program: &Program,
    name: &str,
    kernel: &Kernel,
    args: &[Arg],
) -> Result<Vec<CheckResult>, CheckError> {
    let mut out = Vec::new();
    for check in program.checks_for(name) {
        let err = |why: String| CheckError {
            check: check.name.clone(),
            why,
        };
        let ck = program
            .check_kernel(name, &kernel.config, check)
            .map_err(|d| err(d.first().map_or(String::new(), |d| d.message.clone())))?;
        let bound = bind(kernel, args).map_err(|e| err(e.to_string()))?;
        let ParamKind::Tensor { elem, shape, .. } =
            &ck.params.last().expect("the check output is last").kind
        else {
            unreachable!("the check output is a tensor")
        };
        let extents: Vec<usize> = shape.iter().map(|d| d.extent(&bound.dims)).collect();
        let mut cargs = args.to_vec();
        cargs.push(Arg::Tensor(Tensor::zeros(*elem, &extents)));
        interp::run(&ck, &mut cargs).map_err(|e| err(e.to_string()))?;
        let Some(Arg::Tensor(t)) = cargs.last() else {
            unreachable!("pushed above")
        };
        let holds = (0..t.len()).filter(|&i| t.get(i).as_f64() != 0.0).count();
        out.push(CheckResult {
            name: check.name.clone(),
            holds,
            total: t.len(),
        });
    }
    Ok(out)
}
