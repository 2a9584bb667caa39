//! The one reader of `docs/language.md` for the tests: its fenced `ph`
//! blocks, each with the `console` block that follows it, and the flags of
//! that console's `$ phobosc run` line.

/// A fenced `ph` block of the page.
pub struct Block {
    /// The line of its opening fence (1-based).
    pub line: usize,
    pub code: String,
    /// The first `console` block after it, before the next `ph` block, if
    /// any (prose may stand between them).
    pub console: Option<String>,
}

/// Every fenced `ph` block of `text`, in order, with its console block.
pub fn blocks(text: &str) -> Vec<Block> {
    let mut out: Vec<Block> = Vec::new();
    let mut lines = text.lines().enumerate();
    while let Some((i, l)) = lines.next() {
        let lang = match l.trim_start().strip_prefix("```") {
            Some(lang) if !lang.trim().is_empty() => lang.trim().to_string(),
            _ => continue,
        };
        let mut body = String::new();
        let mut closed = false;
        for (_, l) in lines.by_ref() {
            if l.trim_start().starts_with("```") {
                closed = true;
                break;
            }
            body.push_str(l);
            body.push('\n');
        }
        assert!(closed, "docs line {}: a block that is never closed", i + 1);
        match lang.as_str() {
            "ph" => out.push(Block {
                line: i + 1,
                code: body,
                console: None,
            }),
            "console" => {
                if let Some(last) = out.last_mut()
                    && last.console.is_none()
                {
                    last.console = Some(body);
                }
            }
            _ => {}
        }
    }
    out
}

/// The `--dim NAME=N` and `--arg NAME=V` flags of a console's first
/// `$ phobosc run` line (none when it has no such line).
#[derive(Debug, Default, PartialEq)]
pub struct RunFlags {
    pub dims: Vec<(String, usize)>,
    pub scalars: Vec<(String, i64)>,
}

impl RunFlags {
    /// Panics on a flag whose value is not an integer: the page's runs of
    /// its own kernels give integer dims and scalars.
    pub fn of(console: &str) -> RunFlags {
        let mut flags = RunFlags::default();
        let Some(line) = console.lines().find(|l| l.starts_with("$ phobosc run")) else {
            return flags;
        };
        let words: Vec<&str> = line.split_whitespace().collect();
        for w in words.windows(2) {
            let Some((k, v)) = w[1].split_once('=') else {
                continue;
            };
            let bad = || format!("`{line}`: {} {} is not an integer", w[0], w[1]);
            match w[0] {
                "--dim" => flags.dims.push((
                    k.to_string(),
                    v.parse().unwrap_or_else(|_| panic!("{}", bad())),
                )),
                "--arg" => flags.scalars.push((
                    k.to_string(),
                    v.parse().unwrap_or_else(|_| panic!("{}", bad())),
                )),
                _ => {}
            }
        }
        flags
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_take_the_console_that_follows() {
        let text = "intro\n```ph\nkernel a() {}\n```\nprose\n```console\n$ phobosc run a.ph --dim N=4 --arg s=-2 --config R=8\nout\n```\n```ph\nfn f(x) = x\n```\n```ph\nkernel b() {}\n```\n```console\nsecond\n```\n```console\nthird\n```\n";
        let b = blocks(text);
        assert_eq!(b.len(), 3);
        assert_eq!(b[0].line, 2);
        assert_eq!(b[0].code, "kernel a() {}\n");
        let flags = RunFlags::of(b[0].console.as_deref().expect("a console"));
        assert_eq!(
            flags,
            RunFlags {
                dims: vec![("N".into(), 4)],
                scalars: vec![("s".into(), -2)],
            }
        );
        assert!(b[1].console.is_none());
        assert_eq!(b[2].console.as_deref(), Some("second\n"));
        assert_eq!(RunFlags::of("no run line\n"), RunFlags::default());
    }
}
