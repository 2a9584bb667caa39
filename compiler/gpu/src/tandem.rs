//! Tandem fills on the GPU (stdlib/tandem/SPEC.md, sections 3 and 12): a
//! naga compute module, built directly, that writes the Tandem stream of a
//! key, or an element map of it, into a storage buffer.
//!
//! One invocation steps one chunk: it seeds the state from the key, `K` and
//! its 64-bit chunk index, runs the 8 warm-up steps, then `K` steps, each
//! giving one 16-byte block. Invocation `g` of a dispatch is chunk
//! `first_chunk + g`, lane `g % 8` of its group, so block `j` of its chunk
//! is relative stream block `(g / 8) * 8K + 8j + g % 8`: the eight
//! invocations of a group write each step's 128 contiguous bytes together,
//! one `vec4<u32>` store each.
//!
//! Random access: the dispatch starts at a group boundary, and a block is
//! stored at `rel - skip` only when `skip <= rel < skip + n_blocks`, so a
//! dispatch writes exactly stream blocks `8K * first_group + skip ..` of
//! length `n_blocks` from the start of its buffer binding; a cut inside a
//! block is the caller's (the runtime reads the whole blocks and keeps the
//! bytes it needs).
//!
//! Element maps ([`FillMap`]): every map implemented here keeps positions,
//! that is element `i` of a fill of `size`-byte elements is computed from
//! stream bytes `size * i .. size * (i + 1)` alone and written at the same
//! bytes, so one block of stream gives one block of output:
//! - [`FillMap::Raw`]: the stream's bytes, which are the `u8`, `u16`, `u32`
//!   and `u64` fills (SPEC.md 3.6: little-endian views of one byte stream);
//! - [`FillMap::F16`]: `f16_bits`, `m * 2^-11` for the top 11 bits of each
//!   16-bit draw, built with integer operations as in the reference;
//! - [`FillMap::F32`]: `(w >> 8) * 2^-24`: an exact conversion of a 24-bit
//!   integer and an exact multiply by a power of two (no rounding at all);
//! - [`FillMap::F64`]: `(x >> 11) * 2^-53`, built as binary64 bits with
//!   32-bit integer operations (no `SHADER_F64` needed): exponent from the
//!   leading-zero count, significand shifted into place.
//!
//! The uniform block is [`FillParams`] (binding 0); the output is a
//! `read_write` `array<vec4<u32>>` (binding 1).

use crate::{ENTRY_POINT, GpuOptions, LowerError, Precision};
use naga::valid::{Capabilities, ModuleInfo, ValidationFlags, Validator};
use naga::{
    AddressSpace, ArraySize, BinaryOperator, Block, EntryPoint, Expression, Function,
    GlobalVariable, Handle, Literal, LocalVariable, MathFunction, Module, Range, ResourceBinding,
    Scalar as NScalar, ScalarKind, ShaderStage, Span, Statement, StorageAccess, StructMember, Type,
    TypeInner, VectorSize,
};

/// Invocations per workgroup of the fill kernel (one chunk each).
pub const FILL_WORKGROUP_SIZE: u32 = 64;

/// Binding of the output `array<vec4<u32>>`.
pub const FILL_OUTPUT_BINDING: u32 = 1;

/// Golden-ratio Weyl constant of the stream (SPEC.md 3.1).
const WEYL_STREAM: u32 = 0x9E37_79B9;
/// Warm-up steps after seeding a chunk (SPEC.md 3.2).
const WARM_UP_STEPS: u32 = 8;

/// How a block of stream becomes a block of output. Every map keeps
/// positions: output bytes `a..b` depend on stream bytes `a..b` only.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FillMap {
    /// The stream's bytes: the `u8`, `u16`, `u32` and `u64` fills.
    Raw,
    /// `f16_bits`: binary16 uniforms in [0, 1) from each 16-bit draw.
    F16,
    /// `f32` uniforms in [0, 1) from each word.
    F32,
    /// `f64` uniforms in [0, 1) from each 64-bit draw.
    F64,
}

impl FillMap {
    pub fn name(self) -> &'static str {
        match self {
            FillMap::Raw => "raw",
            FillMap::F16 => "f16",
            FillMap::F32 => "f32",
            FillMap::F64 => "f64",
        }
    }
}

/// The uniform block of one fill dispatch, as 12 little-endian u32 words
/// (48 bytes) in this order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FillParams {
    /// The key's words.
    pub key: [u32; 4],
    /// The chunk length `K` (a power of two, 1..=4096).
    pub k: u32,
    /// The dispatch's first chunk, a multiple of 8 (a group's first).
    pub first_chunk: u64,
    /// Chunks this dispatch steps (a multiple of 8); invocations past it
    /// do nothing.
    pub n_chunks: u32,
    /// Blocks of the dispatch's first group not written (below `8K`).
    pub skip: u32,
    /// Blocks written, from binding index 0.
    pub n_blocks: u32,
}

impl FillParams {
    /// Bytes of the uniform block.
    pub const SIZE: usize = 48;

    pub fn words(&self) -> [u32; 12] {
        [
            self.key[0],
            self.key[1],
            self.key[2],
            self.key[3],
            self.k,
            self.first_chunk as u32,
            (self.first_chunk >> 32) as u32,
            self.n_chunks,
            self.skip,
            self.n_blocks,
            0,
            0,
        ]
    }

    pub fn bytes(&self) -> Vec<u8> {
        self.words().iter().flat_map(|w| w.to_le_bytes()).collect()
    }

    /// Workgroups to dispatch: `[x, y, 1]` with x at most `max_per_dim`,
    /// numbered linearly by the shader (x fastest).
    pub fn workgroups(&self, max_per_dim: u32) -> [u32; 3] {
        let groups = self.n_chunks.div_ceil(FILL_WORKGROUP_SIZE);
        crate::dispatch_size([groups, 1, 1], max_per_dim)
    }
}

/// The names of the uniform's members, in [`FillParams::words`] order.
const PARAM_NAMES: [&str; 12] = [
    "key0", "key1", "key2", "key3", "k", "chunk_lo", "chunk_hi", "n_chunks", "skip", "n_blocks",
    "pad0", "pad1",
];

type H = Handle<Expression>;

/// Appends expressions to one function, emitting each where it is made.
struct Fb {
    f: Function,
    cur: Vec<Statement>,
    u32_ty: Handle<Type>,
}

impl Fb {
    fn expr(&mut self, e: Expression) -> H {
        let pre = e.needs_pre_emit();
        let h = self.f.expressions.append(e, Span::UNDEFINED);
        if !pre {
            self.cur.push(Statement::Emit(Range::new_from_bounds(h, h)));
        }
        h
    }
    fn c(&mut self, v: u32) -> H {
        self.expr(Expression::Literal(Literal::U32(v)))
    }
    fn bin(&mut self, op: BinaryOperator, a: H, b: H) -> H {
        self.expr(Expression::Binary {
            op,
            left: a,
            right: b,
        })
    }
    fn add(&mut self, a: H, b: H) -> H {
        self.bin(BinaryOperator::Add, a, b)
    }
    fn sub(&mut self, a: H, b: H) -> H {
        self.bin(BinaryOperator::Subtract, a, b)
    }
    fn mul(&mut self, a: H, b: H) -> H {
        self.bin(BinaryOperator::Multiply, a, b)
    }
    fn xor(&mut self, a: H, b: H) -> H {
        self.bin(BinaryOperator::ExclusiveOr, a, b)
    }
    fn and(&mut self, a: H, b: H) -> H {
        self.bin(BinaryOperator::And, a, b)
    }
    fn or(&mut self, a: H, b: H) -> H {
        self.bin(BinaryOperator::InclusiveOr, a, b)
    }
    fn shl(&mut self, a: H, b: H) -> H {
        self.bin(BinaryOperator::ShiftLeft, a, b)
    }
    fn shr(&mut self, a: H, b: H) -> H {
        self.bin(BinaryOperator::ShiftRight, a, b)
    }
    fn shl_c(&mut self, a: H, n: u32) -> H {
        let n = self.c(n);
        self.shl(a, n)
    }
    fn shr_c(&mut self, a: H, n: u32) -> H {
        let n = self.c(n);
        self.shr(a, n)
    }
    fn and_c(&mut self, a: H, m: u32) -> H {
        let m = self.c(m);
        self.and(a, m)
    }
    fn lt(&mut self, a: H, b: H) -> H {
        self.bin(BinaryOperator::Less, a, b)
    }
    fn ge(&mut self, a: H, b: H) -> H {
        self.bin(BinaryOperator::GreaterEqual, a, b)
    }
    fn eq(&mut self, a: H, b: H) -> H {
        self.bin(BinaryOperator::Equal, a, b)
    }
    fn select(&mut self, c: H, yes: H, no: H) -> H {
        self.expr(Expression::Select {
            condition: c,
            accept: yes,
            reject: no,
        })
    }
    fn clz(&mut self, a: H) -> H {
        self.expr(Expression::Math {
            fun: MathFunction::CountLeadingZeros,
            arg: a,
            arg1: None,
            arg2: None,
            arg3: None,
        })
    }
    /// `rotl(x, r)` for a constant `0 < r < 32`.
    fn rotl(&mut self, x: H, r: u32) -> H {
        let a = self.shl_c(x, r);
        let b = self.shr_c(x, 32 - r);
        self.or(a, b)
    }
    /// A fresh function-local u32 variable (a pointer expression).
    fn var(&mut self, name: &str) -> H {
        let v = self.f.local_variables.append(
            LocalVariable {
                name: Some(name.into()),
                ty: self.u32_ty,
                init: None,
            },
            Span::UNDEFINED,
        );
        self.expr(Expression::LocalVariable(v))
    }
    fn load(&mut self, p: H) -> H {
        self.expr(Expression::Load { pointer: p })
    }
    fn store(&mut self, p: H, v: H) {
        self.cur.push(Statement::Store {
            pointer: p,
            value: v,
        });
    }
    /// Runs `build` in a fresh block and returns that block.
    fn nested(&mut self, build: impl FnOnce(&mut Self)) -> Block {
        let outer = std::mem::take(&mut self.cur);
        build(self);
        Block::from_vec(std::mem::replace(&mut self.cur, outer))
    }

    /// ChaCha's quarter round on values; returns the new values.
    fn quarter_round(&mut self, s: [H; 4]) -> [H; 4] {
        let [mut a, mut b, mut c, mut d] = s;
        a = self.add(a, b);
        let x = self.xor(d, a);
        d = self.rotl(x, 16);
        c = self.add(c, d);
        let x = self.xor(b, c);
        b = self.rotl(x, 12);
        a = self.add(a, b);
        let x = self.xor(d, a);
        d = self.rotl(x, 8);
        c = self.add(c, d);
        let x = self.xor(b, c);
        b = self.rotl(x, 7);
        [a, b, c, d]
    }

    /// Step `t` on the state variables: `y = s + (t * W, 0, 0, 0)`,
    /// `s = P(y)`; returns the output `P(y) + y` when `output`.
    fn step(&mut self, vars: [H; 4], t: H, output: bool) -> Option<[H; 4]> {
        let w = self.c(WEYL_STREAM);
        let weyl = self.mul(t, w);
        let s0 = self.load(vars[0]);
        let y0 = self.add(s0, weyl);
        let y = [
            y0,
            self.load(vars[1]),
            self.load(vars[2]),
            self.load(vars[3]),
        ];
        let p = self.quarter_round(y);
        let p = self.quarter_round(p);
        for q in 0..4 {
            self.store(vars[q], p[q]);
        }
        output.then(|| {
            [
                self.add(p[0], y[0]),
                self.add(p[1], y[1]),
                self.add(p[2], y[2]),
                self.add(p[3], y[3]),
            ]
        })
    }

    /// binary16 bits of `m * 2^-11` for the top 11 bits `m` of the 16-bit
    /// value `x` (in the low half of a u32): SPEC.md's `f16_bits`.
    fn f16_bits(&mut self, x: H) -> H {
        let m = self.shr_c(x, 5);
        // e = 31 - clz(m), the top bit's position (0..=10 when m != 0).
        let lz = self.clz(m);
        let c31 = self.c(31);
        let e = self.sub(c31, lz);
        let c4 = self.c(4);
        let ex = self.add(e, c4);
        let ex = self.shl_c(ex, 10);
        // 10 - e, masked so that m == 0 (e = -1 wrapped) stays defined.
        let c10 = self.c(10);
        let sh = self.sub(c10, e);
        let sh = self.and_c(sh, 31);
        let frac = self.shl(m, sh);
        let frac = self.and_c(frac, 0x3FF);
        let bits = self.or(ex, frac);
        let zero = self.c(0);
        let is0 = self.eq(m, zero);
        self.select(is0, zero, bits)
    }

    /// f32 bits of `(w >> 8) * 2^-24`: an exact conversion and an exact
    /// multiply by a power of two.
    fn f32_bits(&mut self, w: H) -> H {
        let m = self.shr_c(w, 8);
        let f = self.expr(Expression::As {
            expr: m,
            kind: ScalarKind::Float,
            convert: Some(4),
        });
        let scale = self.expr(Expression::Literal(Literal::F32(1.0 / 16_777_216.0)));
        let v = self.bin(BinaryOperator::Multiply, f, scale);
        self.expr(Expression::As {
            expr: v,
            kind: ScalarKind::Uint,
            convert: None,
        })
    }

    /// binary64 bits `(lo, hi)` of `(x >> 11) * 2^-53` for the 64-bit draw
    /// `x = (lo, hi)`, with 32-bit integer operations only.
    fn f64_bits(&mut self, lo: H, hi: H) -> (H, H) {
        // m = x >> 11: 53 bits, (m_lo, m_hi) with m_hi < 2^21.
        let m_hi = self.shr_c(hi, 11);
        let a = self.shr_c(lo, 11);
        let b = self.shl_c(hi, 21);
        let m_lo = self.or(a, b);
        // e = index of m's top bit (0..=52); len = e + 1.
        let zero = self.c(0);
        let hi_nz = self.bin(BinaryOperator::NotEqual, m_hi, zero);
        let lz_hi = self.clz(m_hi);
        let lz_lo = self.clz(m_lo);
        let c63 = self.c(63);
        let c31 = self.c(31);
        let e_hi = self.sub(c63, lz_hi);
        let e_lo = self.sub(c31, lz_lo);
        let e = self.select(hi_nz, e_hi, e_lo);
        // Shift m left by sh = 52 - e (0..=52) so its top bit is bit 52.
        let c52 = self.c(52);
        let sh = self.sub(c52, e);
        let sh = self.and_c(sh, 63);
        let c32 = self.c(32);
        let big = self.ge(sh, c32);
        let sh_lo = self.and_c(sh, 31);
        // sh >= 32: hi = m_lo << (sh - 32), lo = 0.
        let big_hi = self.shl(m_lo, sh_lo);
        // sh < 32: hi = (m_hi << sh) | (m_lo >> (32 - sh)) (the second term
        // only when sh > 0), lo = m_lo << sh.
        let h1 = self.shl(m_hi, sh_lo);
        let back = self.sub(c32, sh_lo);
        let back = self.and_c(back, 31);
        let h2 = self.shr(m_lo, back);
        let sh0 = self.eq(sh_lo, zero);
        let h2 = self.select(sh0, zero, h2);
        let small_hi = self.or(h1, h2);
        let small_lo = self.shl(m_lo, sh_lo);
        let n_hi = self.select(big, big_hi, small_hi);
        let n_lo = self.select(big, zero, small_lo);
        // Biased exponent e - 53 + 1023, above the 20 fraction bits of hi.
        let c970 = self.c(970);
        let ex = self.add(e, c970);
        let ex = self.shl_c(ex, 20);
        let frac_hi = self.and_c(n_hi, 0x000F_FFFF);
        let bits_hi = self.or(ex, frac_hi);
        // m == 0 gives +0.0.
        let any = self.or(m_lo, m_hi);
        let is0 = self.eq(any, zero);
        let out_hi = self.select(is0, zero, bits_hi);
        let out_lo = self.select(is0, zero, n_lo);
        (out_lo, out_hi)
    }

    /// The output words of one block of stream under `map`.
    fn map(&mut self, map: FillMap, o: [H; 4]) -> [H; 4] {
        match map {
            FillMap::Raw => o,
            FillMap::F32 => o.map(|w| self.f32_bits(w)),
            FillMap::F16 => o.map(|w| {
                let lo = self.and_c(w, 0xFFFF);
                let hi = self.shr_c(w, 16);
                let a = self.f16_bits(lo);
                let b = self.f16_bits(hi);
                let b = self.shl_c(b, 16);
                self.or(a, b)
            }),
            FillMap::F64 => {
                let (l0, h0) = self.f64_bits(o[0], o[1]);
                let (l1, h1) = self.f64_bits(o[2], o[3]);
                [l0, h0, l1, h1]
            }
        }
    }
}

/// The fill module for `map` (unvalidated; see [`fill_compiled`]).
pub fn fill_module(map: FillMap) -> Module {
    let mut m = Module::default();
    let u32_ty = m.types.insert(
        Type {
            name: None,
            inner: TypeInner::Scalar(NScalar::U32),
        },
        Span::UNDEFINED,
    );
    let vec3 = m.types.insert(
        Type {
            name: None,
            inner: TypeInner::Vector {
                size: VectorSize::Tri,
                scalar: NScalar::U32,
            },
        },
        Span::UNDEFINED,
    );
    let vec4 = m.types.insert(
        Type {
            name: None,
            inner: TypeInner::Vector {
                size: VectorSize::Quad,
                scalar: NScalar::U32,
            },
        },
        Span::UNDEFINED,
    );
    let members = PARAM_NAMES
        .iter()
        .enumerate()
        .map(|(i, n)| StructMember {
            name: Some((*n).into()),
            ty: u32_ty,
            binding: None,
            offset: 4 * i as u32,
        })
        .collect();
    let params_ty = m.types.insert(
        Type {
            name: Some("TandemParams".into()),
            inner: TypeInner::Struct {
                members,
                span: FillParams::SIZE as u32,
            },
        },
        Span::UNDEFINED,
    );
    let params = m.global_variables.append(
        GlobalVariable {
            name: Some("params".into()),
            space: AddressSpace::Uniform,
            binding: Some(ResourceBinding {
                group: 0,
                binding: crate::UNIFORM_BINDING,
            }),
            ty: params_ty,
            init: None,
            memory_decorations: Default::default(),
        },
        Span::UNDEFINED,
    );
    let arr = m.types.insert(
        Type {
            name: None,
            inner: TypeInner::Array {
                base: vec4,
                size: ArraySize::Dynamic,
                stride: 16,
            },
        },
        Span::UNDEFINED,
    );
    let out = m.global_variables.append(
        GlobalVariable {
            name: Some("out".into()),
            space: AddressSpace::Storage {
                access: StorageAccess::LOAD | StorageAccess::STORE,
            },
            binding: Some(ResourceBinding {
                group: 0,
                binding: FILL_OUTPUT_BINDING,
            }),
            ty: arr,
            init: None,
            memory_decorations: Default::default(),
        },
        Span::UNDEFINED,
    );

    let f = Function {
        name: Some(ENTRY_POINT.into()),
        arguments: crate::lower::entry_arguments(u32_ty, vec3),
        ..Default::default()
    };
    let mut b = Fb {
        f,
        cur: Vec::new(),
        u32_ty,
    };

    let pv = b.expr(Expression::GlobalVariable(params));
    let p: Vec<H> = (0..PARAM_NAMES.len() as u32)
        .map(|index| {
            let ptr = b.expr(Expression::AccessIndex { base: pv, index });
            b.load(ptr)
        })
        .collect();
    let (key, k, chunk_lo, chunk_hi, n_chunks, skip, n_blocks) =
        ([p[0], p[1], p[2], p[3]], p[4], p[5], p[6], p[7], p[8], p[9]);

    // g = (workgroup_id.x + workgroup_id.y * num_workgroups.x) * size + local.
    let li = b.expr(Expression::FunctionArgument(0));
    let wid = b.expr(Expression::FunctionArgument(1));
    let nwg = b.expr(Expression::FunctionArgument(2));
    let wx = b.expr(Expression::AccessIndex {
        base: wid,
        index: 0,
    });
    let wy = b.expr(Expression::AccessIndex {
        base: wid,
        index: 1,
    });
    let nx = b.expr(Expression::AccessIndex {
        base: nwg,
        index: 0,
    });
    let row = b.mul(wy, nx);
    let wg = b.add(wx, row);
    let size = b.c(FILL_WORKGROUP_SIZE);
    let base = b.mul(wg, size);
    let g = b.add(base, li);
    let past = b.ge(g, n_chunks);
    b.cur.push(Statement::If {
        condition: past,
        accept: Block::from_vec(vec![Statement::Return { value: None }]),
        reject: Block::new(),
    });

    // The chunk index first_chunk + g in 64 bits, and the seed.
    let c_lo = b.add(chunk_lo, g);
    let carry = b.lt(c_lo, g);
    let one = b.c(1);
    let zero = b.c(0);
    let carry = b.select(carry, one, zero);
    let c_hi = b.add(chunk_hi, carry);
    let vars = [b.var("s0"), b.var("s1"), b.var("s2"), b.var("s3")];
    let s1 = b.xor(key[1], k);
    let s2 = b.xor(key[2], c_lo);
    let s3 = b.xor(key[3], c_hi);
    b.store(vars[0], key[0]);
    b.store(vars[1], s1);
    b.store(vars[2], s2);
    b.store(vars[3], s3);

    // Warm-up: steps 1..=8, unrolled, outputs discarded.
    for t in 1..=WARM_UP_STEPS {
        let t = b.c(t);
        b.step(vars, t, false);
    }

    // Block j of the chunk is relative block (g / 8) * 8K + 8j + g % 8.
    let g8 = b.shr_c(g, 3);
    let k8 = b.shl_c(k, 3);
    let gbase = b.mul(g8, k8);
    let lane = b.and_c(g, 7);
    let rel0 = b.add(gbase, lane);
    let j = b.var("j");
    b.store(j, zero);
    let body = b.nested(|b| {
        let jv = b.load(j);
        let done = b.ge(jv, k);
        b.cur.push(Statement::If {
            condition: done,
            accept: Block::from_vec(vec![Statement::Break]),
            reject: Block::new(),
        });
        let nine = b.c(WARM_UP_STEPS + 1);
        let t = b.add(jv, nine);
        let o = b.step(vars, t, true).expect("an output step");
        let o = b.map(map, o);
        let j8 = b.shl_c(jv, 3);
        let rel = b.add(rel0, j8);
        let idx = b.sub(rel, skip);
        // skip <= rel and rel - skip < n_blocks.
        let after = b.ge(rel, skip);
        let before = b.lt(idx, n_blocks);
        let inside = b.bin(BinaryOperator::LogicalAnd, after, before);
        let store = b.nested(|b| {
            let ov = b.expr(Expression::GlobalVariable(out));
            let ptr = b.expr(Expression::Access {
                base: ov,
                index: idx,
            });
            let v = b.expr(Expression::Compose {
                ty: vec4,
                components: o.to_vec(),
            });
            b.store(ptr, v);
        });
        b.cur.push(Statement::If {
            condition: inside,
            accept: store,
            reject: Block::new(),
        });
        let one = b.c(1);
        let next = b.add(jv, one);
        b.store(j, next);
    });
    b.cur.push(Statement::Loop {
        body,
        continuing: Block::new(),
        break_if: None,
    });

    let mut f = b.f;
    f.body = Block::from_vec(b.cur);
    m.entry_points.push(EntryPoint {
        name: ENTRY_POINT.into(),
        stage: ShaderStage::Compute,
        early_depth_test: None,
        workgroup_size: [FILL_WORKGROUP_SIZE, 1, 1],
        workgroup_size_overrides: None,
        function: f,
        mesh_info: None,
        task_payload: None,
        incoming_ray_payload: None,
    });
    m
}

/// The fill module for `map`, validated by naga.
pub fn fill_compiled(map: FillMap) -> Result<(Module, ModuleInfo), LowerError> {
    let module = fill_module(map);
    let info = Validator::new(ValidationFlags::all(), Capabilities::empty())
        .validate(&module)
        .map_err(|e| {
            LowerError::Internal(format!(
                "naga rejected the Tandem {} fill module: {}",
                map.name(),
                e.emit_to_string("")
            ))
        })?;
    Ok((module, info))
}

/// The fill module for `map` as SPIR-V words, post-processed for exact mode
/// when `precision` is exact (`NoContraction` on the one float multiply,
/// which is exact anyway, and the float controls).
pub fn fill_spirv(map: FillMap, precision: Precision) -> Result<Vec<u32>, LowerError> {
    let (module, info) = fill_compiled(map)?;
    let options = GpuOptions {
        precision,
        workgroup_size: FILL_WORKGROUP_SIZE,
        branch_fallback: true,
    };
    Ok(crate::spirv(&module, &info, &options))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_map_validates_and_writes() {
        for map in [FillMap::Raw, FillMap::F16, FillMap::F32, FillMap::F64] {
            let (module, info) = fill_compiled(map).unwrap();
            assert!(crate::wgsl(&module, &info).contains("vec4<u32>"));
            assert!(!fill_spirv(map, Precision::Exact).unwrap().is_empty());
        }
    }

    #[test]
    fn params_words() {
        let p = FillParams {
            key: [1, 2, 3, 4],
            k: 32,
            first_chunk: 0x1_0000_0008,
            n_chunks: 16,
            skip: 3,
            n_blocks: 500,
        };
        assert_eq!(p.words(), [1, 2, 3, 4, 32, 8, 1, 16, 3, 500, 0, 0]);
        assert_eq!(p.bytes().len(), FillParams::SIZE);
        assert_eq!(p.workgroups(65535), [1, 1, 1]);
    }
}
