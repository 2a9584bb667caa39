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
    let last = k.exprs.len() - 1;
    if let Some(id) = k
        .exprs
        .iter()
        .position(|e| matches!(e.kind, ExprKind::Binary(..)))
    {
        k.exprs[id].kind = ExprKind::Binary(phobos_core::ir::BinOp::Add, last, last);
        assert!(entities(&k).contains(&format!("%{id}")), "{:?}", verify(&k));
    }

    // A constant of the wrong type.
    let mut k = good.clone();
    let c = k
        .exprs
        .iter()
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

    // A grid that names a dim that does not exist.
    let mut k = good;
    k.grid[1] = phobos_core::ir::GridExpr::Dim(9);
    assert!(entities(&k).contains(&"grid".to_string()));
}
