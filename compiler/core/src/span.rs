//! Source files and byte spans: what every diagnostic points into.

use std::ops::Range;

/// Identifies one source text in a [`SourceMap`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct SrcId(pub u32);

/// A byte range in one source text.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Span {
    pub src: SrcId,
    pub lo: u32,
    pub hi: u32,
}

impl Span {
    pub fn new(src: SrcId, lo: usize, hi: usize) -> Span {
        Span {
            src,
            lo: lo as u32,
            hi: hi as u32,
        }
    }

    /// The smallest span covering both; `self`'s source wins if they differ.
    pub fn to(self, other: Span) -> Span {
        if self.src != other.src {
            return self;
        }
        Span {
            src: self.src,
            lo: self.lo.min(other.lo),
            hi: self.hi.max(other.hi),
        }
    }

    pub fn range(self) -> Range<usize> {
        self.lo as usize..self.hi as usize
    }
}

/// The named source texts of one compilation: the user's files and the stdlib.
#[derive(Clone, Debug, Default)]
pub struct SourceMap {
    files: Vec<(String, String)>,
}

impl SourceMap {
    pub fn new() -> SourceMap {
        SourceMap::default()
    }

    pub fn add(&mut self, name: impl Into<String>, text: impl Into<String>) -> SrcId {
        self.files.push((name.into(), text.into()));
        SrcId(self.files.len() as u32 - 1)
    }

    pub fn name(&self, id: SrcId) -> &str {
        &self.files[id.0 as usize].0
    }

    pub fn text(&self, id: SrcId) -> &str {
        &self.files[id.0 as usize].1
    }

    /// The text a span covers.
    pub fn slice(&self, span: Span) -> &str {
        self.text(span.src).get(span.range()).unwrap_or("")
    }

    pub fn ids(&self) -> impl DoubleEndedIterator<Item = SrcId> {
        (0..self.files.len() as u32).map(SrcId)
    }
}
