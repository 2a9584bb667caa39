//! The plan: what the GPU lowering decides about a kernel before any naga
//! exists, as plain data that a test can inspect and `phobosc build
//! --explain` prints.
//!
//! [`plan`] reads the IR and the options and decides where every value
//! lives ([`values`]: inlined into its uses, in registers, or in workgroup
//! memory, each with its reason), and gives the kernel the emitter lowers:
//! the user's kernel with the inlined `let`s substituted. The emitter
//! (`lower/`) follows it. What the emitter then chose per statement (how
//! Tandem draws were taken) and the workgroup memory it declared, item by
//! item ([`Budget`]), complete the account in [`crate::Compiled`], and
//! [`explain`] prints all of it: the answer to "why is my kernel slow"
//! without a profiler.
//!
//! The plan changes where a value is computed, never its bits: a `let`
//! cannot name `iota`, so its value at a position is the same wherever it
//! is computed, and a `var` that names it moves only to readers at its own
//! positions (`values.rs`).

pub mod divisors;
pub mod dots;
pub(crate) mod draws;
pub mod folds;
pub mod hoist;
pub mod loops;
pub mod memory;
pub mod reductions;
pub mod rows;
pub mod stores;
pub mod unroll;
pub mod values;
pub mod versions;

use crate::{GpuOptions, LowerError};
pub use divisors::SharedDivisor;
pub use dots::{Direct, Product};
pub use folds::Fold;
pub use hoist::Hoisted;
pub use loops::LoopPlan;
pub use memory::{Upfront, WordBuffers};
use phobos_core::diag::{Diagnostic, code};
use phobos_core::ir::{Kernel, LocalId, LocalKind, Stmt};
pub use reductions::{Levels, Reduction};
pub use rows::RowPlan;
pub use stores::StorePlan;
pub use values::{Home, ValuePlan};

/// The plan's revision: bumped whenever a plan may emit other code for
/// the same IR, so that the runtime's tuning cache (keyed by the IR) does
/// not reuse times measured under another plan.
pub const REVISION: u32 = 15;

/// What the lowering decided before emitting.
#[derive(Clone, Debug)]
pub struct Plan {
    /// The kernel the emitter lowers: the input with every `let` planned
    /// [`Home::Inline`] substituted into its uses.
    pub kernel: Kernel,
    /// Every local of the input kernel, in order, and where it lives.
    pub values: Vec<ValuePlan>,
    /// The loops written out iteration by iteration ([`unroll`]): for each,
    /// its variable's name and its iterations, in statement order.
    pub unrolled: Vec<(String, u32)>,
    /// The row-uniform values moved out of their statements
    /// ([`hoist`]), computed once per row.
    pub hoisted: Vec<Hoisted>,
    /// The stores whose slices allow groups of 4, and whether they keep
    /// them ([`stores`]), by statement of `kernel`.
    pub stores: Vec<StorePlan>,
    /// The accumulator updates computed by one invocation a row
    /// ([`folds`]).
    pub folds: Vec<Fold>,
    /// Every `for` loop of `kernel` and the barrier between its iterations
    /// ([`loops`]).
    pub loops: Vec<LoopPlan>,
    /// The statements inside loops whose staged Tandem fills never resume
    /// the last iteration's chunks, so carry none ([`draws::fresh_fills`]),
    /// by index in `kernel`'s body.
    pub fresh_fills: Vec<usize>,
    /// The tensors (by parameter index) bound as `array<vec4<T>>`, moved
    /// 16 bytes at a time by some store or load ([`stores::vec4_tensors`]).
    pub vec4: Vec<bool>,
    /// The exact divisions' divisors whose reciprocal a statement computes
    /// once, not once per element ([`divisors`]).
    pub divisors: Vec<SharedDivisor>,
    /// Blocks a workgroup (1 but for kernels of stepped Tandem draws given
    /// a larger workgroup: `lower::packing`).
    pub packed: u32,
    /// Whether reductions may take their levels through subgroups
    /// ([`reductions::subgroups`]).
    pub subgroups: bool,
    /// How each reduction the workgroup computes is spread over the block
    /// ([`reductions`]).
    pub reductions: Vec<Reduction>,
    /// The workgroup memory declared before the statements ([`memory`]).
    pub upfront: Upfront,
    /// The values of a row kept in registers across statements ([`rows`]).
    pub rows: Option<RowPlan>,
    /// The products the workgroup computes ahead, and how ([`dots`]).
    pub products: Vec<Product>,
    /// The f16 tensors (by parameter index) bound as `array<f16>`, whose
    /// elements some product's cooperative loads read straight
    /// ([`dots::native_halves`]); other 16-bit tensors are bound as u32
    /// words.
    pub native_halves: Vec<bool>,
}

impl Plan {
    /// The plan with `packed` blocks a workgroup of `options`' size: the
    /// reductions' geometry follows the block's invocations.
    pub fn with_packing(&mut self, options: &GpuOptions, packed: u32) -> Result<(), LowerError> {
        let block = options.workgroup_size / packed;
        self.packed = packed;
        self.subgroups = reductions::subgroups(&self.kernel, options, block, packed);
        self.products = dots::plan(&self.kernel, options, block, packed);
        let subgroups = match options.subgroup_width {
            0 => 0,
            w => block / w,
        };
        // The products' arrays, and a reduction's partials (a word an
        // invocation), come before staged Tandem words.
        let reduces = self
            .kernel
            .exprs
            .iter()
            .any(|e| matches!(e.kind, phobos_core::ir::ExprKind::Reduce { .. }));
        let scratch = if reduces { 4 * u64::from(block) } else { 0 };
        let reserve = match self.products.is_empty() {
            true => 0,
            false => dots::reserve(&self.products, subgroups) + scratch,
        };
        self.upfront = memory::plan(&self.kernel, options, self.subgroups, reserve)?;
        // Where the block's check of its subgroups would not fit, they go
        // unused.
        if self.subgroups && !options.subgroup_layout_known && !self.upfront.subgroup_flag {
            self.subgroups = false;
        }
        self.reductions = reductions::plan(&self.kernel, options, block, self.subgroups);
        self.rows = rows::plan(self, options);
        self.native_halves = dots::native_halves(&self.kernel, &self.products);
        Ok(())
    }
}

/// Where the plan keeps a `let` or `var` tile in workgroup memory and its
/// extent depends on a dim, the diagnostic `phobosc build` prints: code
/// `E0142`, each such value labelled at its statement with its shape and
/// the plan's reason, and the flags that give the extent. `None` where
/// every such tile has a constant size (a launch's kernel, which
/// [`crate::specialize`] fixed).
pub fn symbolic_tiles_diagnostic(kernel: &Kernel) -> Option<Diagnostic> {
    let (kernel, values, _) = place(kernel);
    let kernel = &kernel;
    let mut dims: Vec<&str> = Vec::new();
    let mut labels = Vec::new();
    for (local, v) in kernel.locals.iter().zip(values) {
        if v.home != Home::Workgroup(None) {
            continue;
        }
        for d in &local.shape {
            if let phobos_core::types::Dim::Sym(s) = d
                && !dims.contains(&kernel.dims[*s].as_str())
            {
                dims.push(&kernel.dims[*s]);
            }
        }
        if let Some(span) = local.span {
            labels.push((
                span,
                format!(
                    "`{}: {}` is kept in workgroup memory ({}), whose size must be a constant",
                    v.name, v.ty, v.why
                ),
            ));
        }
    }
    if dims.is_empty() {
        return None;
    }
    let mut d = Diagnostic::error(
        code::SYMBOLIC_TILE,
        format!(
            "kernel `{}` keeps a tile whose extent depends on {} in workgroup memory",
            kernel.name,
            dims.iter()
                .map(|d| format!("`{d}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    );
    for (span, label) in labels {
        d = d.label(span, label);
    }
    Some(d.help(format!(
        "give the extent: `phobosc build {}` builds the kernel as a launch at that extent does \
         (a launch specialises it itself)",
        dims.iter()
            .map(|d| format!("--dim {d}=<extent>"))
            .collect::<Vec<_>>()
            .join(" ")
    )))
}

/// `kernel` with its `var`s split into versions ([`versions`]) where every
/// version is then inlined, and where each local of that kernel lives.
/// A `var` some version of which would keep a tile in workgroup memory
/// stays whole: one tile, not one per version.
fn place(
    kernel: &Kernel,
) -> (
    Kernel,
    Vec<ValuePlan>,
    phobos_core::ir::IdVec<LocalId, bool>,
) {
    let mut whole = std::collections::HashSet::new();
    loop {
        let (split, versions) = versions::split(kernel, &whole);
        let (values, inline) = values::place(&split);
        let kept: Vec<LocalId> = versions
            .iter()
            .filter(|(_, ids)| ids.iter().any(|&v| !inline[v]))
            .map(|(l, _)| *l)
            .collect();
        if kept.is_empty() {
            return (split, values, inline);
        }
        whole.extend(kept);
    }
}

/// Plans `kernel` for `options`. The result's kernel is verified where
/// the input verifies: a failure is an internal compiler error, with the
/// printed IR.
pub fn plan(input: &Kernel, options: &GpuOptions) -> Result<Plan, LowerError> {
    let (written, unrolled) = match unroll::unroll(input, options.precision) {
        Some((k, loops)) => (Some(k), loops),
        None => (None, Vec::new()),
    };
    let kernel = written.as_ref().unwrap_or(input);
    let (split, values, inline) = place(kernel);
    let (planned, hoisted) = hoist::hoist(&values::inline(&split, &inline));
    // A launch's specialised kernel (`specialize`) need not verify itself
    // (its tiles' extents are constants where its values' are dims), so
    // the plan's kernel is checked where its input verifies.
    let errors = if planned == *input || !phobos_core::ir::verify(input).is_empty() {
        Vec::new()
    } else {
        phobos_core::ir::verify(&planned)
    };
    if !errors.is_empty() {
        let list: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
        return Err(LowerError::Internal(format!(
            "the plan's kernel `{}` does not verify: {}\n{}",
            kernel.name,
            list.join("; "),
            planned.print()
        )));
    }
    let folds = folds::plan(&planned);
    let packed = crate::lower::packing(&planned, options.workgroup_size);
    let mut plan = Plan {
        stores: stores::plan(&planned, options),
        loops: loops::plan(&planned, &folds),
        fresh_fills: Vec::new(),
        vec4: stores::vec4_tensors(&planned),
        divisors: divisors::plan(&planned, options),
        folds,
        kernel: planned,
        values,
        unrolled,
        hoisted,
        packed,
        subgroups: false,
        reductions: Vec::new(),
        upfront: Upfront::default(),
        rows: None,
        products: Vec::new(),
        native_halves: Vec::new(),
    };
    plan.fresh_fills = draws::fresh_fills(&plan.kernel, &plan.loops);
    plan.with_packing(options, packed)?;
    Ok(plan)
}

/// One array of workgroup memory the emitted module declares.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct BudgetItem {
    /// What it holds: a `let`/`var` tile by its declaration, else the
    /// compiler's own array by its name.
    pub name: String,
    pub bytes: u64,
    /// The `let`/`var` it holds, if it holds one.
    #[serde(skip)]
    pub local: Option<LocalId>,
}

/// The workgroup memory of a lowered module, item by item: the one account
/// that the runtime's check, `phobosc build --explain` and the playground
/// read.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Budget {
    pub items: Vec<BudgetItem>,
}

impl Budget {
    /// The arrays of `module` in workgroup memory, named for `kernel` (the
    /// kernel that was lowered: the lowering names local `l`'s array
    /// `NAME_l`).
    pub fn of(kernel: &Kernel, module: &naga::Module) -> Budget {
        let items = module
            .global_variables
            .iter()
            .filter(|(_, g)| g.space == naga::AddressSpace::WorkGroup)
            .map(|(_, g)| {
                let bytes = u64::from(module.types[g.ty].inner.size(module.to_ctx()));
                let array = g.name.clone().unwrap_or_else(|| "(unnamed)".into());
                let local = array_local(kernel, &array);
                BudgetItem {
                    name: array_name(kernel, &array, local),
                    bytes,
                    local,
                }
            })
            .collect();
        Budget { items }
    }

    pub fn total(&self) -> u64 {
        self.items.iter().map(|i| i.bytes).sum()
    }

    /// `` `let x: tile<f32>[4, 256]` 4096 bytes, ... `` for messages.
    pub fn list(&self) -> String {
        let v: Vec<String> = self
            .items
            .iter()
            .map(|i| format!("{} {} bytes", i.name, i.bytes))
            .collect();
        v.join(", ")
    }

    /// Where the module's workgroup memory is more than `limit` bytes, the
    /// error for the person who wrote `kernel` (the kernel that was
    /// lowered, whose locals carry the spans of their statements): the
    /// largest `let`/`var` tile labelled at its statement with its bytes,
    /// every other tile labelled too, the compiler's own arrays in a note,
    /// and the total against the limit. `None` where it fits.
    pub fn diagnostic(&self, kernel: &Kernel, limit: u64) -> Option<Diagnostic> {
        let used = self.total();
        if used <= limit {
            return None;
        }
        let cfg: Vec<String> = kernel
            .config
            .iter()
            .map(|(n, v)| format!("{n}={v}"))
            .collect();
        let config = if cfg.is_empty() {
            String::new()
        } else {
            format!(" [{}]", cfg.join(", "))
        };
        let mut d = Diagnostic::error(
            code::WORKGROUP_MEMORY,
            format!(
                "kernel `{}`{config} needs {used} bytes of workgroup memory, more than the \
                 target's {limit}",
                kernel.name
            ),
        );
        let mut located: Vec<&BudgetItem> = self
            .items
            .iter()
            .filter(|i| i.local.and_then(|l| kernel.locals[l].span).is_some())
            .collect();
        located.sort_by_key(|i| std::cmp::Reverse(i.bytes));
        for (n, item) in located.iter().enumerate() {
            let local = &kernel.locals[item.local.expect("located")];
            let span = local.span.expect("located");
            let alone = if n == 0 && item.bytes > limit {
                format!(", alone more than the {limit}")
            } else {
                String::new()
            };
            d = d.label(
                span,
                format!(
                    "{} is kept in workgroup memory: {} bytes{alone}",
                    item.name, item.bytes
                ),
            );
        }
        let others: Vec<String> = self
            .items
            .iter()
            .filter(|i| !located.iter().any(|l| std::ptr::eq(*l, *i)))
            .map(|i| format!("{} {} bytes", i.name, i.bytes))
            .collect();
        if !others.is_empty() {
            d = d.note(format!(
                "the compiler's own arrays take the rest: {}",
                others.join(", ")
            ));
        }
        Some(d.help(format!(
            "use smaller tiles (a smaller @autotune value, or a slice of the rows per block), \
             or give `phobosc build --workgroup-memory BYTES` the target device's limit \
             (WebGPU's default is {})",
            crate::WORKGROUP_MEMORY_LIMIT
        )))
    }
}

/// The local whose tile the workgroup array `array` holds, if any (the
/// lowering names local `l`'s array `NAME_l`).
fn array_local(kernel: &Kernel, array: &str) -> Option<LocalId> {
    kernel
        .locals
        .iter_enumerated()
        .find(|(l, local)| array == format!("{}_{l}", local.name))
        .map(|(l, _)| l)
}

/// A workgroup array as a message names it.
fn array_name(kernel: &Kernel, array: &str, local: Option<LocalId>) -> String {
    match local.map(|l| &kernel.locals[l]) {
        Some(local) => format!(
            "`{} {}: tile<{}>{}`",
            match local.kind {
                LocalKind::Let => "let",
                LocalKind::Var => "var",
                LocalKind::Loop => "for",
            },
            local.name,
            local.elem,
            kernel.shape_text(&local.shape)
        ),
        None => format!("`{array}` (made by the compiler)"),
    }
}

/// The plan of a compiled kernel as text: where each value lives and why,
/// how each statement's Tandem draws were taken, and the workgroup memory
/// item by item against the limit planned for.
pub fn explain(compiled: &crate::Compiled) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let o = &compiled.options;
    let k = &compiled.plan.kernel;
    let cfg: Vec<String> = k.config.iter().map(|(n, v)| format!("{n}={v}")).collect();
    let _ = writeln!(
        out,
        "kernel {} [{}]: {} invocations a workgroup, {} block{} each, {} mode",
        k.name,
        cfg.join(", "),
        o.workgroup_size,
        compiled.blocks_per_workgroup,
        if compiled.blocks_per_workgroup == 1 {
            ""
        } else {
            "s"
        },
        o.precision.name()
    );
    // Statements are numbered from 1, as the emitter's notes number them:
    // the plan's kernel's statements but its loop brackets.
    let number = |i: usize| {
        k.body[..=i]
            .iter()
            .filter(|s| !matches!(s, Stmt::For { .. } | Stmt::EndFor))
            .count()
    };
    let _ = writeln!(out, "values:");
    let mut values = Vec::new();
    for v in &compiled.plan.values {
        let home = match v.home {
            Home::Inline => "inline".to_string(),
            Home::Registers => "registers".to_string(),
            Home::Workgroup(Some(b)) => format!("workgroup memory ({b} bytes)"),
            Home::Workgroup(None) => "workgroup memory (sized at launch)".to_string(),
        };
        let kind = match v.kind {
            LocalKind::Let => "let",
            LocalKind::Var => "var",
            LocalKind::Loop => "for",
        };
        values.push(format!("{kind} {}: {}: {home}: {}", v.name, v.ty, v.why));
    }
    // A loop written out declares its body's locals once per iteration.
    let written = !compiled.plan.unrolled.is_empty();
    for (line, n) in counted(values, written) {
        let _ = match n {
            1 => writeln!(out, "  {line}"),
            n => writeln!(out, "  {line} ({n} of them, one an iteration)"),
        };
    }
    for h in &compiled.plan.hoisted {
        let _ = writeln!(
            out,
            "  let {}: {}: workgroup memory: a value uniform along the rows of statement {}, \
             computed once per row, not once per element",
            h.name,
            h.ty,
            // Each value moved out of a statement is a `let` before it.
            number(
                h.stmt
                    + compiled
                        .plan
                        .hoisted
                        .iter()
                        .filter(|g| g.stmt <= h.stmt)
                        .count()
            )
        );
    }
    let refused = compiled
        .plan
        .stores
        .iter()
        .filter(|st| !st.groups)
        .map(|st| format!("statement {}: stored {}", number(st.stmt), st.why));
    let mut shared: Vec<(usize, usize)> = Vec::new();
    for d in &compiled.plan.divisors {
        match shared.last_mut() {
            Some((stmt, n)) if *stmt == d.stmt => *n += 1,
            _ => shared.push((d.stmt, 1)),
        }
    }
    let shared = shared.into_iter().map(|(stmt, n)| {
        format!(
            "statement {}: {n} exact `/` by a value the same at every element: the divisor's \
             reciprocal is computed once, before the statement's loop",
            number(stmt)
        )
    });
    let mut lines: Vec<String> = refused
        .chain(shared)
        .chain(compiled.notes.iter().cloned())
        .collect();
    // In statement order; the notes about the whole kernel first.
    lines.sort_by_key(|l| {
        l.strip_prefix("statement ")
            .and_then(|r| r.split(':').next())
            .and_then(|n| n.parse::<usize>().ok())
            .unwrap_or(0)
    });
    if !lines.is_empty() {
        let _ = writeln!(
            out,
            "how statements are emitted (reductions, Tandem draws, packing):"
        );
        // Where loops were written out, the same text for several
        // statements (one an iteration) once, with their numbers.
        let mut by_text: Vec<(String, Vec<String>)> = Vec::new();
        for l in lines {
            let (at, text) = match l
                .strip_prefix("statement ")
                .and_then(|r| r.split_once(": "))
            {
                Some((n, text)) if n.parse::<usize>().is_ok() => (n.to_string(), text.to_string()),
                _ => {
                    by_text.push((l, Vec::new()));
                    continue;
                }
            };
            let group = by_text
                .iter_mut()
                .find(|(t, ns)| written && *t == text && !ns.is_empty() && !ns.contains(&at));
            match group {
                Some((_, ns)) => ns.push(at),
                None => by_text.push((text, vec![at])),
            }
        }
        for (text, at) in by_text {
            let _ = match at.len() {
                0 => writeln!(out, "  {text}"),
                1 => writeln!(out, "  statement {}: {text}", at[0]),
                _ => writeln!(out, "  statements {}: {text}", at.join(", ")),
            };
        }
    }
    let vec4: Vec<&str> = k
        .params
        .iter()
        .zip(&compiled.plan.vec4)
        .filter(|(_, v)| **v)
        .map(|(p, _)| p.name.as_str())
        .collect();
    if !vec4.is_empty() {
        let _ = writeln!(
            out,
            "tensors moved 16 bytes at a time (bound as array<vec4>): {}",
            vec4.join(", ")
        );
    }
    if !compiled.plan.loops.is_empty() || !compiled.plan.unrolled.is_empty() {
        let _ = writeln!(out, "loops:");
        for (var, trips) in &compiled.plan.unrolled {
            let _ = writeln!(
                out,
                "  `for {var}`: written out, {trips} iterations (a chunk that several loops \
                 read is one value, which the rows' registers can keep)"
            );
        }
        for (n, l) in compiled.plan.loops.iter().enumerate() {
            let var = match &k.body[l.start] {
                phobos_core::ir::Stmt::For { local, .. } => k.locals[*local].name.as_str(),
                _ => "?",
            };
            let _ = writeln!(out, "  loop {} (`for {var}`): {}", n + 1, l.why);
        }
        for &i in &compiled.plan.fresh_fills {
            // Numbered as the notes number statements: loop brackets not
            // counted.
            let brackets = k.body[..i]
                .iter()
                .filter(|s| matches!(s, Stmt::For { .. } | Stmt::EndFor))
                .count();
            let _ = writeln!(
                out,
                "  statement {}: its Tandem fills carry no chunk to the next iteration (its \
                 counters move by a group of chunks or more, or backward, each iteration)",
                i - brackets + 1
            );
        }
    }
    let _ = writeln!(
        out,
        "workgroup memory: {} of {} bytes",
        compiled.budget.total(),
        o.workgroup_memory
    );
    let items = compiled
        .budget
        .items
        .iter()
        .map(|i| format!("{} {} bytes", i.name, i.bytes));
    for (line, n) in counted(items.collect(), written) {
        let _ = match n {
            1 => writeln!(out, "  {line}"),
            n => writeln!(out, "  {line}, {n} times"),
        };
    }
    out
}

/// Where `merge`, equal lines once each, in the order they first come,
/// with how many times each came; else each line once.
fn counted(lines: Vec<String>, merge: bool) -> Vec<(String, usize)> {
    let mut out: Vec<(String, usize)> = Vec::new();
    for l in lines {
        match out.iter_mut().find(|(m, _)| merge && *m == l) {
            Some((_, n)) => *n += 1,
            None => out.push((l, 1)),
        }
    }
    out
}
