//! Exact mode's SPIR-V post-processing: naga 30 cannot ask for
//! `NoContraction`, `DenormPreserve` or `SignedZeroInfNanPreserve`, so they
//! are added to its words (DESIGN.md, "Backends and the reproducibility
//! contract": shown there to stop the H200 fusing `a*b+c` and flushing
//! subnormals).

/// Opcodes, enumerants and the section of the module's logical layout each
/// instruction belongs to (SPIR-V 1.6 spec, 2.4 and 3.x; the numbers are the
/// `spirv` crate's).
mod op {
    pub const EXTENSION: u32 = 10;
    pub const EXT_INST_IMPORT: u32 = 11;
    pub const MEMORY_MODEL: u32 = 14;
    pub const ENTRY_POINT: u32 = 15;
    pub const EXECUTION_MODE: u32 = 16;
    pub const CAPABILITY: u32 = 17;
    pub const EXECUTION_MODE_ID: u32 = 331;
    pub const DECORATE: u32 = 71;
    pub const F_NEGATE: u32 = 127;
    pub const F_ADD: u32 = 129;
    pub const F_SUB: u32 = 131;
    pub const F_MUL: u32 = 133;
    pub const F_DIV: u32 = 136;
    /// Capability and execution mode `DenormPreserve` (capability 4464,
    /// mode 4459) and `SignedZeroInfNanPreserve` (4466, 4461).
    pub const CAP_DENORM_PRESERVE: u32 = 4464;
    pub const CAP_SIGNED_ZERO_INF_NAN_PRESERVE: u32 = 4466;
    pub const MODE_DENORM_PRESERVE: u32 = 4459;
    pub const MODE_SIGNED_ZERO_INF_NAN_PRESERVE: u32 = 4461;
    pub const DECORATION_NO_CONTRACTION: u32 = 42;
}

/// The sections of a module in layout order; everything after the
/// annotations (types, constants, globals, functions) is one section.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Section {
    Capability,
    Extension,
    ExtInstImport,
    MemoryModel,
    EntryPoint,
    ExecutionMode,
    Debug,
    Annotation,
    Rest,
}

fn section(opcode: u32) -> Section {
    match opcode {
        op::CAPABILITY => Section::Capability,
        op::EXTENSION => Section::Extension,
        op::EXT_INST_IMPORT => Section::ExtInstImport,
        op::MEMORY_MODEL => Section::MemoryModel,
        op::ENTRY_POINT => Section::EntryPoint,
        op::EXECUTION_MODE | op::EXECUTION_MODE_ID => Section::ExecutionMode,
        // OpSourceContinued, OpSource, OpSourceExtension, OpName,
        // OpMemberName, OpString, OpModuleProcessed.
        2..=7 | 330 => Section::Debug,
        // OpDecorate, OpMemberDecorate, the decoration groups, OpDecorateId,
        // OpDecorateString, OpMemberDecorateString.
        71..=75 | 332 | 5632 | 5633 => Section::Annotation,
        _ => Section::Rest,
    }
}

/// A literal string as SPIR-V words: UTF-8, NUL-terminated, zero-padded.
fn string_words(s: &str) -> Vec<u32> {
    let mut bytes = s.as_bytes().to_vec();
    bytes.push(0);
    while !bytes.len().is_multiple_of(4) {
        bytes.push(0);
    }
    bytes
        .chunks(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

fn instruction(opcode: u32, operands: &[u32]) -> Vec<u32> {
    let mut v = vec![((operands.len() as u32 + 1) << 16) | opcode];
    v.extend_from_slice(operands);
    v
}

/// Exact mode's edit of a SPIR-V module (naga's output, or any valid one):
/// - `OpCapability DenormPreserve` and `SignedZeroInfNanPreserve`, and
///   `OpExtension "SPV_KHR_float_controls"` (core only from SPIR-V 1.4);
/// - `OpExecutionMode <entry> DenormPreserve 32` and
///   `SignedZeroInfNanPreserve 32` for every entry point, so subnormals are
///   kept and `x * 0.0` is not folded to 0 for infinite or NaN `x`;
/// - `OpDecorate <result> NoContraction` on every `OpFAdd`, `OpFSub`,
///   `OpFMul`, `OpFDiv` and `OpFNegate`, so no driver fuses `a*b+c`.
///
/// Instructions keep the logical layout order; nothing is added twice, and
/// no new ids are needed, so the header's bound stays. The device must
/// support float controls (Vulkan 1.2 or `VK_KHR_shader_float_controls`,
/// with `shaderDenormPreserveFloat32` and
/// `shaderSignedZeroInfNanPreserveFloat32`).
///
/// # Panics
/// If `words` is not a well-formed SPIR-V module (bad magic number or a
/// truncated instruction).
pub fn spirv_exact(words: &[u32]) -> Vec<u32> {
    assert!(
        words.len() >= 5 && words[0] == 0x0723_0203,
        "not a SPIR-V module"
    );
    let mut buckets: Vec<Vec<u32>> = vec![Vec::new(); Section::Rest as usize + 1];
    let mut capabilities = Vec::new();
    let mut extensions = Vec::new();
    let mut entries = Vec::new();
    let mut modes = Vec::new();
    let mut decorated = std::collections::HashSet::new();
    let mut float_results = Vec::new();
    let mut i = 5;
    while i < words.len() {
        let count = (words[i] >> 16) as usize;
        let opcode = words[i] & 0xffff;
        assert!(
            count > 0 && i + count <= words.len(),
            "truncated SPIR-V instruction at word {i}"
        );
        let inst = &words[i..i + count];
        match opcode {
            op::CAPABILITY => capabilities.push(inst[1]),
            op::EXTENSION => extensions.push(inst[1..].to_vec()),
            op::ENTRY_POINT => entries.push(inst[2]),
            op::EXECUTION_MODE => modes.push((inst[1], inst[2])),
            op::DECORATE if count >= 3 => {
                decorated.insert((inst[1], inst[2]));
            }
            op::F_ADD | op::F_SUB | op::F_MUL | op::F_DIV | op::F_NEGATE => {
                float_results.push(inst[2])
            }
            _ => {}
        }
        buckets[section(opcode) as usize].extend_from_slice(inst);
        i += count;
    }

    for cap in [
        op::CAP_DENORM_PRESERVE,
        op::CAP_SIGNED_ZERO_INF_NAN_PRESERVE,
    ] {
        if !capabilities.contains(&cap) {
            buckets[Section::Capability as usize].extend(instruction(op::CAPABILITY, &[cap]));
        }
    }
    let ext = string_words("SPV_KHR_float_controls");
    if !extensions.contains(&ext) {
        buckets[Section::Extension as usize].extend(instruction(op::EXTENSION, &ext));
    }
    for &entry in &entries {
        for mode in [
            op::MODE_DENORM_PRESERVE,
            op::MODE_SIGNED_ZERO_INF_NAN_PRESERVE,
        ] {
            if !modes.contains(&(entry, mode)) {
                buckets[Section::ExecutionMode as usize]
                    .extend(instruction(op::EXECUTION_MODE, &[entry, mode, 32]));
            }
        }
    }
    for id in float_results {
        if decorated.insert((id, op::DECORATION_NO_CONTRACTION)) {
            buckets[Section::Annotation as usize].extend(instruction(
                op::DECORATE,
                &[id, op::DECORATION_NO_CONTRACTION],
            ));
        }
    }

    let mut out = words[..5].to_vec();
    for b in buckets {
        out.extend(b);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_are_nul_terminated_and_padded() {
        assert_eq!(string_words("abc"), vec![u32::from_le_bytes(*b"abc\0")]);
        assert_eq!(string_words("abcd"), vec![u32::from_le_bytes(*b"abcd"), 0]);
    }
}
