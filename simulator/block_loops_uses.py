"""What a kernel's body does with each variable, for ``block_loops_analysis.py``: where it is used,
where written (by an assignment, an increment, or a call that may write what it is passed), and
whether its address is taken (for a call's length, or kept past it).

``VariableUses`` is the part of ``KernelAnalysis`` that its scan of the body fills: the facts that
choose the block's variables and the per-thread slots, and that the other block-loop rewrites read.
"""

from __future__ import annotations

from .block_loops_threads import TRANSPARENT

__all__ = ["ASSIGNMENTS", "VariableUses"]

# The operators that write their left operand.
ASSIGNMENTS = frozenset({"=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>="})


class VariableUses:
    """The uses, writes and addresses taken of a kernel body's variables, keyed by declaration."""

    def start_uses(self) -> None:
        """No use seen yet (before the scan)."""
        self.refs: list[tuple[int, int, str]] = []  # (position, declaration, name) of each use
        self.written: dict[int, list[int]] = {}  # declaration -> where it is written
        self.call_writes: set[int] = set()  # of those, calls that may write what they are passed
        self.addressed: set[int] = set()  # declarations whose address a call gets
        self.escaped: set[int] = set()  # declarations whose address is kept (a pointer, memory)

    def _note_uses(self, node, parents: list) -> None:
        """Note what ``node``, a node of the scan's other than a call, does with a variable."""
        ck, tu = self.ck, self.tu
        if node.kind == ck.DECL_REF_EXPR:
            self._use(node, parents)
        elif node.kind in (ck.BINARY_OPERATOR, ck.COMPOUND_ASSIGNMENT_OPERATOR):
            children = list(node.get_children())
            if len(children) == 2:
                op = self.between(children[0], children[1])
                if node.kind == ck.COMPOUND_ASSIGNMENT_OPERATOR or op in ASSIGNMENTS:
                    self._write(children[0], node)
        elif node.kind == ck.UNARY_OPERATOR:
            children = list(node.get_children())
            if len(children) == 1:
                start, end = tu.rng(node)
                cs, ce = tu.rng(children[0])
                around = self.text[start:cs] + self.text[ce:end]
                if "++" in around or "--" in around:
                    self._write(children[0], node)
                elif self.text[start:cs].strip() == "&":
                    self._address(self._root(children[0]), parents)
        if node.kind in (ck.DECL_REF_EXPR, ck.MEMBER_REF_EXPR, ck.ARRAY_SUBSCRIPT_EXPR):
            if node.type.get_canonical().kind.name == "CONSTANTARRAY":
                # An array used other than by subscript or sizeof decays to a pointer to it.
                up = self._up(parents)
                if up is None or up.kind.name not in ("ARRAY_SUBSCRIPT_EXPR", "CXX_UNARY_EXPR", "UNARY_EXPR"):
                    self._address(self._root(node), parents)

    def _call_writes(self, node) -> None:
        """A call that is no barrier or exchange: what it may write, its object's or its arguments'."""
        children = list(node.get_children())
        if children and children[0].kind == self.ck.MEMBER_REF_EXPR:
            # `x.method(...)` may change x.
            root = self._root(children[0])
            if root is not None:
                self.written.setdefault(root, []).append(self.tu.off(node.extent.start))
                self.call_writes.add(self.tu.off(node.extent.start))
        for arg in children[1:]:
            # A variable passed as it is (no conversion): a reference parameter may change it.
            if arg.kind == self.ck.DECL_REF_EXPR and arg.referenced is not None:
                key = self.tu.off(arg.referenced.location)
                self.written.setdefault(key, []).append(self.tu.off(arg.extent.start))
                self.call_writes.add(self.tu.off(arg.extent.start))

    def _use(self, node, parents: list) -> None:
        """A name's use: recorded with its declaration."""
        ref = node.referenced
        if ref is None:
            return
        key = self.tu.off(ref.location)
        self.refs.append((self.tu.off(node.extent.start), key, ref.spelling))

    @staticmethod
    def _up(parents: list):
        """The nearest enclosing node that is not parentheses or an implicit conversion."""
        chain = [p for p in parents if p.kind.name not in TRANSPARENT]
        return chain[-1] if chain else None

    def _address(self, root: int | None, parents: list) -> None:
        """The address of variable ``root`` is taken: as a call's argument, the callee may write
        through it for the call's length (``f(acc)``, ``sincosf(x, &s, &c)``); anywhere else it
        may be kept (a pointer, memory) past a barrier, where a region's local is gone."""
        if root is None:
            return
        up = self._up(parents)
        if up is not None and up.kind == self.ck.CALL_EXPR:
            self.addressed.add(root)
            self.written.setdefault(root, []).append(self.tu.off(up.extent.start))
            self.call_writes.add(self.tu.off(up.extent.start))
        else:
            self.escaped.add(root)

    def _write(self, lhs, at) -> None:
        root = self._root(lhs)
        if root is not None:
            self.written.setdefault(root, []).append(self.tu.off(at.extent.start))

    def _root(self, node) -> int | None:
        """The variable an lvalue names or is part of (None: memory through a pointer)."""
        while True:
            kind = node.kind.name
            children = list(node.get_children())
            if kind in TRANSPARENT and len(children) == 1:
                node = children[0]
            elif kind == "MEMBER_REF_EXPR" and children:
                if "->" in self.text[self.tu.rng(children[0])[1] : self.tu.rng(node)[1]]:
                    return None
                node = children[0]
            elif kind == "ARRAY_SUBSCRIPT_EXPR" and children:
                base = children[0]
                while base.kind.name in TRANSPARENT and len(list(base.get_children())) == 1:
                    base = next(base.get_children())
                if (
                    base.kind != self.ck.DECL_REF_EXPR
                    or base.type.get_canonical().kind.name != "CONSTANTARRAY"
                ):
                    return None
                node = base
            elif kind == "DECL_REF_EXPR" and node.referenced is not None:
                return self.tu.off(node.referenced.location)
            else:
                return None

    def between(self, a, b) -> str:
        """The source text between nodes ``a`` and ``b`` (an operator), stripped."""
        return self.text[self.tu.rng(a)[1] : self.tu.rng(b)[0]].strip()
