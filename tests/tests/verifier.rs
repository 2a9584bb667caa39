//! The IR verifier: every checked kernel verifies, and each kind of broken
//! IR is reported with the entity it concerns.

use phobos_core::ir::{ExprKind, Stmt, verify};
use phobos_core::types::{Scalar, Value};
use phobos_tests::{ph_files, program, root};

#[test]
fn every_fixture_and_example_verifies() {
    let mut files = ph_files(&root().join("tests/fixtures/ok"));
    files.extend(ph_files(&root().join("examples")));
    for f in files {
        let p = program(
            &f.display().to_string(),
            &std::fs::read_to_string(&f).unwrap(),
        );
        for name in p.kernel_names() {
            for cfg in p.configs(name) {
                let k = p.kernel(name, &cfg).unwrap();
                assert_eq!(verify(&k), vec![], "{}", f.display());
            }
        }
    }
}

const SRC: &str = "kernel k(X: tensor<f32>[N], Y: tensor<f32>[N], s: i32) {
  let t = X * 2.0
  Y = t + f32(s)
}";

#[test]
fn broken_ir_is_reported_with_its_entity() {
    let p = program("k.ph", SRC);
    let good = p.kernel("k", &[]).unwrap();
    let entities =
        |k: &phobos_core::ir::Kernel| verify(k).into_iter().map(|e| e.entity).collect::<Vec<_>>();

    // An operand that refers forward.
    let mut k = good.clone();
    let last = k.exprs.ids().next_back().unwrap();
    if let Some(id) = k.exprs.position(|e| matches!(e.kind, ExprKind::Binary(..))) {
        k.exprs[id].kind = ExprKind::Binary(phobos_core::ir::BinOp::Add, last, last);
        assert!(entities(&k).contains(&format!("%{id}")), "{:?}", verify(&k));
    }

    // A constant of the wrong type.
    let mut k = good.clone();
    let c = k
        .exprs
        .position(|e| matches!(e.kind, ExprKind::Const(_)))
        .unwrap();
    k.exprs[c].kind = ExprKind::Const(Value::I32(2));
    assert!(entities(&k).contains(&format!("%{c}")));

    // A store of the wrong type.
    let mut k = good.clone();
    let Some(Stmt::Store { value, .. }) = k.body.last().cloned() else {
        panic!("ends in a store")
    };
    k.exprs[value].ty = Scalar::I32;
    assert!(
        entities(&k).iter().any(|e| e.starts_with("stmt")),
        "{:?}",
        verify(&k)
    );

    // A local read before its let.
    let mut k = good.clone();
    k.body.swap(0, 1);
    assert!(
        verify(&k)
            .iter()
            .any(|e| e.message.contains("before it is defined")),
        "{:?}",
        verify(&k)
    );

    // A tensor read and written by the body, with its flags cleared.
    for (param, flag) in [(0, "read"), (1, "written")] {
        let mut k = good.clone();
        if let phobos_core::ir::ParamKind::Tensor { read, written, .. } = &mut k.params[param].kind
        {
            *read = flag != "read";
            *written = flag != "written";
        }
        let errors = verify(&k);
        assert!(
            errors
                .iter()
                .any(|e| e.entity == format!("param {param}") && e.message.ends_with(flag)),
            "{errors:?}"
        );
    }

    // A grid that names a dim that does not exist.
    let mut k = good;
    k.grid[1] = phobos_core::ir::GridExpr::Dim(9);
    assert!(entities(&k).contains(&"grid".to_string()));
}

const LOOPED: &str = "kernel k(X: tensor<f32>[M, N], S: tensor<f32>[M, 1], n: i32) {
  var s: tile<f32>[M, 1] = 0.0
  for j in 0 .. N / 4 {
    s = s + sum(X[:, j * 4 :+ 4], axis = 1)
  }
  S = s
}";

/// Reductions and loops break in the ways the verifier's invariants name.
#[test]
fn broken_reductions_and_loops_are_reported() {
    let p = program("looped.ph", LOOPED);
    let good = p.kernel("k", &[]).unwrap();
    assert_eq!(verify(&good), vec![]);
    let messages = |k: &phobos_core::ir::Kernel| {
        verify(k)
            .into_iter()
            .map(|e| e.to_string())
            .collect::<Vec<_>>()
    };
    let reduce = good
        .exprs
        .position(|e| matches!(e.kind, ExprKind::Reduce { .. }))
        .expect("a reduction");

    // A reduction whose shape keeps the reduced axis.
    let mut k = good.clone();
    k.exprs[reduce].shape[1] = phobos_core::types::Dim::Const(4);
    assert!(
        messages(&k).iter().any(|m| m.contains("reduced axis")),
        "{:?}",
        messages(&k)
    );

    // A reduction over an axis its operand does not have.
    let mut k = good.clone();
    if let ExprKind::Reduce { axis, .. } = &mut k.exprs[reduce].kind {
        *axis = 5;
    }
    assert!(
        messages(&k).iter().any(|m| m.contains("axis 5")),
        "{:?}",
        messages(&k)
    );

    // An iota below a reduction is a position in the operand's own tile
    // (the GPU plan moves a `var` that names one there): only its type is
    // wrong here.
    let mut k = good.clone();
    let ExprKind::Reduce { arg, .. } = k.exprs[reduce].kind else {
        unreachable!()
    };
    k.exprs[arg].kind = ExprKind::Iota(0);
    assert_eq!(
        messages(&k)
            .iter()
            .map(|m| m.split(": ").nth(1).unwrap_or(m))
            .collect::<Vec<_>>(),
        ["must be a scalar i32, is f32[M, 4]"],
        "{:?}",
        messages(&k)
    );

    // A loop without its end, and an end without its loop.
    let mut k = good.clone();
    let end = k.body.iter().position(|s| *s == Stmt::EndFor).unwrap();
    k.body.remove(end);
    assert!(
        messages(&k).iter().any(|m| m.contains("without its match")),
        "{:?}",
        messages(&k)
    );
    let mut k = good.clone();
    let open = k
        .body
        .iter()
        .position(|s| matches!(s, Stmt::For { .. }))
        .unwrap();
    k.body.remove(open);
    assert!(
        messages(&k).iter().any(|m| m.contains("without its match")),
        "{:?}",
        messages(&k)
    );

    // A loop bound read from a scalar parameter (data).
    let mut k = good.clone();
    let Some(Stmt::For { end, .. }) = k.body.get(open).cloned() else {
        unreachable!()
    };
    k.exprs[end].kind = ExprKind::Param(2);
    k.exprs[end].shape = Vec::new();
    assert!(
        messages(&k)
            .iter()
            .any(|m| m.contains("not a constant, dim")),
        "{:?}",
        messages(&k)
    );
}
