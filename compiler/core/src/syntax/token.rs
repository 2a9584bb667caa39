//! Tokens (logos) and the newline filter that makes statements end at line ends.

use logos::Logos;
use std::fmt;

/// A lexing failure; logos needs a `Default` error.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LexError;

#[derive(Logos, Clone, Copy, Debug, PartialEq)]
#[logos(error = LexError)]
#[logos(skip r"[ \t\r\f]+")]
#[logos(skip(r"//[^\n]*", allow_greedy = true))]
pub enum Tok<'a> {
    #[token("\n")]
    Newline,
    #[token("fn")]
    Fn,
    #[token("kernel")]
    Kernel,
    #[token("let")]
    Let,
    #[token("var")]
    Var,
    #[token("tensor")]
    Tensor,
    #[token("tile")]
    Tile,
    #[token("bitcast")]
    Bitcast,
    #[token("in")]
    In,
    #[token("for")]
    For,
    #[token("true")]
    True,
    #[token("false")]
    False,
    #[regex(r"[A-Za-z_][A-Za-z0-9_]*", |lex| lex.slice())]
    Ident(&'a str),
    #[regex(r"[0-9][0-9_]*|0[xX][0-9a-fA-F_]+", |lex| lex.slice(), priority = 3)]
    Int(&'a str),
    #[regex(r"[0-9][0-9_]*\.[0-9][0-9_]*([eE][+-]?[0-9]+)?|[0-9][0-9_]*[eE][+-]?[0-9]+", |lex| lex.slice())]
    Float(&'a str),
    #[token("(")]
    LParen,
    #[token(")")]
    RParen,
    #[token("[")]
    LBracket,
    #[token("]")]
    RBracket,
    #[token("{")]
    LBrace,
    #[token("}")]
    RBrace,
    #[token(",")]
    Comma,
    #[token(":+")]
    ColonPlus,
    #[token(":")]
    Colon,
    #[token(";")]
    Semi,
    #[token(".")]
    Dot,
    #[token("..")]
    DotDot,
    #[token("@")]
    At,
    #[token("=")]
    Assign,
    #[token("==")]
    EqEq,
    #[token("!=")]
    NotEq,
    #[token("<")]
    Lt,
    #[token("<=")]
    Le,
    #[token(">")]
    Gt,
    #[token(">=")]
    Ge,
    #[token("+")]
    Plus,
    #[token("-")]
    Minus,
    #[token("*")]
    Star,
    #[token("/")]
    Slash,
    #[token("%")]
    Percent,
    #[token("&")]
    Amp,
    #[token("|")]
    Pipe,
    #[token("^")]
    Caret,
    #[token("~")]
    Tilde,
    #[token("!")]
    Bang,
    #[token("&&")]
    AndAnd,
    #[token("||")]
    OrOr,
    #[token("<<")]
    Shl,
    #[token(">>")]
    Shr,
}

impl fmt::Display for Tok<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = match self {
            Tok::Newline => "end of line",
            Tok::Ident(s) | Tok::Int(s) | Tok::Float(s) => return write!(f, "`{s}`"),
            Tok::Fn => "`fn`",
            Tok::Kernel => "`kernel`",
            Tok::Let => "`let`",
            Tok::Var => "`var`",
            Tok::Tensor => "`tensor`",
            Tok::Tile => "`tile`",
            Tok::Bitcast => "`bitcast`",
            Tok::In => "`in`",
            Tok::For => "`for`",
            Tok::True => "`true`",
            Tok::False => "`false`",
            Tok::LParen => "`(`",
            Tok::RParen => "`)`",
            Tok::LBracket => "`[`",
            Tok::RBracket => "`]`",
            Tok::LBrace => "`{`",
            Tok::RBrace => "`}`",
            Tok::Comma => "`,`",
            Tok::ColonPlus => "`:+`",
            Tok::Colon => "`:`",
            Tok::Semi => "`;`",
            Tok::Dot => "`.`",
            Tok::DotDot => "`..`",
            Tok::At => "`@`",
            Tok::Assign => "`=`",
            Tok::EqEq => "`==`",
            Tok::NotEq => "`!=`",
            Tok::Lt => "`<`",
            Tok::Le => "`<=`",
            Tok::Gt => "`>`",
            Tok::Ge => "`>=`",
            Tok::Plus => "`+`",
            Tok::Minus => "`-`",
            Tok::Star => "`*`",
            Tok::Slash => "`/`",
            Tok::Percent => "`%`",
            Tok::Amp => "`&`",
            Tok::Pipe => "`|`",
            Tok::Caret => "`^`",
            Tok::Tilde => "`~`",
            Tok::Bang => "`!`",
            Tok::AndAnd => "`&&`",
            Tok::OrOr => "`||`",
            Tok::Shl => "`<<`",
            Tok::Shr => "`>>`",
        };
        f.write_str(text)
    }
}

/// A token with its byte range, as lalrpop's external-lexer interface wants it.
pub type Spanned<'a> = (usize, Tok<'a>, usize);

/// Lexes `text` into the token stream the grammar reads, plus the byte ranges
/// of characters that are not tokens.
///
/// Statements end at line ends, so newlines are tokens, but only where they can
/// end something: inside `(...)` and `[...]`, after an operator or a `,`, and
/// after `{` or before `}` a newline continues the line, and runs of newlines
/// (with any `;`) collapse into one separator.
pub fn lex(text: &str) -> (Vec<Spanned<'_>>, Vec<std::ops::Range<usize>>) {
    let mut raw = Vec::new();
    let mut bad = Vec::new();
    for (tok, range) in Tok::lexer(text).spanned() {
        match tok {
            Ok(tok) => raw.push((range.start, tok, range.end)),
            Err(LexError) => bad.push(range),
        }
    }
    (filter_newlines(raw), bad)
}

fn continues_line(tok: &Tok<'_>) -> bool {
    use Tok::*;
    matches!(
        tok,
        LParen
            | LBracket
            | LBrace
            | Comma
            | ColonPlus
            | Colon
            | Assign
            | EqEq
            | NotEq
            | Lt
            | Le
            | Gt
            | Ge
            | Plus
            | Minus
            | Star
            | Slash
            | Percent
            | Amp
            | Pipe
            | Caret
            | Tilde
            | Bang
            | AndAnd
            | OrOr
            | Shl
            | Shr
            | Dot
            | DotDot
            | Newline
            | Semi
    )
}

fn filter_newlines(raw: Vec<Spanned<'_>>) -> Vec<Spanned<'_>> {
    let mut out: Vec<Spanned<'_>> = Vec::with_capacity(raw.len());
    let mut depth: i32 = 0;
    let mut swallowed: Option<(usize, usize)> = None;
    for (lo, tok, hi) in raw {
        // A line that starts with a statement or item keyword cannot continue
        // an expression: an unclosed bracket before it is an error, and the
        // line ends there so that the parser can recover at the next line.
        let starts_item = matches!(
            tok,
            Tok::Let | Tok::Var | Tok::For | Tok::Fn | Tok::Kernel | Tok::At
        );
        if let (true, Some((nlo, nhi))) = (starts_item && depth > 0, swallowed) {
            depth = 0;
            out.push((nlo, Tok::Newline, nhi));
        }
        if !matches!(tok, Tok::Newline | Tok::Semi) {
            swallowed = None;
        }
        match tok {
            Tok::LParen | Tok::LBracket => depth += 1,
            Tok::RParen | Tok::RBracket => depth = (depth - 1).max(0),
            _ => {}
        }
        let separator = matches!(tok, Tok::Newline | Tok::Semi);
        if separator {
            if depth > 0 && swallowed.is_none() {
                swallowed = Some((lo, hi));
            }
            let keep = depth == 0 && out.last().is_some_and(|(_, prev, _)| !continues_line(prev));
            if keep {
                out.push((lo, Tok::Newline, hi));
            }
            continue;
        }
        if tok == Tok::RBrace && matches!(out.last(), Some((_, Tok::Newline, _))) {
            out.pop();
        }
        out.push((lo, tok, hi));
    }
    if matches!(out.last(), Some((_, Tok::Newline, _))) {
        out.pop();
    }
    out
}
