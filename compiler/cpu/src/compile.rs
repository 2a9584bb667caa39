//! Compiling a kernel to a native block function, and the per-process
//! cache of compiled kernels (one entry per kernel text and configuration).

use crate::codegen::Gen;
use crate::layout::Layout;
use crate::parallel;
use cranelift_codegen::ir::{AbiParam, InstBuilder, UserFuncName, types};
use cranelift_codegen::settings::{self, Configurable};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{Linkage, Module, default_libcall_names};
use phobos_core::ir::Kernel;
use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

/// The native code of one block: `(frame, scratch, bx, by, bz)`.
pub type BlockFn = unsafe extern "C" fn(*const u64, *mut u8, i64, i64, i64);

/// A compiled kernel. Its code lives as long as the process.
pub struct Compiled {
    pub(crate) func: BlockFn,
    pub layout: Layout,
    /// Whether blocks write disjoint elements and read nothing they write,
    /// so that they may run in any order on any thread.
    pub parallel: bool,
    pub compile_ms: f64,
}

#[derive(Debug)]
pub struct CompileError(pub String);

impl fmt::Display for CompileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the CPU backend could not compile the kernel: {}",
            self.0
        )
    }
}

impl std::error::Error for CompileError {}

type Cache = Mutex<HashMap<String, Arc<Compiled>>>;

fn cache() -> &'static Cache {
    static CACHE: OnceLock<Cache> = OnceLock::new();
    CACHE.get_or_init(Default::default)
}

/// The compiled form of `kernel`, from the cache when it was compiled
/// before in this process. The flag says whether the cache served it.
pub fn compile(kernel: &Kernel) -> Result<(Arc<Compiled>, bool), CompileError> {
    let key = kernel.print();
    if let Some(c) = cache().lock().expect("cache lock").get(&key) {
        return Ok((c.clone(), true));
    }
    let compiled = Arc::new(build(kernel)?);
    cache()
        .lock()
        .expect("cache lock")
        .insert(key, compiled.clone());
    Ok((compiled, false))
}

fn build(kernel: &Kernel) -> Result<Compiled, CompileError> {
    let start = Instant::now();
    let err = |e: &dyn fmt::Display| CompileError(e.to_string());
    let mut flags = settings::builder();
    flags.set("opt_level", "speed").map_err(|e| err(&e))?;
    flags.set("is_pic", "false").map_err(|e| err(&e))?;
    let isa = cranelift_native::builder()
        .map_err(|e| err(&e))?
        .finish(settings::Flags::new(flags))
        .map_err(|e| err(&e))?;
    let mut module = JITModule::new(JITBuilder::with_isa(isa, default_libcall_names()));
    let mut ctx = module.make_context();
    let ptr = module.target_config().pointer_type();
    for t in [ptr, ptr, types::I64, types::I64, types::I64] {
        ctx.func.signature.params.push(AbiParam::new(t));
    }
    let id = module
        .declare_function("block", Linkage::Local, &ctx.func.signature)
        .map_err(|e| err(&e))?;
    ctx.func.name = UserFuncName::user(0, id.as_u32());
    let layout = Layout::of(kernel);
    let mut fctx = FunctionBuilderContext::new();
    {
        let mut b = FunctionBuilder::new(&mut ctx.func, &mut fctx);
        let entry = b.create_block();
        b.append_block_params_for_function_params(entry);
        b.switch_to_block(entry);
        let p = b.block_params(entry).to_vec();
        let mut g = Gen::new(kernel, &layout, &mut b, [p[0], p[1], p[2], p[3], p[4]]);
        g.body();
        b.ins().return_(&[]);
        b.seal_all_blocks();
        b.finalize(module.target_config());
    }
    // PHOBOS_DUMP_CLIF=1 prints the Cranelift IR of every kernel compiled.
    if std::env::var_os("PHOBOS_DUMP_CLIF").is_some() {
        eprintln!("; kernel {}\n{}", kernel.name, ctx.func.display());
    }
    module
        .define_function(id, &mut ctx)
        .map_err(|e| err(&format!("{e:?}")))?;
    module.finalize_definitions().map_err(|e| err(&e))?;
    let code = module.get_finalized_function(id);
    // The module owns the code memory; it is kept for the life of the
    // process, as the cache that refers to it is.
    std::mem::forget(module);
    // SAFETY: the function was declared with exactly this signature.
    let func = unsafe { std::mem::transmute::<*const u8, BlockFn>(code) };
    Ok(Compiled {
        func,
        layout,
        parallel: parallel::blocks_independent(kernel),
        compile_ms: start.elapsed().as_secs_f64() * 1e3,
    })
}
