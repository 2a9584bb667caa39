//! Whether a kernel's float results must be exact or may use a device's
//! native approximations: one type that the runtime, the GPU lowering, the
//! CLI and the Python package all name.

/// How float results are computed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Precision {
    /// The interpreter's bits on every backend: correctly rounded `/` and
    /// `sqrt`, the math functions as the language reference defines them,
    /// and on the GPU SPIR-V that keeps subnormals and never contracts
    /// `a * b + c`.
    #[default]
    Exact,
    /// The device's native `/`, `sqrt` and functions, contraction allowed,
    /// and tensor cores for `dot` where the GPU has them: faster, with
    /// results that may differ from the interpreter's.
    Fast,
}

impl Precision {
    pub fn name(self) -> &'static str {
        match self {
            Precision::Exact => "exact",
            Precision::Fast => "fast",
        }
    }

    /// Reads `exact` or `fast`.
    pub fn parse(s: &str) -> Option<Precision> {
        [Precision::Exact, Precision::Fast]
            .into_iter()
            .find(|p| p.name() == s)
    }
}
