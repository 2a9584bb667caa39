//! Exact mode's emitted naga functions, evaluated on the host by a small
//! interpreter of the naga expressions they use, against Rust's `/` and
//! `sqrt`: this checks the emitted IR itself (operator mapping, select
//! order, shifts), beyond the crate's host model of the same algorithm.

use naga::{BinaryOperator as B, Expression, Function, Literal, MathFunction, Module, Statement};
use phobos_core::Program;
use phobos_gpu::{GpuOptions, lower};

fn module(source: &str) -> Module {
    let (program, diags) = Program::parse("t.ph", source);
    assert!(diags.is_empty(), "{diags:?}");
    lower(&program.kernel("t", &[]).unwrap(), &GpuOptions::default()).unwrap()
}

fn function<'m>(m: &'m Module, name: &str) -> &'m Function {
    m.functions
        .iter()
        .map(|(_, f)| f)
        .find(|f| f.name.as_deref() == Some(name))
        .unwrap_or_else(|| panic!("no function {name}"))
}

/// Evaluates a function of f32 arguments to its returned bits, walking its
/// statements (`Emit`, `Store`, `If`, `Loop`, `Break`, `Return`). Values are u32 bit
/// patterns; bools are 0 and 1; a local variable's pointer is its index.
/// The one float operation, `Divide`, is the native division estimate:
/// `div_estimate(a_bits, b_bits)` gives its bits.
fn eval(f: &Function, args: &[u32], div_estimate: &mut dyn FnMut(u32, u32) -> u32) -> u32 {
    let mut v = vec![0u32; f.expressions.len()];
    let mut vars = vec![0u32; f.local_variables.len()];
    // Expressions naga never emits: literals, arguments, variables.
    for (h, e) in f.expressions.iter() {
        v[h.index()] = match *e {
            Expression::Literal(Literal::U32(x)) => x,
            Expression::Literal(Literal::Bool(b)) => b as u32,
            Expression::FunctionArgument(i) => args[i as usize],
            Expression::LocalVariable(lv) => lv.index() as u32,
            _ => continue,
        };
    }
    match run(f, &f.body, &mut v, &mut vars, div_estimate) {
        Flow::Return(r) => r,
        flow => panic!("the body ends with {flow:?}, not a return"),
    }
}

/// How a block ends.
#[derive(Debug)]
enum Flow {
    Next,
    Break,
    Return(u32),
}

fn run(
    f: &Function,
    block: &naga::Block,
    v: &mut Vec<u32>,
    vars: &mut Vec<u32>,
    div_estimate: &mut dyn FnMut(u32, u32) -> u32,
) -> Flow {
    for st in block.iter() {
        match *st {
            Statement::Emit(ref range) => {
                for h in range.clone() {
                    v[h.index()] = compute(&f.expressions[h], v, vars, div_estimate);
                }
            }
            Statement::Store { pointer, value } => {
                vars[v[pointer.index()] as usize] = v[value.index()]
            }
            Statement::If {
                condition,
                ref accept,
                ref reject,
            } => {
                let b = if v[condition.index()] != 0 {
                    accept
                } else {
                    reject
                };
                match run(f, b, v, vars, div_estimate) {
                    Flow::Next => {}
                    flow => return flow,
                }
            }
            Statement::Loop {
                ref body,
                ref continuing,
                break_if: None,
            } => {
                assert!(continuing.is_empty());
                let mut iterations = 0;
                loop {
                    match run(f, body, v, vars, div_estimate) {
                        Flow::Next => {}
                        Flow::Break => break,
                        flow => return flow,
                    }
                    iterations += 1;
                    assert!(iterations < 1000, "the loop does not end");
                }
            }
            Statement::Break => return Flow::Break,
            Statement::Return { value: Some(r) } => return Flow::Return(v[r.index()]),
            ref other => panic!("unexpected statement {other:?}"),
        }
    }
    Flow::Next
}

fn compute(
    e: &Expression,
    v: &[u32],
    vars: &[u32],
    div_estimate: &mut dyn FnMut(u32, u32) -> u32,
) -> u32 {
    let g = |x: naga::Handle<Expression>| v[x.index()];
    match *e {
        Expression::As {
            expr,
            convert: None,
            ..
        } => g(expr),
        Expression::Load { pointer } => vars[g(pointer) as usize],
        Expression::Math {
            fun: MathFunction::CountLeadingZeros,
            arg,
            ..
        } => g(arg).leading_zeros(),
        Expression::Select {
            condition,
            accept,
            reject,
        } => {
            if g(condition) != 0 {
                g(accept)
            } else {
                g(reject)
            }
        }
        Expression::Binary { op, left, right } => {
            let (a, b) = (g(left), g(right));
            match op {
                B::Add => a.wrapping_add(b),
                B::Subtract => a.wrapping_sub(b),
                B::Multiply => a.wrapping_mul(b),
                B::Divide => div_estimate(a, b),
                B::And => a & b,
                B::InclusiveOr => a | b,
                B::ExclusiveOr => a ^ b,
                B::ShiftLeft => {
                    assert!(b < 32);
                    a << b
                }
                B::ShiftRight => {
                    assert!(b < 32);
                    a >> b
                }
                B::Equal => (a == b) as u32,
                B::NotEqual => (a != b) as u32,
                B::Less => (a < b) as u32,
                B::LogicalAnd => (a != 0 && b != 0) as u32,
                B::LogicalOr => (a != 0 || b != 0) as u32,
                op => panic!("unexpected operator {op:?}"),
            }
        }
        ref other => panic!("unexpected expression {other:?}"),
    }
}

/// Rust's correctly rounded division on bits.
fn rust_div(a: u32, b: u32) -> u32 {
    (f32::from_bits(a) / f32::from_bits(b)).to_bits()
}

fn same(got: u32, want: f32) -> bool {
    if want.is_nan() {
        got == 0x7fc0_0000
    } else {
        got == want.to_bits()
    }
}

fn inputs() -> Vec<u32> {
    let mut v: Vec<u32> = vec![
        0,
        1,
        2,
        0x007f_ffff,
        0x0040_0000,
        0x0080_0000,
        0x0080_0001,
        0x3f80_0000,
        0x3f80_0001,
        0x3f7f_ffff,
        0x4040_0000,
        0x7f7f_ffff,
        0x7f80_0000,
        0x7f80_0001,
        0x7fc0_0000,
        0x3dcc_cccd,
        0x0000_0100,
        0x3400_0000,
        0x5f00_0000,
    ];
    let neg: Vec<u32> = v.iter().map(|x| x | 0x8000_0000).collect();
    v.extend(neg);
    let mut s = 0x9e37_79b9u32;
    for _ in 0..150 {
        s ^= s << 13;
        s ^= s >> 17;
        s ^= s << 5;
        v.push(s);
    }
    v
}

#[test]
fn emitted_exact_div_matches_rust_division() {
    let m =
        module("kernel t(X: tensor<f32>[N], Z: tensor<f32>[N], Y: tensor<f32>[N]) { Y = X / Z }");
    let f = function(&m, "exact_div");
    let xs = inputs();
    // The estimate: correctly rounded, then moved by -3..=3 ulp, then
    // broken ones (0, infinity, NaN, random bits, far off).
    let mut s = 0x2545_f491u32;
    let mut estimates: Vec<Box<dyn FnMut(u32, u32) -> u32>> = vec![Box::new(rust_div)];
    for d in -3i32..=3 {
        estimates.push(Box::new(move |a, b| rust_div(a, b).wrapping_add(d as u32)));
    }
    for bad in [0u32, 0x7f80_0000, 0x7fc0_0000, 0xff80_0000] {
        estimates.push(Box::new(move |_, _| bad));
    }
    estimates.push(Box::new(move |_, _| {
        s ^= s << 13;
        s ^= s >> 17;
        s ^= s << 5;
        s
    }));
    estimates.push(Box::new(|a, b| rust_div(a, b).wrapping_add(300)));
    estimates.push(Box::new(|a, b| rust_div(a, b) ^ (1 << 20)));
    for est in &mut estimates {
        for &a in &xs {
            for &b in &xs {
                let want = f32::from_bits(a) / f32::from_bits(b);
                let got = eval(f, &[a, b], est);
                assert!(
                    same(got, want),
                    "{a:#010x} / {b:#010x}: got {got:#010x}, want {:#010x}",
                    want.to_bits()
                );
            }
        }
    }
}

/// The number of expressions `exact_div` emits on its common path, and in
/// the long division's loop body (run 26 times). With `branch_fallback`
/// (the default) the fallback sits in an `if` the common path skips;
/// without it (what the runtime uses on lavapipe, whose pipeline creation
/// takes minutes on a uniform branch there) it is selected, so every call
/// evaluates it.
#[test]
fn exact_div_expression_counts() {
    fn count(b: &naga::Block) -> usize {
        b.iter()
            .map(|st| match st {
                Statement::Emit(r) => r.clone().count(),
                _ => 0,
            })
            .sum()
    }
    fn loops(b: &naga::Block, out: &mut Vec<usize>) {
        for st in b.iter() {
            match st {
                Statement::Loop { body, .. } => out.push(count(body)),
                Statement::If { accept, reject, .. } => {
                    loops(accept, out);
                    loops(reject, out);
                }
                _ => {}
            }
        }
    }
    let source = "kernel t(X: tensor<f32>[N], Z: tensor<f32>[N], Y: tensor<f32>[N]) { Y = X / Z }";
    let (program, _) = Program::parse("t.ph", source);
    let kernel = program.kernel("t", &[]).unwrap();
    for branch_fallback in [true, false] {
        let options = GpuOptions {
            branch_fallback,
            ..GpuOptions::default()
        };
        let m = lower(&kernel, &options).unwrap();
        let f = function(&m, "exact_div");
        let straight = count(&f.body);
        let mut bodies = Vec::new();
        loops(&f.body, &mut bodies);
        eprintln!(
            "exact_div (branch {branch_fallback}): {straight} on the common path, loop bodies {bodies:?}"
        );
        let limit = if branch_fallback { 120 } else { 200 };
        assert!(straight < limit, "{straight}");
        assert_eq!(bodies.len(), 1);
        assert!(bodies[0] < 20, "{bodies:?}");
    }
}

#[test]
fn emitted_exact_sqrt_matches_rust_sqrt() {
    let m = module("kernel t(X: tensor<f32>[N], Y: tensor<f32>[N]) { Y = sqrt(X) }");
    let f = function(&m, "exact_sqrt");
    let mut xs = inputs();
    xs.extend((0..20_000u32).map(|i| i.wrapping_mul(2_147_483)));
    for a in xs {
        let want = f32::from_bits(a).sqrt();
        let got = eval(f, &[a], &mut rust_div);
        assert!(
            same(got, want),
            "sqrt({a:#010x}): got {got:#010x}, want {:#010x}",
            want.to_bits()
        );
    }
}

#[test]
fn fast_mode_uses_no_exact_functions() {
    let (program, _) = Program::parse(
        "t.ph",
        "kernel t(X: tensor<f32>[N], Y: tensor<f32>[N]) { Y = sqrt(X) / X }",
    );
    let options = GpuOptions {
        precision: phobos_gpu::Precision::Fast,
        ..GpuOptions::default()
    };
    let m = lower(&program.kernel("t", &[]).unwrap(), &options).unwrap();
    assert_eq!(m.functions.len(), 0);
}
