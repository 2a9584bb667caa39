//! Reductions along one axis of a tile: `sum`, `max`, `min`, `argmax`,
//! `argmin`.
//! This doc is their specification; the interpreter evaluates it literally
//! (`interp/eval.rs`, combining with `interp::ops::reduce_combine`) and the
//! other backends reproduce its bits.
//!
//! A reduction of the values `x[0], .., x[n-1]` along an axis:
//!
//! - `sum` adds them in one fixed pairwise tree, the same for every type
//!   and backend ([`pairwise`]): level by level, the adjacent items
//!   `(0, 1), (2, 3), ..` of the level are added, left `+` right, and an
//!   odd last item moves up unchanged, until one item remains. Each `+` is
//!   the ordinary one (`interp/ops.rs`: rounded on its own, wrapping on
//!   integers). The same tree, computed sequentially: keep a stack of
//!   partial sums; after pushing `x[k]`, add the top two while the count of
//!   items pushed so far, `k + 1`, has trailing zero bits left (one `+`
//!   per zero bit, `top-1 + top`); at the end, fold the stack from its top
//!   down (`s[j] + acc`). Backends use this form; a test checks that it is
//!   the tree.
//! - `max` (`min`) is the value at the lowest index among the elements that
//!   no other exceeds with `>` (`<`), or NaN if any element is NaN. So
//!   `max(-0.0, 0.0)` is `-0.0` and `max(0.0, -0.0)` is `0.0`. It is the
//!   combine `m(a, b) = (a == a && (b != b || b > a)) ? b : a` (`<` for
//!   `min`) over the tree, and since that combine keeps the left item on
//!   ties it gives the same value in any grouping that keeps the order,
//!   such as a left-to-right loop.
//! - `argmax` is the `i32` index of the element `max` picks: the lowest
//!   index of a NaN if there is one, else the lowest index of the largest
//!   element (ties go to the lowest index). `argmin` is the same for `min`:
//!   the lowest index of a NaN, else of the smallest element.
//! - Over an empty axis (a symbolic dim bound to 0 at launch; a constant
//!   empty axis is refused by the checker for `argmax` and `argmin`): `sum`
//!   is 0, `max` is `-inf` (the least integer), `min` is `+inf` (the
//!   greatest integer), `argmax` and `argmin` are -1.
//!
//! The reduced axis is kept with extent 1, so `x - max(x, axis = 1)`
//! broadcasts. Inside the reduced operand `iota` is refused (the checker):
//! a position there would mean two things at once.

/// Which reduction a `Reduce` node computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    Sum,
    Max,
    Min,
    Argmax,
    Argmin,
}

impl ReduceOp {
    pub fn name(self) -> &'static str {
        match self {
            ReduceOp::Sum => "sum",
            ReduceOp::Max => "max",
            ReduceOp::Min => "min",
            ReduceOp::Argmax => "argmax",
            ReduceOp::Argmin => "argmin",
        }
    }

    /// Whether the result is the `i32` index of an element (`argmax`,
    /// `argmin`) rather than a value.
    pub fn is_index(self) -> bool {
        matches!(self, ReduceOp::Argmax | ReduceOp::Argmin)
    }

    /// The value reduction whose pick an index reduction points at
    /// (`argmax`: `max`, `argmin`: `min`); the others are their own.
    pub fn value_op(self) -> ReduceOp {
        match self {
            ReduceOp::Argmax => ReduceOp::Max,
            ReduceOp::Argmin => ReduceOp::Min,
            op => op,
        }
    }

    /// Whether any order that keeps the elements' order gives the same
    /// result (everything but `sum`, whose floats round differently).
    pub fn order_free(self) -> bool {
        !matches!(self, ReduceOp::Sum)
    }
}

/// Combines `items` in the pairwise tree of the module doc: level by level,
/// `(0, 1), (2, 3), ..`, an odd last item carried up. `None` when empty.
pub fn pairwise<T>(mut items: Vec<T>, mut combine: impl FnMut(T, T) -> T) -> Option<T> {
    while items.len() > 1 {
        let mut next = Vec::with_capacity(items.len().div_ceil(2));
        let mut it = items.into_iter();
        while let Some(a) = it.next() {
            match it.next() {
                Some(b) => next.push(combine(a, b)),
                None => next.push(a),
            }
        }
        items = next;
    }
    items.pop()
}

/// The same tree computed as backends do: a stack of partial results, the
/// top two combined once per trailing zero bit of the count pushed, then
/// folded from the top down.
pub fn stacked<T>(items: Vec<T>, mut combine: impl FnMut(T, T) -> T) -> Option<T> {
    let mut stack: Vec<T> = Vec::new();
    for (k, x) in items.into_iter().enumerate() {
        let mut v = x;
        let mut count = k + 1;
        while count & 1 == 0 {
            let left = stack.pop().expect("a partial result per zero bit");
            v = combine(left, v);
            count >>= 1;
        }
        stack.push(v);
    }
    let mut acc = stack.pop()?;
    while let Some(left) = stack.pop() {
        acc = combine(left, acc);
    }
    Some(acc)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The stack form builds the very tree of the level form: compared as
    /// the bracketed expression each builds, for every length to 600.
    #[test]
    fn the_stack_form_is_the_pairwise_tree() {
        for n in 0..600 {
            let items: Vec<String> = (0..n).map(|i| i.to_string()).collect();
            let tree = pairwise(items.clone(), |a, b| format!("({a}+{b})"));
            let stack = stacked(items, |a, b| format!("({a}+{b})"));
            assert_eq!(tree, stack, "length {n}");
        }
        assert_eq!(
            pairwise((0..5).map(|i| i.to_string()).collect(), |a, b| format!(
                "({a}+{b})"
            )),
            Some("(((0+1)+(2+3))+4)".to_string())
        );
    }
}
