//! Diagnostics as plain data, and the one place that renders them (ariadne).
//!
//! Every stage reports problems as [`Diagnostic`] values; nothing else in the
//! compiler formats an error for a person.

use crate::span::{SourceMap, Span, SrcId};
use ariadne::{CharSet, Config, IndexType, Label as ALabel, Report, ReportKind};

/// The diagnostic classes, each with a stable code. `docs/language.md` lists
/// them and `tests/fixtures/err` has a fixture for each.
pub mod code {
    pub const LEX: &str = "E0001";
    pub const PARSE: &str = "E0002";
    pub const UNKNOWN_NAME: &str = "E0100";
    pub const UNKNOWN_FN: &str = "E0101";
    pub const ARITY: &str = "E0102";
    pub const TYPE_MISMATCH: &str = "E0103";
    pub const SHAPE_MISMATCH: &str = "E0104";
    pub const IOTA_OUTSIDE: &str = "E0105";
    pub const IOTA_IN_LET: &str = "E0106";
    pub const SLICE_OUT_OF_BOUNDS: &str = "E0107";
    pub const STORE_TO_INPUT: &str = "E0108";
    pub const RECURSION: &str = "E0109";
    pub const UNUSED_TUNE_PARAM: &str = "E0110";
    pub const UNDECLARED_TUNE_PARAM: &str = "E0111";
    pub const INT_OUT_OF_RANGE: &str = "E0112";
    pub const GRID_NOT_INFERRED: &str = "E0113";
    pub const DUPLICATE: &str = "E0114";
    pub const ANNOTATION: &str = "E0115";
    pub const NOT_A_PLACE: &str = "E0116";
    pub const BAD_OPERAND: &str = "E0117";
    pub const RANK: &str = "E0118";
    pub const NOT_CONSTANT: &str = "E0119";
    pub const UNKNOWN_TYPE: &str = "E0120";
    pub const BAD_FIELD: &str = "E0121";
    pub const NO_KERNEL: &str = "E0122";
    /// A `let` or `var` tile beyond `bounds::MAX_TILE_BYTES`.
    pub const TILE_TOO_LARGE: &str = "E0123";
    /// An `@autotune` space of more than `bounds::MAX_TUNE_CONFIGS`.
    pub const TUNE_SPACE_TOO_LARGE: &str = "E0124";
    /// `fn` calls nested deeper than `bounds::MAX_CALL_DEPTH`.
    pub const CALLS_TOO_DEEP: &str = "E0125";
    /// A reduction's axis: not written `axis = k`, or not an axis of the
    /// operand; and a keyword argument anywhere else.
    pub const BAD_AXIS: &str = "E0130";
    /// `argmax` or `argmin` of an axis of extent 0.
    pub const EMPTY_REDUCTION: &str = "E0131";
    /// `iota` inside the operand of a reduction.
    pub const IOTA_IN_REDUCTION: &str = "E0132";
    /// A `for` bound not built from constants, dims and enclosing loop
    /// variables.
    pub const LOOP_BOUND: &str = "E0133";
    /// A value that would change the type of a loop's accumulator.
    pub const ACCUMULATOR_TYPE: &str = "E0134";
    /// A kernel whose workgroup memory, as the GPU backend places its
    /// values, is more than the target's limit (`phobosc build
    /// --workgroup-memory`, WebGPU's default 16,384 bytes). A target's
    /// limit, not the checker's: tested through `phobosc build`
    /// (`compiler/cli/tests/cli.rs`), not by a fixture of `tests/fixtures/err`.
    pub const WORKGROUP_MEMORY: &str = "E0140";
    /// A kernel that binds more tensors than the target's storage buffers
    /// a shader stage (`phobosc build --storage-buffers`, WebGPU's default
    /// 8). Tested like `E0140`.
    pub const STORAGE_BUFFERS: &str = "E0141";
    /// A `let` or `var` tile the GPU backend keeps in workgroup memory
    /// whose extent depends on a dim (workgroup memory has a constant
    /// size): `phobosc build` without `--dim`. A launch specialises the
    /// kernel itself. Tested like `E0140`.
    pub const SYMBOLIC_TILE: &str = "E0142";
    /// A compiler bug: the checked IR failed verification.
    pub const INTERNAL: &str = "E0900";
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    Error,
    Warning,
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Label {
    pub span: Span,
    pub message: String,
}

/// One problem: a code, a message, labelled spans (the first is primary),
/// notes, and a help line saying what to do.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Diagnostic {
    pub severity: Severity,
    pub code: &'static str,
    pub message: String,
    pub labels: Vec<Label>,
    pub notes: Vec<String>,
    pub help: Option<String>,
}

impl Diagnostic {
    pub fn error(code: &'static str, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Error,
            code,
            message: message.into(),
            labels: Vec::new(),
            notes: Vec::new(),
            help: None,
        }
    }

    pub fn label(mut self, span: Span, message: impl Into<String>) -> Diagnostic {
        self.labels.push(Label {
            span,
            message: message.into(),
        });
        self
    }

    pub fn note(mut self, note: impl Into<String>) -> Diagnostic {
        self.notes.push(note.into());
        self
    }

    pub fn help(mut self, help: impl Into<String>) -> Diagnostic {
        self.help = Some(help.into());
        self
    }

    /// The primary span, where the problem is.
    pub fn span(&self) -> Option<Span> {
        self.labels.first().map(|l| l.span)
    }
}

/// Renders diagnostics for a terminal (`color`) or for snapshots and logs.
pub fn render(diags: &[Diagnostic], sources: &SourceMap, color: bool) -> String {
    let mut out = Vec::new();
    // One cache for the call, filled on demand: ariadne indexes the lines of
    // a file once, and only of the files a label points into. (Indexing
    // every file, the stdlib's included, for every diagnostic was most of
    // the time `phobosc check` spent on a file with errors.) A name given
    // twice means the file added last, as a map of all of them would.
    let mut cache = ariadne::FnCache::new(|name: &String| {
        sources
            .ids()
            .rev()
            .find(|id| sources.name(*id) == name)
            .map(|id| sources.text(id))
            .ok_or_else(|| format!("no source named {name}"))
    });
    for d in diags {
        render_one(d, sources, color, &mut cache, &mut out);
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn render_one(
    d: &Diagnostic,
    sources: &SourceMap,
    color: bool,
    cache: &mut impl ariadne::Cache<String>,
    out: &mut Vec<u8>,
) {
    if d.labels.is_empty() {
        let mut text = format!("[{}] Error: {}\n", d.code, d.message);
        for n in &d.notes {
            text.push_str(&format!("  Note: {n}\n"));
        }
        if let Some(h) = &d.help {
            text.push_str(&format!("  Help: {h}\n"));
        }
        out.extend_from_slice(text.as_bytes());
        return;
    }
    let kind = match d.severity {
        Severity::Error => ReportKind::Error,
        Severity::Warning => ReportKind::Warning,
    };
    let name = |id: SrcId| sources.name(id).to_string();
    let anchor = d.span().unwrap_or_default();
    let config = Config::default()
        .with_color(color)
        .with_index_type(IndexType::Byte)
        .with_char_set(if color {
            CharSet::Unicode
        } else {
            CharSet::Ascii
        });
    let mut report = Report::build(kind, (name(anchor.src), anchor.range()))
        .with_config(config)
        .with_code(d.code)
        .with_message(&d.message);
    for (i, l) in d.labels.iter().enumerate() {
        let label = ALabel::new((name(l.span.src), l.span.range()))
            .with_message(&l.message)
            .with_order(i as i32);
        report.add_label(label);
    }
    for n in &d.notes {
        report.add_note(n);
    }
    if let Some(h) = &d.help {
        report.set_help(h);
    }
    if report.finish().write(cache, &mut *out).is_err() {
        out.extend_from_slice(format!("error[{}]: {}\n", d.code, d.message).as_bytes());
    }
}
