//! Typed ids and the arenas they index: an [`ExprId`] cannot stand where a
//! [`LocalId`] (or a tensor position, or a loop counter) is meant.

use std::fmt;
use std::marker::PhantomData;
use std::ops;

/// An index into one kind of [`IdVec`].
pub trait Idx: Copy + Eq + Ord + std::hash::Hash + fmt::Debug {
    /// The id of the item at `index`. Only an arena makes ids
    /// ([`IdVec::push`], [`IdVec::ids`]); IR built by hand (a test) may.
    fn from_index(index: usize) -> Self;
    fn index(self) -> usize;
}

macro_rules! id {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name(u32);

        impl $name {
            fn new(index: usize) -> Self {
                Self(u32::try_from(index).expect(concat!(stringify!($name), " overflows u32")))
            }

            pub fn index(self) -> usize {
                self.0 as usize
            }
        }

        impl Idx for $name {
            fn from_index(index: usize) -> Self {
                Self::new(index)
            }

            fn index(self) -> usize {
                self.index()
            }
        }

        /// The bare number, as the printed IR shows it (`%3`, `x.2`).
        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Display::fmt(&self.0, f)
            }
        }
    };
}

id! {
    /// A node of [`super::Kernel::exprs`].
    ExprId
}

id! {
    /// A local of [`super::Kernel::locals`].
    LocalId
}

/// A vector indexed by the id `I` only.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct IdVec<I, T> {
    raw: Vec<T>,
    id: PhantomData<fn(I) -> I>,
}

impl<I: Idx, T> IdVec<I, T> {
    pub fn new() -> Self {
        Self::from_raw(Vec::new())
    }

    pub fn with_capacity(n: usize) -> Self {
        Self::from_raw(Vec::with_capacity(n))
    }

    fn from_raw(raw: Vec<T>) -> Self {
        IdVec {
            raw,
            id: PhantomData,
        }
    }

    /// `n` copies of `elem`: a side table of an arena of `n` items.
    pub fn from_elem(elem: T, n: usize) -> Self
    where
        T: Clone,
    {
        Self::from_raw(vec![elem; n])
    }

    /// Appends `item` and returns its id.
    pub fn push(&mut self, item: T) -> I {
        let id = I::from_index(self.raw.len());
        self.raw.push(item);
        id
    }

    pub fn len(&self) -> usize {
        self.raw.len()
    }

    pub fn is_empty(&self) -> bool {
        self.raw.is_empty()
    }

    pub fn get(&self, id: I) -> Option<&T> {
        self.raw.get(id.index())
    }

    pub fn get_mut(&mut self, id: I) -> Option<&mut T> {
        self.raw.get_mut(id.index())
    }

    pub fn iter(&self) -> std::slice::Iter<'_, T> {
        self.raw.iter()
    }

    /// Every id, in order.
    pub fn ids(&self) -> impl DoubleEndedIterator<Item = I> + ExactSizeIterator + use<I, T> {
        (0..self.raw.len()).map(I::from_index)
    }

    /// The id of the first item that satisfies `pred`.
    pub fn position(&self, pred: impl FnMut(&T) -> bool) -> Option<I> {
        self.raw.iter().position(pred).map(I::from_index)
    }

    /// Every item with its id, in order.
    pub fn iter_enumerated(&self) -> impl DoubleEndedIterator<Item = (I, &T)> + ExactSizeIterator {
        self.raw
            .iter()
            .enumerate()
            .map(|(n, x)| (I::from_index(n), x))
    }
}

impl<I: Idx, T> Default for IdVec<I, T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<I: Idx, T> FromIterator<T> for IdVec<I, T> {
    fn from_iter<It: IntoIterator<Item = T>>(it: It) -> Self {
        Self::from_raw(it.into_iter().collect())
    }
}

impl<I: Idx, T> ops::Index<I> for IdVec<I, T> {
    type Output = T;
    fn index(&self, id: I) -> &T {
        &self.raw[id.index()]
    }
}

impl<I: Idx, T> ops::IndexMut<I> for IdVec<I, T> {
    fn index_mut(&mut self, id: I) -> &mut T {
        &mut self.raw[id.index()]
    }
}

impl<'a, I: Idx, T> IntoIterator for &'a IdVec<I, T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.raw.iter()
    }
}

impl<'a, I: Idx, T> IntoIterator for &'a mut IdVec<I, T> {
    type Item = &'a mut T;
    type IntoIter = std::slice::IterMut<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.raw.iter_mut()
    }
}

impl<I, T: fmt::Debug> fmt::Debug for IdVec<I, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.raw.fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_arena_hands_out_ids_in_order_and_is_indexed_by_them() {
        let mut v: IdVec<ExprId, &str> = IdVec::new();
        let a = v.push("a");
        let b = v.push("b");
        assert!(a < b && a.index() == 0 && b.index() == 1);
        assert_eq!((v[a], v[b], v.len()), ("a", "b", 2));
        v[b] = "c";
        let pairs: Vec<(ExprId, &&str)> = v.iter_enumerated().collect();
        assert_eq!(pairs, vec![(a, &"a"), (b, &"c")]);
        assert_eq!(v.ids().collect::<Vec<_>>(), vec![a, b]);
        assert_eq!(v.position(|x| *x == "c"), Some(b));
        assert_eq!(format!("%{b}"), "%1");
        let mut seen = IdVec::<ExprId, bool>::from_elem(false, v.len());
        seen[b] = true;
        assert_eq!(seen.get(b), Some(&true));
        assert_eq!(seen.get(a), Some(&false));
    }
}
