//! Reading and writing tensor elements, whether a tensor is one storage
//! binding or several ([`crate::Split`]: one larger than the device's
//! largest binding). A split tensor's element `flat` lies at
//! `flat & (len - 1)` of piece `flat >> log2(len)`; logical addressing has
//! no select of pointers, so each access sits in the leaves of a tree of
//! `if`s on the piece number (depth `log2(pieces)`), and a load goes
//! through a function-local variable. A tensor bound as `vec4`s counts in
//! vec4s (`len / 4` of them a piece; `len` is a multiple of 4).
//!
//! For a tensor of one binding these emit exactly what `element_ptr`,
//! `load_element`, `store_element` and `quad_ptr` do, so unsplit kernels'
//! modules are unchanged.

use super::{H, Lower};
use naga::{BinaryOperator, Block, Expression, GlobalVariable, Handle, Statement};
use phobos_core::ir::Place;

impl Lower<'_> {
    /// The parameter index of `p` when it is a split tensor.
    fn split_param(&self, p: Place) -> Option<usize> {
        match p {
            Place::Param(i) if self.splits[i].is_some() => Some(i),
            _ => None,
        }
    }

    /// Loads element `flat` of a tensor or workgroup tile `p`.
    pub(super) fn load_at(&mut self, p: Place, flat: H) -> H {
        if self.place_elem(p).is_half() {
            return self.half_load(p, flat);
        }
        let Some(i) = self.split_param(p) else {
            let ptr = self.element_ptr(p, Some(flat));
            return self.load_element(p, ptr);
        };
        let elem = self.place_elem(p);
        let tmp = self.temp(elem);
        let (unit, lane) = self.unit_of(i, flat);
        self.in_piece(i, unit, &mut |lw, ptr| {
            let ptr = match lane {
                Some(index) => lw.access(ptr, index),
                None => ptr,
            };
            let v = lw.var_load(ptr);
            lw.var_store(tmp, v);
        });
        self.var_load(tmp)
    }

    /// Stores `v` to element `flat` of a tensor or workgroup tile `p`.
    pub(super) fn store_at(&mut self, p: Place, flat: H, v: H) {
        if self.place_elem(p).is_half() {
            return self.half_store(p, flat, v);
        }
        let Some(i) = self.split_param(p) else {
            let ptr = self.element_ptr(p, Some(flat));
            return self.store_element(p, ptr, v);
        };
        let (unit, lane) = self.unit_of(i, flat);
        self.in_piece(i, unit, &mut |lw, ptr| {
            let ptr = match lane {
                Some(index) => lw.access(ptr, index),
                None => ptr,
            };
            lw.var_store(ptr, v);
        });
    }

    /// Loads the vec4 from element `flat` (a multiple of 4) of a tensor
    /// bound as `array<vec4<T>>`.
    pub(super) fn load_quad(&mut self, p: Place, flat: H) -> H {
        let Some(i) = self.split_param(p) else {
            let ptr = self.quad_ptr(p, flat);
            return self.var_load(ptr);
        };
        let elem = self.place_elem(p);
        let ty = super::bindings::vec4_type(&mut self.m, elem);
        let var = self.f.local_variables.append(
            naga::LocalVariable {
                name: None,
                ty,
                init: None,
            },
            naga::Span::UNDEFINED,
        );
        let tmp = self.expr(Expression::LocalVariable(var));
        let (unit, _) = self.unit_of(i, flat);
        self.in_piece(i, unit, &mut |lw, ptr| {
            let v = lw.var_load(ptr);
            lw.var_store(tmp, v);
        });
        self.var_load(tmp)
    }

    /// Stores the vec4 `v4` to element `flat` (a multiple of 4) of a tensor
    /// bound as `array<vec4<T>>`.
    pub(super) fn store_quad(&mut self, p: Place, flat: H, v4: H) {
        let Some(i) = self.split_param(p) else {
            let ptr = self.quad_ptr(p, flat);
            self.var_store(ptr, v4);
            return;
        };
        let (unit, _) = self.unit_of(i, flat);
        self.in_piece(i, unit, &mut |lw, ptr| {
            lw.var_store(ptr, v4);
        });
    }

    /// The array index of element `flat` of split tensor `i` counted in the
    /// units of its arrays (vec4s for a quad tensor), and its lane in the
    /// vec4 for a quad tensor.
    fn unit_of(&mut self, i: usize, flat: H) -> (H, Option<H>) {
        if !self.plan.vec4[i] {
            return (flat, None);
        }
        let two = self.u32c(2);
        let unit = self.binary(BinaryOperator::ShiftRight, flat, two);
        let three = self.u32c(3);
        let lane = self.binary(BinaryOperator::And, flat, three);
        (unit, Some(lane))
    }

    /// Calls `access` with a pointer to unit `unit` of split tensor `i`, in
    /// the leaf of the tree of `if`s on its piece number that holds it. The
    /// caller masks accesses outside the tensor, so the piece exists.
    fn in_piece(&mut self, i: usize, unit: H, access: &mut dyn FnMut(&mut Self, H)) {
        let split = self.splits[i].expect("a split tensor");
        let per_piece = if self.plan.vec4[i] {
            split.piece_len / 4
        } else {
            split.piece_len
        };
        debug_assert!(per_piece.is_power_of_two());
        let shift = self.u32c(per_piece.trailing_zeros());
        let piece = self.binary(BinaryOperator::ShiftRight, unit, shift);
        let mask = self.u32c(per_piece - 1);
        let off = self.binary(BinaryOperator::And, unit, mask);
        let globals = self.pieces[i].clone();
        self.piece_tree(&globals, 0, piece, off, access);
    }

    /// The `if` tree over pieces `first..first + globals.len()`: halves on
    /// `piece < mid` until one piece is left.
    fn piece_tree(
        &mut self,
        globals: &[Handle<GlobalVariable>],
        first: u32,
        piece: H,
        off: H,
        access: &mut dyn FnMut(&mut Self, H),
    ) {
        if let [g] = globals {
            let base = self.expr(Expression::GlobalVariable(*g));
            let ptr = self.access(base, off);
            access(self, ptr);
            return;
        }
        let half = globals.len() / 2;
        let mid = self.u32c(first + half as u32);
        let low = self.binary(BinaryOperator::Less, piece, mid);
        let (lo, hi) = globals.split_at(half);
        let accept = self.leaves(|lw| lw.piece_tree(lo, first, piece, off, access));
        let reject = self.leaves(|lw| lw.piece_tree(hi, first + half as u32, piece, off, access));
        self.cur.push(Statement::If {
            condition: low,
            accept,
            reject,
        });
    }

    /// The statements `build` appends, as a block of their own.
    fn leaves(&mut self, build: impl FnOnce(&mut Self)) -> Block {
        let outer = std::mem::take(&mut self.cur);
        build(self);
        Block::from_vec(std::mem::replace(&mut self.cur, outer))
    }
}
