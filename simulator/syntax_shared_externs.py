"""``extern __shared__`` declarations that name one variable with two types, which nvcc refuses.

Every ``extern __shared__`` array of a namespace is one variable, the launch's dynamic shared
memory, whichever kernel or file scope declares it: two declarations of one name in one namespace
must agree on its type. nvcc's front end says ``declaration is incompatible with previous "s"
(declared at line 36)``; the simulator, which makes each declaration a pointer of its own, would
otherwise build what nvcc does not. A declaration in a template is not compared: its type may
depend on the template's parameters, which only an instantiation fixes, and the front end reads
templates as written, not their instances; nvcc also refuses ``extern __shared__ T s[]`` whose
instance's T differs from another declaration's type, which this check lets through.
"""

from __future__ import annotations

__all__ = ["SharedExterns"]

_TEMPLATES = frozenset({"FUNCTION_TEMPLATE", "CLASS_TEMPLATE", "CLASS_TEMPLATE_PARTIAL_SPECIALIZATION"})


class SharedExterns:
    """The ``extern __shared__`` declarations of one translation unit seen so far, by name."""

    def __init__(self, unit) -> None:
        self.unit = unit
        self._first: dict[tuple[tuple[str, ...], str], tuple[str, int]] = {}  # -> (type, offset)

    def incompatible(self, var) -> str | None:
        """nvcc's refusal of ``var`` (an ``extern __shared__`` declaration) if an earlier one gave its
        name another type, else None."""
        namespaces: list[str] = []
        scope = var.semantic_parent
        while scope is not None and scope.kind.name != "TRANSLATION_UNIT":
            if scope.kind.name in _TEMPLATES:
                return None
            if scope.kind.name == "NAMESPACE":
                namespaces.append(scope.spelling)
            scope = scope.semantic_parent
        at = self.unit.off(var.location)
        typ = var.type.get_canonical().spelling
        first = self._first.setdefault((tuple(namespaces), var.spelling), (typ, at))
        if first[0] == typ:
            return None
        path, line = self.unit.src.where(first[1])
        here, _ = self.unit.src.where(at)
        of = "" if path == here else f' of "{path}"'
        return f'declaration is incompatible with previous "{var.spelling}" (declared at line {line}{of})'
