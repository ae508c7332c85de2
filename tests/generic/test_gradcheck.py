"""Float64 central-difference gradient checks for every Function in torchlight.core.functions."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pytest
from tl_testing import LIMITS, Sampler, away_from_zero, gradcheck, graph_functions, grid, uniform

import torchlight as tl
from torchlight.backends.cpu import CPUBackend
from torchlight.core import functions as F
from torchlight.core.autograd import Function
from torchlight.nn import functional as NF

S = LIMITS.grad_side


@dataclass(frozen=True)
class Case:
    """One gradient check: the Functions it must exercise, the graph, and its inputs."""

    name: str
    covers: tuple[str, ...]
    fn: Callable[..., tl.Tensor]
    shapes: tuple[tuple[int, ...], ...]
    samplers: tuple[Sampler, ...] = ()
    requires: tuple[bool, ...] | None = None
    h: float = 1e-6
    extra: dict = field(default_factory=dict)

    def inputs(self, seed: int) -> list[np.ndarray]:
        rng = np.random.default_rng(seed)
        samplers = self.samplers or (uniform(),) * len(self.shapes)
        return [
            np.asarray(sample(rng, shape), dtype=np.float64) for sample, shape in zip(samplers, self.shapes)
        ]


# Exactly representable inputs: a linear map through float32 then has exact differences.
FLOAT32_GRID = grid(tuple(np.arange(-128, 129) / 64.0))
MASK = grid((0.0, -1.0, 0.5, -np.inf))


def _elsewhere(t: tl.Tensor) -> tl.Tensor:
    # A second CPUBackend instance is another backend object, so .to() really moves the data.
    return t.to(CPUBackend())


CASES = [
    Case("neg", ("Neg",), lambda x: -x, ((2, S),)),
    Case("exp", ("Exp",), lambda x: x.exp(), ((2, S),), (uniform(-2, 2),)),
    Case("log", ("Log",), lambda x: x.log(), ((2, S),), (uniform(0.5, 3),)),
    Case("sigmoid", ("Sigmoid",), lambda x: x.sigmoid(), ((2, S),), (uniform(-4, 4),)),
    Case("tanh", ("Tanh",), lambda x: x.tanh(), ((2, S),), (uniform(-2, 2),)),
    Case("relu", ("Relu",), lambda x: x.relu(), ((2, S),), (away_from_zero(0.1, 2),)),
    Case("gelu", ("Gelu",), NF.gelu, ((2, S),), (uniform(-3, 3),)),
    Case("pow2", ("Pow",), lambda x: x**2, ((2, S),)),
    Case("pow3", ("Pow",), lambda x: x**3, ((2, S),)),
    Case("pow_half", ("Pow",), lambda x: x**0.5, ((2, S),), (uniform(0.5, 3),)),
    Case("pow_neg", ("Pow",), lambda x: x**-1.5, ((2, S),), (uniform(0.5, 3),)),
    Case("add_broadcast", ("Add",), lambda a, b: a + b, ((2, 1, S), (3, S))),
    Case("sub_broadcast", ("Sub",), lambda a, b: a - b, ((S,), (2, 1))),
    Case("mul_broadcast", ("Mul",), lambda a, b: a * b, ((2, 1, S), (1, 3, 1))),
    Case("div_broadcast", ("Div",), lambda a, b: a / b, ((2, S), (S,)), (uniform(), away_from_zero(0.5, 2))),
    Case("rsub_scalar", ("Sub",), lambda a: 2.0 - a, ((2, S),)),
    Case("rdiv_scalar", ("Div",), lambda a: 1.5 / a, ((2, S),), (away_from_zero(0.5, 2),)),
    Case("mul_one_side", ("Mul",), lambda a, b: a * b, ((2, S), (2, S)), requires=(True, False)),
    Case("sum_dim", ("Sum",), lambda x: x.sum(1), ((2, S, 3),)),
    Case("sum_all", ("SumAll",), lambda x: x.sum(), ((2, S),)),
    Case("sum_keepdim", ("Sum",), lambda x: x.sum(0, keepdim=True), ((S, 2),)),
    Case("mean", ("Sum", "Mul"), lambda x: x.mean(-1), ((2, S),)),
    Case("max_dim", ("Max",), lambda x: x.max(1), ((2, S, 2),)),
    Case("max_all", ("Max",), lambda x: x.max(), ((2, S),)),
    Case("matmul", ("MatMul",), lambda a, b: a @ b, ((S, 3), (3, 2))),
    Case("matmul_batched", ("MatMul",), lambda a, b: a @ b, ((2, 1, S, 3), (2, 3, 2))),
    Case("matmul_vec", ("MatMul", "View"), lambda a, b: a @ b, ((3,), (3, S))),
    Case("matmul_one_side", ("MatMul",), lambda a, b: a @ b, ((S, 3), (3, 2)), requires=(False, True)),
    Case("permute", ("Permute",), lambda x: x.permute(2, 0, 1), ((2, S, 3),)),
    Case("transpose_matmul", ("Permute", "MatMul"), lambda a: a.T @ a, ((S, 3),)),
    Case("view", ("View",), lambda x: x.view(S, -1), ((2, S, 2),)),
    Case("view_of_permuted", ("View", "Permute"), lambda x: x.permute(1, 0).view(-1), ((2, S),)),
    Case("contiguous", ("Contiguous", "Permute"), lambda x: x.permute(1, 0).contiguous(), ((2, S),)),
    Case(
        "cast",
        ("Cast",),
        lambda x: (x.to("float32") * 3.0).to("float64"),
        ((2, S),),
        (FLOAT32_GRID,),
        h=1 / 64,
    ),
    Case("move", ("MoveTo", "Exp"), lambda x: _elsewhere(x).exp(), ((2, S),), (uniform(-1, 1),)),
    Case("softmax_last", ("Softmax",), lambda x: x.softmax(-1), ((2, S),)),
    Case("softmax_first", ("Softmax",), lambda x: x.softmax(0), ((3, S),)),
    Case("log_softmax", ("LogSoftmax",), lambda x: x.log_softmax(-1), ((2, S),)),
    Case("log_softmax_mid", ("LogSoftmax",), lambda x: x.log_softmax(1), ((2, 3, S),)),
    Case(
        "layer_norm",
        ("LayerNorm",),
        lambda x, g, b: x.layer_norm(g, b, 1e-5),
        ((3, S + 1), (S + 1,), (S + 1,)),
        (uniform(), uniform(0.5, 2), uniform()),
    ),
    Case(
        "layer_norm_3d",
        ("LayerNorm",),
        lambda x, g, b: x.layer_norm(g, b, 0.1),
        ((2, 2, S), (S,), (S,)),
        (uniform(), uniform(0.5, 2), uniform()),
    ),
    Case("attn_softmax", ("AttnSoftmax",), lambda x: x.attn_softmax(), ((1, 2, S, S + 1),)),
    Case("attn_softmax_causal", ("AttnSoftmax",), lambda x: x.attn_softmax(causal=True), ((2, 1, S, S),)),
    Case(
        "attn_softmax_mask",
        ("AttnSoftmax",),
        lambda x, m: x.attn_softmax(m, causal=True),
        ((2, 2, S, S + 1), (2, S + 1)),
        (uniform(), MASK),
        requires=(True, False),
    ),
    Case("diamond", ("Mul", "Add", "Exp"), lambda x: x * x + x.exp() * x, ((2, S),), (uniform(-1, 1),)),
]

NON_DIFFERENTIABLE = ("Comparison", "Lt", "Eq", "Gt")


def function_names() -> set[str]:
    """Every Function subclass defined in torchlight.core.functions."""
    return {
        name
        for name, cls in inspect.getmembers(F, inspect.isclass)
        if issubclass(cls, Function) and cls is not Function and cls.__module__ == F.__name__
    }


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
@pytest.mark.op("gradcheck")
def test_gradcheck(backend, case):
    out = gradcheck(case.fn, case.inputs(seed=len(case.name)), backend, requires=case.requires, h=case.h)
    recorded = graph_functions(out)
    assert set(case.covers) <= recorded, f"{case.name} did not run {set(case.covers) - recorded}"


@pytest.mark.parametrize("name", NON_DIFFERENTIABLE)
@pytest.mark.op("compare")
def test_comparisons_have_no_gradient(backend, name):
    a = tl.tensor([[0.5, -1.0], [2.0, 0.0]], dtype="float64", device=backend, requires_grad=True)
    b = tl.tensor([0.5, 1.0], dtype="float64", device=backend, requires_grad=True)
    out = getattr(F, name).apply(a, b)
    assert not out.requires_grad and out.is_leaf
    op = getattr(F, name).op
    expected = {"lt": np.less, "eq": np.equal, "gt": np.greater}[op](a.numpy(), b.numpy())
    np.testing.assert_array_equal(out.numpy(), expected.astype(np.float64))
    with pytest.raises(RuntimeError, match="does not require grad"):
        out.sum().backward()
    # Used inside a differentiable graph, a comparison acts as a constant mask.
    (a * (a > 0.0)).sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), (a.numpy() > 0).astype(np.float64))
