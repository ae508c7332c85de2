"""PTX data movement, memory and thread instructions (``mov``, ``cvta``, ``ld``/``st``, cache hints,
atomics, fences, barriers, warp operations, ``nanosleep``, ``trap``, ``exit``, ``bra``), each
registered into ``ptx_operands.REGISTRY``.
"""

from __future__ import annotations

from .ptx_operands import (
    PRED,
    Emitter,
    Mods,
    P,
    U,
    cbool,
    instruction,
    memory_order,
    operands,
)
from .ptx_syntax import (
    Imm,
    Instr,
    Mem,
    Pair,
    PtxRefusal,
    Reg,
    Sink,
    Vec,
    unsupported,
)

__all__: list[str] = []


# ---- data movement -----------------------------------------------------------------------------
@instruction("mov")
def _mov(ins: Instr, em: Emitter) -> list[str]:
    m = Mods(ins)
    (t,) = m.types(1)
    m.done()
    d, a = operands(ins, 2)
    if isinstance(a, Vec) or isinstance(d, Vec):
        vec = a if isinstance(a, Vec) else d
        width = t.bits // len(vec.items)
        if (
            t.kind not in ("b", "u", "s", "f16x2", "bf16x2")
            or width not in (8, 16, 32)
            or width * len(vec.items) != t.bits
        ):
            raise unsupported(ins.full)
        part, whole = U[width], U[t.bits]
        if isinstance(a, Vec):  # pack: the first element is the lowest
            terms = [
                f"(static_cast<{whole.c}>({em.read(x, part)}) << {width * i})" for i, x in enumerate(a.items)
            ]
            return [em.write(d, whole, " | ".join(terms))]
        name, decl = em.temp(whole.c, em.read(a, whole))
        out = [decl]
        for i, x in enumerate(d.items):
            if not isinstance(x, Sink):
                out.append(em.write(x, part, f"static_cast<{part.c}>({name} >> {width * i})"))
        return out
    return [em.write(d, t, em.read(a, t))]


@instruction("cvta")
def _cvta(ins: Instr, em: Emitter) -> list[str]:
    m = Mods(ins)
    m.flag("to")
    m.take("global", "shared", "shared::cta", "local", "const", "param")
    (t,) = m.types(1, ("u64", "u32"))
    m.done()
    if t.bits != 64:
        raise unsupported(ins.full, "addresses are 64-bit host pointers here (use the .u64 form)")
    d, a = operands(ins, 2)
    return [em.write(d, t, em.read(a, t))]


def _state_space(m: Mods) -> None:
    m.take("global", "shared", "shared::cta", "local", "const")
    for hint in ("L1::", "L2::"):
        m.drop(hint)
    m.take("ca", "cg", "cs", "lu", "cv", "wb", "wt")
    m.flag("nc")


def _vector(m: Mods) -> int:
    name = m.take("v2", "v4", "v8")
    return 1 if name is None else int(name[1:])


@instruction("ld", "ldu")
def _ld(ins: Instr, em: Emitter) -> list[str]:
    m = Mods(ins)
    order = memory_order(m, ("volatile", "relaxed", "acquire"))
    _state_space(m)
    count = _vector(m)
    (t,) = m.types(1)
    m.done()
    if t.kind == "pred":
        raise unsupported(ins.full)
    ops = operands(ins, 2, 3)  # a third operand is the .L2::cache_hint policy
    d, mem = ops[0], ops[1]
    items = d.items if isinstance(d, Vec) else (d,)
    if len(items) != count:
        raise PtxRefusal(f"inline PTX instruction '{ins.full}' has {len(items)} destinations")
    addr_name, decl = em.temp(f"{P}u64", em.address(mem))
    out = [decl]
    size = t.bits // 8
    for i, x in enumerate(items):
        loaded = f"{P}ld<{U[t.bits].c}>({addr_name} + {i * size}u, {order})"
        value = loaded if t.c == U[t.bits].c else f"{P}get<{t.c}>({loaded})"
        out.append(em.write(x, t, value))
    return out


@instruction("st")
def _st(ins: Instr, em: Emitter) -> list[str]:
    m = Mods(ins)
    order = memory_order(m, ("volatile", "relaxed", "release"))
    _state_space(m)
    count = _vector(m)
    (t,) = m.types(1)
    m.done()
    ops = operands(ins, 2, 3)
    mem, a = ops[0], ops[1]
    items = a.items if isinstance(a, Vec) else (a,)
    if len(items) != count or t.kind == "pred":
        raise unsupported(ins.full)
    addr_name, decl = em.temp(f"{P}u64", em.address(mem))
    out = [decl]
    size = t.bits // 8
    bits = U[t.bits].c
    for i, x in enumerate(items):
        value = em.read(x, t)
        if t.c != bits:
            value = f"{P}put<{bits}>({value})"
        out.append(f"{P}st<{bits}>({addr_name} + {i * size}u, {value}, {order});")
    return out


@instruction("prefetch", "prefetchu", "applypriority", "discard")
def _hint(ins: Instr, em: Emitter) -> list[str]:
    # Cache hints: nothing to do on a CPU (discard leaves the data as it was, one of the values
    # the ISA allows).
    for op in ins.operands:
        if isinstance(op, Mem):
            em.address(op)
    return []


@instruction("createpolicy")
def _createpolicy(ins: Instr, em: Emitter) -> list[str]:
    # A cache policy is an opaque 64-bit value that only cache hints read: any value will do.
    return [em.write(ins.operands[0], U[64], "0")]


# ---- atomics -------------------------------------------------------------------------------------
ATOM_OPS = {
    "add": 0,
    "min": 1,
    "max": 2,
    "inc": 3,
    "dec": 4,
    "and": 5,
    "or": 6,
    "xor": 7,
    "exch": 8,
    "cas": 9,
}


@instruction("atom", "red")
def _atom(ins: Instr, em: Emitter) -> list[str]:
    m = Mods(ins)
    order = memory_order(m, ("relaxed", "acquire", "release", "acq_rel"))
    m.take("global", "shared", "shared::cta")
    m.drop("L2::")
    op = m.take(*ATOM_OPS)
    (t,) = m.types(1)
    m.done()
    if op is None:
        raise unsupported(ins.full)
    if op in ("and", "or", "xor", "exch", "cas"):
        ok = t.kind == "b" and t.bits in ((16, 32, 64) if op == "cas" else (32, 64))
    elif op in ("inc", "dec"):
        ok = t.name == "u32"
    elif op == "add":
        ok = t.name in ("u32", "s32", "u64", "f32", "f64")
    else:
        ok = t.name in ("u32", "s32", "u64", "s64")
    if not ok:
        raise unsupported(ins.full)
    ops = list(ins.operands)
    dest = ops.pop(0) if ins.opcode == "atom" else None
    want = 3 if op == "cas" else 2
    if ins.opcode == "red" and op == "cas" or len(ops) != want:
        raise (
            unsupported(ins.full)
            if len(ops) == want
            else PtxRefusal(f"inline PTX instruction '{ins.full}' has {len(ins.operands)} operands")
        )
    addr = em.address(ops[0])
    ct = U[t.bits] if t.kind == "b" else t
    if op == "cas":
        value = f"{P}atom_cas<{ct.c}>({addr}, {em.read(ops[1], ct)}, {em.read(ops[2], ct)}, {order})"
    else:
        value = f"{P}atom<{ct.c}>({ATOM_OPS[op]}, {addr}, {em.read(ops[1], ct)}, {order})"
    if dest is None:
        return [f"(void){value};"]
    return [em.write(dest, ct, value)]


@instruction("membar", "fence")
def _fence(ins: Instr, em: Emitter) -> list[str]:
    m = Mods(ins)
    if ins.opcode == "membar":
        m.take("cta", "gl", "sys")
    elif "proxy" in m.rest:
        m.rest = []  # fence.proxy.*: one memory for every proxy here
    else:
        m.take("sc", "acq_rel")
        m.take("cta", "gpu", "sys", "cluster")
    m.done()
    operands(ins, 0)
    return [f"{P}fence();"]


# ---- threads: barriers, warps, sleep, trap, exit ------------------------------------------------------
@instruction("bar", "barrier")
def _bar(ins: Instr, em: Emitter) -> list[str]:
    m = Mods(ins)
    m.flag("cta")
    if m.flag("warp"):
        m.flag("sync")
        m.done()
        (mask,) = operands(ins, 1)
        em.waits = True
        return [f"{P}warp_sync({em.read(mask, U[32])}, {em.where});"]
    kind = m.take("sync", "red", "arrive")
    m.flag("aligned")
    if kind == "red":
        op = m.take("popc", "and", "or")
        (t,) = m.types(1, ("u32", "pred"))
        m.done()
        if op is None or (op == "popc") != (t.name == "u32"):
            raise unsupported(ins.full)
        ops = operands(ins, 3, 4)
        if len(ops) == 4:
            raise unsupported(ins.full, "a thread count (only the whole block's barrier 0 is run)")
        em.waits = True
        kind = ["popc", "and", "or"].index(op)
        call = f"{P}barrier_reduce({kind}, {em.read(ops[1], U[32])}, {em.read(ops[2], PRED)}, {em.where})"
        return [em.write(ops[0], t, call if t.name == "u32" else f"({call} != 0)")]
    m.done()
    if kind != "sync":
        raise unsupported(ins.full, "only barrier 0 of the whole block (bar.sync) is run")
    ops = operands(ins, 1, 2)
    em.waits = True
    if isinstance(ops[0], Imm) and ops[0].value == 0 and len(ops) == 1:
        return [f"::__sim::syncthreads({em.where});"]
    count = em.read(ops[1], U[32]) if len(ops) == 2 else "0u"
    return [f"{P}barrier({em.read(ops[0], U[32])}, {count}, {cbool(len(ops) == 2)}, {em.where});"]


_SHFL_MODES = {"up": 0, "down": 1, "bfly": 2, "idx": 3}


@instruction("shfl")
def _shfl(ins: Instr, em: Emitter) -> list[str]:
    m = Mods(ins)
    if not m.flag("sync"):
        raise unsupported(
            ins.full, "shfl without .sync is gone since sm_70: use shfl.sync with a member mask"
        )
    mode = m.take(*_SHFL_MODES)
    m.types(1, ("b32",))
    m.done()
    if mode is None:
        raise unsupported(ins.full)
    dest, a, b, c, mask = operands(ins, 5)
    em.waits = True
    d, p = (dest.value, dest.pred) if isinstance(dest, Pair) else (dest, None)
    args = ", ".join(em.read(o, U[32]) for o in (a, b, c, mask))
    if p is None:
        return [em.write(d, U[32], f"{P}shfl({_SHFL_MODES[mode]}, {args}, nullptr, {em.where})")]
    em.temps += 1
    in_range = f"sim_ptx_t{em.temps}"
    value, decl = em.temp(f"{P}u32", f"{P}shfl({_SHFL_MODES[mode]}, {args}, &{in_range}, {em.where})")
    return [f"bool {in_range} = false;", decl, em.write(d, U[32], value), em.write(p, PRED, in_range)]


@instruction("vote")
def _vote(ins: Instr, em: Emitter) -> list[str]:
    m = Mods(ins)
    if not m.flag("sync"):
        raise unsupported(
            ins.full, "vote without .sync is gone since sm_70: use vote.sync with a member mask"
        )
    mode = m.take("all", "any", "uni", "ballot")
    (t,) = m.types(1, ("pred", "b32"))
    m.done()
    if mode is None or (mode == "ballot") != (t.name == "b32"):
        raise unsupported(ins.full)
    d, a, mask = operands(ins, 3)
    em.waits = True
    call = f"{P}vote_{mode}({em.read(a, PRED)}, {em.read(mask, U[32])}, {em.where})"
    return [em.write(d, U[32] if mode == "ballot" else PRED, call)]


@instruction("match")
def _match(ins: Instr, em: Emitter) -> list[str]:
    m = Mods(ins)
    mode = m.take("any", "all")
    if not m.flag("sync") or mode is None:
        raise unsupported(ins.full)
    (t,) = m.types(1, ("b32", "b64"))
    m.done()
    dest, a, mask = operands(ins, 3)
    em.waits = True
    value = f"static_cast<{P}u64>({em.read(a, t)})"
    if mode == "any":
        if isinstance(dest, Pair):
            raise unsupported(ins.full)
        return [em.write(dest, U[32], f"{P}match_any({value}, {em.read(mask, U[32])}, {em.where})")]
    d, p = (dest.value, dest.pred) if isinstance(dest, Pair) else (dest, None)
    pname = f"sim_ptx_t{em.temps + 1}"
    em.temps += 1
    result, decl = em.temp(f"{P}u32", f"{P}match_all({value}, {em.read(mask, U[32])}, &{pname}, {em.where})")
    out = [f"bool {pname} = false;", decl, em.write(d, U[32], result)]
    if p is not None:
        out.append(em.write(p, PRED, pname))
    return out


_REDUX = {
    "add": "kReduceAdd",
    "min": "kReduceMin",
    "max": "kReduceMax",
    "and": "kReduceAnd",
    "or": "kReduceOr",
    "xor": "kReduceXor",
}


@instruction("redux")
def _redux(ins: Instr, em: Emitter) -> list[str]:
    m = Mods(ins)
    op = m.take(*_REDUX)
    if not m.flag("sync") or op is None:
        raise unsupported(ins.full)
    allowed = ("b32",) if op in ("and", "or", "xor") else ("u32", "s32")
    (t,) = m.types(1, allowed)
    m.done()
    d, a, mask = operands(ins, 3)
    em.waits = True
    args = f"::__sim::{_REDUX[op]}, {em.read(a, U[32])}, {cbool(t.name == 's32')}, {em.read(mask, U[32])}"
    return [em.write(d, U[32], f"{P}redux({args}, {em.where})")]


@instruction("activemask")
def _activemask(ins: Instr, em: Emitter) -> list[str]:
    m = Mods(ins)
    m.types(1, ("b32",))
    m.done()
    (d,) = operands(ins, 1)
    em.waits = True
    return [em.write(d, U[32], "::__sim::active_mask()")]


@instruction("nanosleep")
def _nanosleep(ins: Instr, em: Emitter) -> list[str]:
    m = Mods(ins)
    m.types(1, ("u32",))
    m.done()
    (t,) = operands(ins, 1)
    em.waits = True
    return [f"::__sim::nanosleep_thread({em.read(t, U[32])}, {em.where});"]


@instruction("trap")
def _trap(ins: Instr, em: Emitter) -> list[str]:
    Mods(ins).done()
    operands(ins, 0)
    return [f"::__sim::trap({em.where});"]


@instruction("exit")
def _exit(ins: Instr, em: Emitter) -> list[str]:
    Mods(ins).done()
    operands(ins, 0)
    em.waits = True
    return [f"{P}exit_thread({em.where});"]


@instruction("bra")
def _bra(ins: Instr, em: Emitter) -> list[str]:
    m = Mods(ins)
    m.flag("uni")
    m.done()
    (target,) = operands(ins, 1)
    if not isinstance(target, Reg):
        raise unsupported(ins.full, "the target must be a label")
    return [f"goto {em.label(target.name)};"]
