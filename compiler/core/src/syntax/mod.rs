//! Syntax: text to tree. `parse` never fails; it returns the tree it could
//! read and the diagnostics for the rest.

pub mod ast;
mod print;
pub mod token;

use lalrpop_util::{ErrorRecovery, ParseError, lalrpop_mod};

use crate::diag::{Diagnostic, code};
use crate::span::{Span, SrcId};
use ast::{Annotation, FnDef, KernelDef};
use token::{LexError, Tok};

pub use print::print_file;

lalrpop_mod!(
    #[allow(clippy::all, clippy::pedantic, unused)]
    grammar,
    "/syntax/grammar.rs"
);

/// A top-level item as the grammar reads it, before annotations are attached
/// to the kernel that follows them.
#[derive(Clone, Debug)]
pub enum RawItem {
    Fn(FnDef),
    Kernel(KernelDef),
    Annotation(Annotation),
    Error(Span),
}

/// Parses one source text.
pub fn parse(src: SrcId, text: &str) -> (ast::File, Vec<Diagnostic>) {
    let (tokens, bad) = token::lex(text);
    // The token after a bad character is where the parser trips over the
    // gap; that error says nothing new, so it is dropped.
    let after_bad: Vec<usize> = bad
        .iter()
        .filter_map(|r| tokens.iter().find(|(lo, _, _)| *lo >= r.end).map(|t| t.0))
        .collect();
    let mut diags: Vec<Diagnostic> = bad
        .into_iter()
        .map(|r| {
            let span = Span::new(src, r.start, r.end);
            Diagnostic::error(
                code::LEX,
                format!("unexpected character `{}`", &text[r.clone()]),
            )
            .label(span, "not part of any token")
            .help("remove it; comments start with `//`")
        })
        .collect();
    let mut recovered = Vec::new();
    let end = text.len();
    let result = grammar::FileParser::new().parse(
        src,
        &mut recovered,
        tokens.into_iter().map(Ok::<_, LexError>),
    );
    let items = match result {
        Ok(items) => items,
        Err(e) => {
            diags.push(parse_error(src, end, e));
            Vec::new()
        }
    };
    diags.extend(
        recovered
            .into_iter()
            .map(|r| parse_error(src, end, r.error))
            .filter(|d| {
                !(d.code == code::PARSE
                    && d.span()
                        .is_some_and(|s| after_bad.contains(&(s.lo as usize))))
            }),
    );
    let file = attach_annotations(items, &mut diags);
    diags.sort_by_key(|d| d.span());
    diags.dedup();
    (file, diags)
}

/// Parses a lone expression that starts at byte `offset` of source `src`
/// (the `// check` lines of a file).
pub fn parse_expr(src: SrcId, text: &str, offset: usize) -> Result<ast::Expr, Vec<Diagnostic>> {
    let (tokens, bad) = token::lex(text);
    if let Some(r) = bad.first() {
        return Err(vec![
            Diagnostic::error(code::LEX, "unexpected character").label(
                Span::new(src, r.start + offset, r.end + offset),
                "not part of any token",
            ),
        ]);
    }
    let tokens: Vec<_> = tokens
        .into_iter()
        .map(|(lo, t, hi)| (lo + offset, t, hi + offset))
        .collect();
    let mut recovered: Vec<ErrorRecovery<usize, Tok<'_>, LexError>> = Vec::new();
    grammar::ExprParser::new()
        .parse(
            src,
            &mut recovered,
            tokens.into_iter().map(Ok::<_, LexError>),
        )
        .map_err(|e| vec![parse_error(src, offset + text.len(), e)])
}

fn parse_error(src: SrcId, end: usize, e: ParseError<usize, Tok<'_>, LexError>) -> Diagnostic {
    match e {
        ParseError::UnrecognizedToken {
            token: (lo, tok, hi),
            expected,
        } => Diagnostic::error(code::PARSE, format!("unexpected {tok}"))
            .label(Span::new(src, lo, hi), "not expected here")
            .help(expected_help(&expected)),
        ParseError::UnrecognizedEof { location, expected } => {
            let at = location.min(end);
            Diagnostic::error(code::PARSE, "unexpected end of file")
                .label(Span::new(src, at, at), "the file ends here")
                .help(expected_help(&expected))
        }
        ParseError::ExtraToken {
            token: (lo, tok, hi),
        } => Diagnostic::error(code::PARSE, format!("unexpected {tok}"))
            .label(Span::new(src, lo, hi), "extra token")
            .help("remove it"),
        ParseError::InvalidToken { location } => Diagnostic::error(code::LEX, "invalid token")
            .label(Span::new(src, location, location), "here"),
        ParseError::User { error: LexError } => {
            Diagnostic::error(code::LEX, "invalid token").label(Span::new(src, 0, 0), "here")
        }
    }
}

fn expected_help(expected: &[String]) -> String {
    let names: Vec<String> = expected
        .iter()
        .map(|e| match e.as_str() {
            "IdentTok" => "a name".to_string(),
            "IntTok" => "an integer".to_string(),
            "FloatTok" => "a number".to_string(),
            "\"\\n\"" => "end of line".to_string(),
            other => format!("`{}`", other.trim_matches('"')),
        })
        .collect();
    match names.len() {
        0 => "check the syntax near here".to_string(),
        1..=8 => format!("expected {}", names.join(", ")),
        _ => format!("expected one of {} and others", names[..8].join(", ")),
    }
}

/// Moves each run of annotations onto the kernel after it.
fn attach_annotations(items: Vec<RawItem>, diags: &mut Vec<Diagnostic>) -> ast::File {
    let mut file = ast::File::default();
    let mut pending: Vec<Annotation> = Vec::new();
    for item in items {
        match item {
            RawItem::Annotation(a) => pending.push(a),
            RawItem::Kernel(mut k) => {
                k.annotations = std::mem::take(&mut pending);
                file.kernels.push(k);
            }
            RawItem::Fn(f) => {
                dangling(&mut pending, diags);
                file.fns.push(f);
            }
            RawItem::Error(_) => pending.clear(),
        }
    }
    dangling(&mut pending, diags);
    file
}

fn dangling(pending: &mut Vec<Annotation>, diags: &mut Vec<Diagnostic>) {
    for a in pending.drain(..) {
        diags.push(
            Diagnostic::error(
                code::ANNOTATION,
                format!("`@{}` is not followed by a kernel", a.name.name),
            )
            .label(a.span, "this annotation applies to nothing")
            .help("put annotations directly before `kernel`"),
        );
    }
}

/// Reads an integer literal (decimal or `0x` hex, `_` separators). Values
/// beyond i128 saturate; the checker reports them as out of range.
pub fn parse_int(text: &str) -> i128 {
    let digits: String = text.chars().filter(|&c| c != '_').collect();
    let parsed = match digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        Some(hex) => i128::from_str_radix(hex, 16),
        None => digits.parse::<i128>(),
    };
    parsed.unwrap_or(i128::MAX)
}
