//! Whether a subgroup is laid out as the exchanges and reductions want it,
//! written once against [`SubgroupOps`] for every naga builder that needs
//! it: the check at the top of reduction kernels and of shuffled draws
//! (`lower/`, [`crate::Lower`]'s builder), the fill kernels' vote before
//! their exchange (`tandem/shuffle.rs`), and the probe a runtime
//! dispatches once per device (`probe.rs`) to learn that kernels can do
//! without the check (`GpuOptions::subgroup_layout_known`).
//!
//! The layout: the subgroup is `lanes` wide, and its lane `i` is the
//! invocation `lanes * w + i` of one `w`. naga's subgroups promise
//! neither (Vulkan does not order invocations into subgroups).

use crate::exact::IntOps;
use naga::BuiltIn;

/// The subgroup operations the layout check needs, beside [`IntOps`].
pub(crate) trait SubgroupOps: IntOps {
    /// The entry point's u32 argument for `builtin`, added on first use
    /// under `name`.
    fn builtin(&mut self, builtin: BuiltIn, name: &str) -> Self::V;
    /// `subgroupBroadcastFirst(v)`.
    fn broadcast_first(&mut self, v: Self::V) -> Self::V;
    /// `subgroupAll(b)`: a vote, uniform over the subgroup.
    fn all(&mut self, b: Self::B) -> Self::B;
}

/// This lane's part of the layout (module doc) for the invocation of
/// linear index `index` in subgroups of `lanes` (a power of two) lanes:
/// its lane is `index % lanes`, its subgroup is `lanes` wide, and its
/// first lane has the same `index / lanes`. Not yet a vote: callers may
/// add conditions of their own before [`SubgroupOps::all`].
pub(crate) fn lane_in_order<O: SubgroupOps>(o: &mut O, index: O::V, lanes: u32) -> O::B {
    let size = o.builtin(BuiltIn::SubgroupSize, "subgroup_size");
    let lane = o.builtin(BuiltIn::SubgroupInvocationId, "subgroup_lane");
    let low = o.c(lanes - 1);
    let own = o.and(index, low);
    let same_lane = o.eq(lane, own);
    let shift = o.c(lanes.trailing_zeros());
    let row = o.shr(index, shift);
    let first = o.broadcast_first(row);
    let same_row = o.eq(row, first);
    let width = o.c(lanes);
    let wide = o.eq(size, width);
    let ok = o.band(same_lane, same_row);
    o.band(ok, wide)
}

/// True in every lane of a subgroup laid out as the module doc says, for
/// subgroups of `lanes` lanes (a vote, uniform over the subgroup, so a
/// path that exchanges is entered by all its lanes or none).
pub(crate) fn in_order<O: SubgroupOps>(o: &mut O, index: O::V, lanes: u32) -> O::B {
    let ok = lane_in_order(o, index, lanes);
    o.all(ok)
}
