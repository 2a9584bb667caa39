#!/usr/bin/env python3
"""The instruction mix of a Tandem fill kernel's hot path, from its SPIR-V.

    bench/spirv-mix.py FILE.spv ...        (needs spirv-dis on PATH)

Per file: the instructions of one trip of the kernel's outermost loop (the
fill's K-step loop: one step, one 16-byte block of stream), with every
`OpFunctionCall` counted as its callee's body, grouped by kind and width.
Cold code is left out: the `reject` side of an `if` whose `accept` side is
empty, which is how the fills spell `unless(ok, fast, slow)` (exact
division's and square root's fallbacks). Loops inside the step are
reported by name, not multiplied.

A static count, not a profile: it tells which kinds of work a step does
and how much, so that two versions of a fill can be compared without a GPU.
"""

import collections
import re
import subprocess
import sys

LINE = re.compile(r"^\s*(?:(%\S+)\s*=\s*)?(Op\w+)(.*)$")


def parse(path):
    text = subprocess.run(
        ["spirv-dis", "--raw-id", path], check=True, capture_output=True, text=True
    ).stdout
    insts = []
    for line in text.splitlines():
        m = LINE.match(line)
        if m:
            insts.append((m.group(1), m.group(2), m.group(3).split()))
    return insts


class Module:
    def __init__(self, insts):
        self.types = {}  # id -> description such as "f64", "u32", "v2f64"
        self.type_of = {}  # result id -> type id
        self.ext_names = {}
        self.functions = {}  # id -> list of blocks (label, [insts])
        self.entry = None
        cur = None
        for res, op, args in insts:
            if op == "OpTypeFloat":
                self.types[res] = f"f{args[0]}"
            elif op == "OpTypeInt":
                self.types[res] = f"{'i' if args[1] == '1' else 'u'}{args[0]}"
            elif op == "OpTypeBool":
                self.types[res] = "bool"
            elif op == "OpTypeVector":
                self.types[res] = f"v{args[1]}{self.types.get(args[0], '?')}"
            elif op == "OpEntryPoint":
                self.entry = args[1]
            elif op == "OpFunction":
                cur = []
                self.functions[res] = cur
            elif op == "OpFunctionEnd":
                cur = None
            elif op == "OpLabel" and cur is not None:
                cur.append((res, []))
            elif cur is not None and cur:
                cur[-1][1].append((res, op, args))
            if res is not None and args and not op.startswith("OpType"):
                self.type_of[res] = args[0]

    def width(self, type_id):
        t = self.types.get(type_id, "?")
        return t.lstrip("v234")

    def operand_width(self, args):
        return self.width(self.type_of.get(args[1], "?")) if len(args) > 1 else "?"


FLOAT = {"OpFAdd": "add", "OpFSub": "sub", "OpFMul": "mul", "OpFDiv": "div", "OpFNegate": "neg"}
CONVERT = {"OpConvertUToF", "OpConvertSToF", "OpConvertFToU", "OpConvertFToS", "OpFConvert",
           "OpUConvert", "OpSConvert"}
INT = {"OpIAdd", "OpISub", "OpIMul", "OpBitwiseAnd", "OpBitwiseOr", "OpBitwiseXor", "OpNot",
       "OpShiftLeftLogical", "OpShiftRightLogical", "OpShiftRightArithmetic", "OpSNegate",
       "OpUMulExtended", "OpIAddCarry"}
IGNORED = {"OpSelectionMerge", "OpLoopMerge", "OpBranch", "OpReturn", "OpReturnValue",
           "OpVariable", "OpUnreachable"}


def kind(m, res, op, args):
    """A category name for one instruction, or None."""
    if op in IGNORED:
        return None
    if op in FLOAT:
        return f"float {m.width(args[0])} {FLOAT[op]}"
    if op.startswith("OpFOrd") or op.startswith("OpFUnord"):
        return f"float {m.operand_width(args)} compare"
    if op in CONVERT:
        return f"convert {m.operand_width(args)} -> {m.types.get(args[0], '?')}"
    if op in INT:
        return f"int {m.width(args[0])} {'mul' if 'Mul' in op else 'op'}"
    if op.startswith("OpI") or op.startswith("OpU") or op.startswith("OpS"):
        if "Less" in op or "Greater" in op or "Equal" in op:
            return f"int {m.operand_width(args)} compare"
    if op == "OpSelect":
        return f"select {m.width(args[0])}"
    if op == "OpBitcast":
        return "bitcast"
    if op == "OpExtInst":
        return f"ext {args[2]}"
    if op in {"OpLogicalAnd", "OpLogicalOr", "OpLogicalNot", "OpLogicalEqual",
              "OpLogicalNotEqual"}:
        return "bool op"
    if op in {"OpLoad", "OpStore", "OpAccessChain", "OpCompositeConstruct",
              "OpCompositeExtract"}:
        return f"{op[2:]}"
    if op == "OpBranchConditional":
        return "branch"
    return op[2:]


def structure(blocks):
    """Per block index: the set of loop headers it lies in, and whether it
    is cold (the reject side of an `if` with an empty accept side)."""
    index = {label: i for i, (label, _) in enumerate(blocks)}
    loops = [set() for _ in blocks]
    cold = [False] * len(blocks)
    for i, (label, insts) in enumerate(blocks):
        ops = [op for _, op, _ in insts]
        if "OpLoopMerge" in ops:
            merge = insts[ops.index("OpLoopMerge")][2][0]
            for j in range(i, index[merge]):
                loops[j].add(label)
        if "OpSelectionMerge" in ops and ops[-1] == "OpBranchConditional":
            merge = insts[ops.index("OpSelectionMerge")][2][0]
            _, yes, no = insts[-1][2][:3]
            accept = blocks[index[yes]][1] if yes in index else []
            empty = yes == merge or (
                [op for _, op, _ in accept] == ["OpBranch"] and accept[0][2][0] == merge
            )
            if empty and no != merge:
                for j in range(index[no], index[merge]):
                    cold[j] = True
    return loops, cold


def hot_counts(m, fid, memo):
    """Hot-path counts of function `fid` (callees inlined), and the counts
    of its first top-level loop's body."""
    if fid in memo:
        return memo[fid]
    blocks = m.functions[fid]
    loops, cold = structure(blocks)
    whole, loop_body = collections.Counter(), collections.Counter()
    outer = next((blocks[i][0] for i in range(len(blocks)) if loops[i]), None)
    for i, (label, insts) in enumerate(blocks):
        if cold[i]:
            continue
        c = collections.Counter()
        for res, op, args in insts:
            if op == "OpFunctionCall":
                callee, _ = hot_counts(m, args[1], memo)
                c.update(callee)
                c["call"] += 1
                continue
            if op == "OpLoopMerge" and label != outer:
                c["inner loop"] += 1
            k = kind(m, res, op, args)
            if k:
                c[k] += 1
        whole.update(c)
        if outer is not None and outer in loops[i]:
            loop_body.update(c)
    memo[fid] = (whole, loop_body)
    return memo[fid]


def report(path):
    m = Module(parse(path))
    whole, step = hot_counts(m, m.entry, {})
    # Bit casts cost nothing on a GPU (a register read as another type).
    total = sum(v for k, v in step.items() if k not in ("call", "bitcast"))
    print(f"## {path}: {total} instructions a step (hot path, calls inlined, bit casts left out)")
    groups = collections.Counter()
    for k, v in step.items():
        if k.startswith("float f64") or k.startswith("convert") and "64" in k:
            groups["f64 arithmetic, compares and conversions"] += v
        elif k.startswith("float f32"):
            groups["f32 arithmetic and compares"] += v
        elif k.startswith("int"):
            groups["integer arithmetic and compares"] += v
    for k, v in sorted(groups.items()):
        print(f"   {k}: {v}")
    for k, v in sorted(step.items()):
        print(f"   {v:5}  {k}")


if __name__ == "__main__":
    for p in sys.argv[1:]:
        report(p)
