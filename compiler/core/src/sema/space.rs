//! The tuning space of a kernel: its size against
//! [`bounds::MAX_TUNE_CONFIGS`], its configurations one at a time, and
//! checking all of them.
//!
//! A space is never materialised beyond the bound. It is counted first,
//! from the lengths of its value lists, and a space over the bound is
//! `E0124`; the kernel is then checked in its first configuration only.
//!
//! Within the bound, configurations are enumerated one at a time, and each
//! distinct result is computed once. The work is bounded too: once the first
//! configuration is checked, its IR size times the number of configurations
//! must be within [`MAX_CHECK_NODES`], and the IR built so far is counted
//! as the others are checked; past it, the space is `E0124` as well. The checker reads the value of a
//! tuning parameter only through `Checker::use_tune`, which records the
//! read, so a check's result depends on the values of the parameters it
//! read and on nothing else of the configuration: two configurations that
//! agree on those values take the same path through the checker, read the
//! same parameters and give the same diagnostics. So the work is one check
//! per distinct combination of the values the checker actually reads (a
//! parameter it never reads does not multiply it), plus one hash lookup per
//! configuration and set of parameters read.

use std::collections::{BTreeMap, HashMap};

use super::Program;
use super::check::{self, DeclaredTune};
use crate::bounds::{MAX_CHECK_NODES, MAX_TUNE_CONFIGS};
use crate::diag::{Diagnostic, code};
use crate::syntax::ast;

/// How many configurations a note lists before it says how many more.
const LISTED_CONFIGS: usize = 8;

/// The number of configurations of a space, saturating.
pub fn size(params: &[DeclaredTune]) -> u128 {
    params
        .iter()
        .fold(1u128, |n, p| n.saturating_mul(p.values.len() as u128))
}

/// `E0124` when the `@autotune` space of `def` has more configurations than
/// [`MAX_TUNE_CONFIGS`].
pub fn over_bound(def: &ast::KernelDef, params: &[DeclaredTune]) -> Option<Diagnostic> {
    let n = size(params);
    if n <= MAX_TUNE_CONFIGS as u128 {
        return None;
    }
    let count = if n == u128::MAX {
        format!("more than {n}")
    } else {
        n.to_string()
    };
    let factors = if params.len() <= LISTED_CONFIGS {
        let lens: Vec<String> = params.iter().map(|p| p.values.len().to_string()).collect();
        format!("{} = {count} configurations", lens.join(" × "))
    } else {
        format!("{} parameters, {count} configurations", params.len())
    };
    let mut tunes = def.annotations.iter().filter(|a| a.name.name == "autotune");
    let first = tunes.next()?;
    let mut d = Diagnostic::error(
        code::TUNE_SPACE_TOO_LARGE,
        format!(
            "the tuning space of `{}` has {count} configurations, over the limit of {MAX_TUNE_CONFIGS}",
            def.name.name
        ),
    )
    .label(first.name.span, factors);
    for a in tunes {
        d = d.label(a.name.span, "also part of the space");
    }
    Some(
        d.note(format!(
            "every configuration is checked, built and tried by the tuner, so a space has at most {MAX_TUNE_CONFIGS}"
        ))
        .help("list only the values worth trying (powers of two, say), or make a parameter that needs no tuning a constant"),
    )
}

/// `E0124` for a space within [`MAX_TUNE_CONFIGS`] whose checking would
/// build more than [`MAX_CHECK_NODES`] IR expressions: `nodes` in each of
/// its `configs` configurations.
fn over_work(def: &ast::KernelDef, configs: u64, nodes: u64) -> Option<Diagnostic> {
    let first = def.annotations.iter().find(|a| a.name.name == "autotune")?;
    Some(
        Diagnostic::error(
            code::TUNE_SPACE_TOO_LARGE,
            format!(
                "checking the {configs} configurations of `{}` would build {} IR nodes, over the limit of {MAX_CHECK_NODES}",
                def.name.name,
                configs.saturating_mul(nodes)
            ),
        )
        .label(
            first.name.span,
            format!("{configs} configurations × {nodes} IR nodes each"),
        )
        .note("the checker, `build` and the tuner build every configuration, so a space times the size of its kernel is bounded too")
        .help("list fewer values, or split the kernel into smaller ones"),
    )
}

/// The configurations of a space in order, the first parameter varying
/// slowest, each as the index of its value in every list. One at a time:
/// nothing here holds more than one configuration.
pub struct Configs<'a> {
    params: &'a [DeclaredTune],
    next: Option<Vec<usize>>,
}

impl<'a> Configs<'a> {
    pub fn new(params: &'a [DeclaredTune]) -> Configs<'a> {
        let next = params
            .iter()
            .all(|p| !p.values.is_empty())
            .then(|| vec![0; params.len()]);
        Configs { params, next }
    }
}

impl Iterator for Configs<'_> {
    type Item = Vec<i64>;

    fn next(&mut self) -> Option<Vec<i64>> {
        let at = self.next.as_mut()?;
        let values = self
            .params
            .iter()
            .zip(at.iter())
            .map(|(p, i)| p.values[*i])
            .collect();
        // Step the last parameter; carry into the ones before it.
        let mut axis = at.len();
        loop {
            if axis == 0 {
                self.next = None;
                break;
            }
            axis -= 1;
            at[axis] += 1;
            if at[axis] < self.params[axis].values.len() {
                break;
            }
            at[axis] = 0;
        }
        Some(values)
    }
}

/// Names the values of a configuration: `R=16, W=2`.
pub fn named(params: &[DeclaredTune], values: &[i64]) -> Vec<(String, i64)> {
    params
        .iter()
        .zip(values)
        .map(|(p, v)| (p.name.clone(), *v))
        .collect()
}

/// The configurations that gave one result: the values of the parameters
/// the checker read (`None` for the others), the diagnostics, and how many
/// configurations share them.
struct Class {
    key: Vec<Option<i64>>,
    diags: Vec<Diagnostic>,
    members: u64,
    /// The IR its check built.
    nodes: u64,
}

/// What checking one configuration of a kernel and its check lines gave.
struct Checked {
    diags: Vec<Diagnostic>,
    read: Vec<bool>,
    nodes: u64,
}

/// Checks `def` and the check lines before it in one configuration.
fn check_config(prog: &Program, def: &ast::KernelDef, config: &[(String, i64)]) -> Checked {
    let r = check::check_kernel_reading(prog, def, config);
    let mut out = Checked {
        diags: r.result.err().unwrap_or_default(),
        read: r.read,
        nodes: r.nodes as u64,
    };
    for line in prog.checks_for(&def.name.name) {
        let r = check::check_expr_kernel_reading(prog, def, config, &line.expr);
        out.diags.extend(r.result.err().unwrap_or_default());
        out.read.iter_mut().zip(r.read).for_each(|(a, b)| *a |= b);
        out.nodes += r.nodes as u64;
    }
    out
}

/// Every configuration of a space within the bound, sorted into classes
/// with one check each, and the number of configurations; or, when the
/// checks would build more than [`MAX_CHECK_NODES`] expressions, `E0124`
/// and the diagnostics of the first configuration.
fn classes(
    prog: &Program,
    def: &ast::KernelDef,
    params: &[DeclaredTune],
) -> Result<(Vec<Class>, u64), Vec<Diagnostic>> {
    let configs = size(params) as u64;
    let mut classes: Vec<Class> = Vec::new();
    // The sets of parameters some check read, and each class by its key.
    let mut reads: Vec<Vec<bool>> = Vec::new();
    let mut by_key: HashMap<Vec<Option<i64>>, usize> = HashMap::new();
    let mut total = 0u64;
    let mut nodes = 0u64;
    for values in Configs::new(params) {
        total += 1;
        let key_of = |read: &[bool]| -> Vec<Option<i64>> {
            values
                .iter()
                .zip(read)
                .map(|(v, r)| r.then_some(*v))
                .collect()
        };
        let known = reads
            .iter()
            .find_map(|read| by_key.get(&key_of(read)).copied());
        let class = match known {
            Some(c) => c,
            None => {
                let checked = check_config(prog, def, &named(params, &values));
                nodes += checked.nodes;
                // The first check estimates the whole space's; the IR built
                // so far is the guard for the rest.
                let first = classes.first().map_or(checked.nodes, |c: &Class| c.nodes);
                // One configuration is checked whatever its size: the bound
                // is on the multiplication.
                if configs > 1
                    && (first.saturating_mul(configs) > MAX_CHECK_NODES || nodes > MAX_CHECK_NODES)
                {
                    let mut diags = match classes.into_iter().next() {
                        Some(c) => c.diags,
                        None => checked.diags,
                    };
                    diags.extend(over_work(def, configs, first));
                    return Err(diags);
                }
                let key = key_of(&checked.read);
                if !reads.contains(&checked.read) {
                    reads.push(checked.read);
                }
                by_key.insert(key.clone(), classes.len());
                classes.push(Class {
                    key,
                    diags: checked.diags,
                    members: 0,
                    nodes: checked.nodes,
                });
                classes.len() - 1
            }
        };
        classes[class].members += 1;
    }
    Ok((classes, total))
}

/// Checks `def` and the check lines before it in every configuration of its
/// space, each distinct result once. A problem of only some configurations
/// ends with a note saying which.
pub fn check_all(prog: &Program, def: &ast::KernelDef) -> Vec<Diagnostic> {
    let params = check::tune_params(def, &mut Vec::new());
    if let Some(d) = over_bound(def, &params) {
        // The rest of the kernel is still checked, in its first configuration.
        let mut diags = check_config(prog, def, &[]).diags;
        diags.push(d);
        return diags;
    }
    let (classes, total) = match classes(prog, def, &params) {
        Ok(c) => c,
        Err(diags) => return diags,
    };

    // Each problem, with the classes it occurs in, in the order found.
    let mut found: Vec<(Diagnostic, Vec<usize>)> = Vec::new();
    let mut at: BTreeMap<Diagnostic, usize> = BTreeMap::new();
    for (c, class) in classes.iter().enumerate() {
        for d in &class.diags {
            match at.get(d) {
                Some(&i) => {
                    if found[i].1.last() != Some(&c) {
                        found[i].1.push(c);
                    }
                }
                None => {
                    at.insert(d.clone(), found.len());
                    found.push((d.clone(), vec![c]));
                }
            }
        }
    }
    found
        .into_iter()
        .map(|(d, cs)| {
            let n: u64 = cs.iter().map(|c| classes[*c].members).sum();
            if n < total {
                d.note(only_in(&params, &classes, &cs, n, total))
            } else {
                d
            }
        })
        .collect()
}

/// The note of a problem of only some configurations: each class by the
/// values the checker read, when those are not all the parameters.
fn only_in(params: &[DeclaredTune], classes: &[Class], cs: &[usize], n: u64, total: u64) -> String {
    let mut listed: Vec<String> = cs
        .iter()
        .take(LISTED_CONFIGS)
        .map(|c| {
            let values: Vec<String> = params
                .iter()
                .zip(&classes[*c].key)
                .filter_map(|(p, v)| v.map(|v| format!("{}={v}", p.name)))
                .collect();
            values.join(", ")
        })
        .collect();
    if cs.len() > LISTED_CONFIGS {
        listed.push(format!("and {} more", cs.len() - LISTED_CONFIGS));
    }
    let whole = cs
        .iter()
        .all(|c| classes[*c].key.iter().all(Option::is_some));
    if whole {
        format!(
            "only in the configuration{} {}",
            if n == 1 { "" } else { "s" },
            listed.join("; ")
        )
    } else {
        format!(
            "only in the configurations with {} ({n} of {total})",
            listed.join("; ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn classes_of(text: &str) -> (usize, u64) {
        let (prog, _) = Program::parse("space.ph", text);
        let def = &prog.file.kernels[0];
        let params = check::tune_params(def, &mut Vec::new());
        let (classes, total) = classes(&prog, def, &params).expect("within the bounds");
        (classes.len(), total)
    }

    #[test]
    fn configurations_are_enumerated_in_order_one_at_a_time() {
        let (prog, _) = Program::parse(
            "space.ph",
            "@autotune(A in [1, 2], B in [3, 4, 5])\nkernel k(Y: tensor<f32>[N]) {}",
        );
        let params = check::tune_params(&prog.file.kernels[0], &mut Vec::new());
        let all: Vec<Vec<i64>> = Configs::new(&params).collect();
        assert_eq!(
            all,
            [[1, 3], [1, 4], [1, 5], [2, 3], [2, 4], [2, 5]].map(|c| c.to_vec())
        );
        assert_eq!(size(&params), 6);
        assert_eq!(Configs::new(&[]).collect::<Vec<_>>(), [Vec::<i64>::new()]);
    }

    /// Parameters the checker never reads, and repeated values, do not
    /// multiply the checks; every read parameter does.
    #[test]
    fn one_check_per_distinct_values_read() {
        let body = "kernel k(X: tensor<f32>[M, 256], Y: tensor<f32>[M, 256]) {
  let r = ctx.block.x * R
  Y[r :+ R, :] = X[r :+ R, :]
}";
        let values: Vec<String> = (1..=64).map(|v| v.to_string()).collect();
        let unused = format!(
            "@autotune(R in [16, 32], W in [{}])\n{body}",
            values.join(", ")
        );
        assert_eq!(classes_of(&unused), (2, 128));
        let repeated = format!("@autotune(R in [16, 32, 16, 32, 16])\n{body}");
        assert_eq!(classes_of(&repeated), (2, 5));
        let read = format!(
            "@autotune(R in [16, 32], W in [1, 2, 3])\n{}",
            body.replace("X[r :+ R, :]", "X[r :+ R, :] * f32(W)")
        );
        assert_eq!(classes_of(&read), (6, 6));
    }
}
