"""Property tests: random malformed input to the public constructors and ops gives only clear errors.

The contract every test here checks:

* malformed input always raises: no call returns, none crashes the process or hangs;
* the exception is a ``TypeError`` (a value of the wrong kind: a string, None, a complex
  number, a bool where a count is meant), a ``ValueError`` (the right kind with a wrong value:
  a negative size, a non-finite or out-of-range number, a shape that does not fit, a damaged
  state dict) or an ``IndexError`` (an index outside its range) - subclasses included, such as
  ``StateDictError``;
* the message is a sentence (at least 20 characters) that names the offending value;
* a refused ``load_state_dict`` leaves the model and the optimizer exactly as they were.

Example counts come from the tier's hypothesis profile (30 on the cpu tier).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, example, given
from hypothesis import strategies as st

import torchlight as tl
from torchlight import nn
from torchlight.nn import functional as F
from torchlight.optim import SGD, Adam, AdamW

CLEAR = (TypeError, ValueError, IndexError)


def _refused(call, names: str | None = None) -> BaseException:
    """Run ``call``; it must raise a clear error whose message is a sentence naming ``names``."""
    try:
        result = call()
    except CLEAR as err:
        message = str(err)
        assert len(message) >= 20, f"{type(err).__name__} message too short to help: {message!r}"
        if names is not None:
            assert names in message, f"{message!r} does not name {names!r}"
        return err
    except Exception as err:  # pragma: no cover - the failure being tested for
        raise AssertionError(f"unclear error {type(err).__name__}: {err}") from err
    raise AssertionError(f"malformed input was accepted: returned {result!r}")


# --- strategies -----------------------------------------------------------------------------------

not_a_number = st.one_of(
    st.none(),
    st.text(max_size=5),
    st.binary(max_size=5),
    st.complex_numbers(allow_nan=False, min_magnitude=1e-3).filter(lambda z: z.imag != 0),
    st.dictionaries(st.text(max_size=2), st.integers(), max_size=2),
    st.builds(object),
)
bad_arrays = st.one_of(
    st.lists(st.text(max_size=3), min_size=1, max_size=4).map(np.array),
    st.lists(st.complex_numbers(allow_nan=False, min_magnitude=1e-3), min_size=1, max_size=4).map(
        lambda v: np.array(v, dtype=np.complex128) + 1j
    ),
    st.integers(1, 4).map(lambda n: np.zeros(n, dtype=[("a", "f4"), ("b", "i4")])),
    st.integers(1, 4).map(lambda n: np.array([None] * n, dtype=object)),
    st.integers(1, 4).map(lambda n: np.arange(n).astype("datetime64[D]")),
)


@st.composite
def nested_with_a_bad_leaf(draw):
    """A list of numbers (maybe nested) with one element swapped for something that is not a number."""
    rows = draw(st.integers(1, 3))
    cols = draw(st.integers(1, 3))
    data = [[draw(st.floats(-10, 10)) for _ in range(cols)] for _ in range(rows)]
    data[draw(st.integers(0, rows - 1))][draw(st.integers(0, cols - 1))] = draw(not_a_number)
    return data


@st.composite
def ragged(draw):
    lengths = draw(st.lists(st.integers(1, 3), min_size=2, max_size=4).filter(lambda v: len(set(v)) > 1))
    return [[1.0] * n for n in lengths]


bad_sizes = st.one_of(
    st.integers(max_value=-1),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.text(max_size=3),
    st.none(),
    st.complex_numbers(),
)
non_finite = st.sampled_from([math.nan, math.inf, -math.inf])
bad_rates = st.one_of(
    non_finite, st.floats(max_value=-1e-12, allow_infinity=False), not_a_number, st.booleans()
)


# --- constructors ---------------------------------------------------------------------------------------


@given(st.one_of(not_a_number, bad_arrays, nested_with_a_bad_leaf(), ragged()))
def test_tensor_refuses_what_is_not_an_array_of_real_numbers(data):
    _refused(lambda: tl.tensor(data))


@given(st.lists(st.floats(3.5e38, 1e308), min_size=1, max_size=4))
def test_tensor_refuses_finite_values_that_overflow_float32(values):
    _refused(lambda: tl.tensor(values), "overflows float32")
    assert np.array_equal(tl.tensor(values, dtype="float64").numpy(), values), "float64 holds them"


@given(
    st.sampled_from([tl.zeros, tl.ones, tl.rand, tl.randn]),
    st.lists(st.integers(0, 3), max_size=3),
    bad_sizes,
    st.integers(0, 3),
)
def test_creation_refuses_bad_sizes(make, sizes, bad, where):
    sizes.insert(min(where, len(sizes)), bad)
    _refused(lambda: make(*sizes), repr(bad))


@given(st.lists(st.integers(1, 3), min_size=1, max_size=3), bad_sizes)
def test_view_refuses_bad_sizes(shape, bad):
    x = tl.zeros(*shape)
    assume(not (isinstance(bad, int) and bad == -1))
    _refused(lambda: x.view(bad, -1))
    _refused(lambda: x.reshape((bad,)))


@given(
    st.one_of(st.text(max_size=8), st.sampled_from([" cpu", "CPU", "Cuda", "cuda:0 ", "cuda:99999999999"]))
)
def test_device_refuses_every_other_string(spec):
    """Exactly 'cpu', 'cpu:0', 'cuda' and 'cuda:N' (N < 2**31): no spaces, no other case."""
    kind, sep, number = spec.partition(":")
    digits = number.isascii() and number.isdigit()
    in_range = digits and int(number) <= (0 if kind == "cpu" else 2**31 - 1)
    accepted = kind in ("cpu", "cuda") and (not sep or in_range)
    assume(not accepted)
    _refused(lambda: tl.Device(spec), repr(spec))


@given(st.one_of(st.booleans(), st.floats(), st.text(max_size=2), st.integers(max_value=-1)))
def test_device_refuses_bad_indices(index):
    _refused(lambda: tl.Device("cuda", index), repr(index))


@given(st.one_of(not_a_number, bad_arrays, st.lists(st.floats(), max_size=2)))
def test_operators_refuse_operands_that_are_not_real_numbers(other):
    x = tl.tensor([1.0, 2.0])
    for op in (lambda: x + other, lambda: x * other, lambda: x - other, lambda: x / other):
        _refused(op)


# --- layers and losses --------------------------------------------------------------------------------


@given(st.sampled_from(["Linear", "Embedding"]), bad_sizes, st.integers(1, 4), st.booleans())
def test_layers_refuse_bad_sizes(layer, bad, good, bad_first):
    args = (bad, good) if bad_first else (good, bad)
    _refused(lambda: getattr(nn, layer)(*args))


@given(st.integers(0, 2), st.sampled_from([0, 1]))
def test_layers_refuse_inputs_with_too_few_dims(ndim, which):
    x = tl.zeros(*([2] * ndim))
    layer = nn.Linear(2, 2) if which == 0 else nn.MultiHeadAttention(2, 1)
    assume(which == 1 or ndim == 0)
    _refused(lambda: layer(x), str(x.shape))


@given(
    st.integers(1, 6),
    st.one_of(
        st.integers(min_value=6, max_value=2**64 - 1).map(lambda v: np.array([v], dtype=np.uint64)),
        st.integers(max_value=-1, min_value=-(2**63)).map(lambda v: np.array([v])),
        st.floats(allow_nan=True)
        .filter(lambda f: not (f == f and f.is_integer() and 0 <= f < 6))
        .map(lambda f: np.array([f])),
        bad_arrays,
        st.lists(st.booleans(), min_size=1, max_size=1).map(np.array),
    ),
)
@example(size=2, ids=np.array([2**64 - 1], dtype=np.uint64))
def test_embedding_refuses_ids_that_are_not_valid_indices(size, ids):
    emb = nn.Embedding(6, size)
    err = _refused(lambda: emb(ids))
    if ids.dtype.kind in "iu":
        assert isinstance(err, IndexError) and str(ids[0]) in str(err), str(err)


@given(
    st.one_of(
        bad_arrays,
        st.lists(st.booleans(), min_size=2, max_size=2).map(np.array),
        st.lists(st.integers(3, 10**6), min_size=2, max_size=2).map(np.array),
        st.floats(0.01, 0.99).map(lambda f: np.array([f, 1.0])),
    )
)
def test_cross_entropy_refuses_targets_that_are_not_class_ids(targets):
    logits = tl.zeros(2, 3)
    assume(targets.shape == (2,) or targets.dtype.kind not in "iuf")
    _refused(lambda: F.cross_entropy(logits, targets))


# --- optimizers ---------------------------------------------------------------------------------------


@given(st.sampled_from([SGD, Adam, AdamW]), st.sampled_from(["lr", "weight_decay"]), bad_rates)
def test_optimizers_refuse_bad_rates(cls, name, value):
    assume(not (cls is not SGD and name == "weight_decay" and value is None))  # None: the default
    _refused(lambda: cls([nn.Parameter(np.ones(2))], **{name: value}), name)


@given(
    st.one_of(
        st.tuples(
            st.floats(0, 0.99), st.one_of(non_finite, st.floats(min_value=1.0), st.floats(max_value=-1e-9))
        ),
        st.lists(st.floats(0, 0.99), max_size=4).filter(lambda v: len(v) != 2),
        not_a_number,
    )
)
def test_adam_refuses_bad_betas(betas):
    _refused(lambda: Adam([nn.Parameter(np.ones(2))], betas=betas))


@given(st.one_of(non_finite, st.floats(max_value=-1e-12, allow_infinity=False), not_a_number))
def test_sgd_refuses_bad_momentum_and_adam_bad_eps(value):
    _refused(lambda: SGD([nn.Parameter(np.ones(2))], momentum=value), "momentum")
    _refused(lambda: Adam([nn.Parameter(np.ones(2))], eps=value), "eps")


# --- loads change nothing -----------------------------------------------------------------------------------

CORRUPTIONS = {
    "shape": lambda v, draw: np.zeros(v.shape + (draw(st.integers(1, 3)),), np.float32),
    "bool": lambda v, draw: np.ones(v.shape, bool),
    "complex": lambda v, draw: v.astype(np.complex64) + 1j,
    "strings": lambda v, draw: v.astype(str),
    "overflow": lambda v, draw: np.full(v.shape, draw(st.floats(3.5e38, 1e308))),
    "object": lambda v, draw: np.array([None] * max(v.size, 1), dtype=object),
    "scalar text": lambda v, draw: draw(st.text(max_size=3)),
    "none": lambda v, draw: None,
}


@given(st.data())
def test_refused_model_loads_change_nothing(data):
    tl.manual_seed(0)
    model = nn.TransformerBlock(4, 2, hidden=8)
    state = model.state_dict()
    key = data.draw(st.sampled_from(sorted(state)))
    kind = data.draw(st.sampled_from(sorted(CORRUPTIONS)))
    state[key] = CORRUPTIONS[kind](state[key], data.draw)
    before = {k: v.copy() for k, v in model.state_dict().items()}
    victim = model
    fresh = {k: np.full_like(v, 7.0) for k, v in before.items()}
    victim.load_state_dict(fresh)  # the state the refused load must leave untouched
    _refused(lambda: victim.load_state_dict(state), repr(key))
    for k, v in victim.state_dict().items():
        np.testing.assert_array_equal(v, fresh[k], err_msg=f"{kind} in {key} changed {k}")


def _adam_with_state():
    tl.manual_seed(1)
    params = [nn.Parameter(np.ones((2, 3), np.float32)), nn.Parameter(np.ones(3, np.float32))]
    opt = Adam(params, lr=0.01)
    for _ in range(2):
        for p in params:
            p.grad = tl.randn(*p.shape)
        opt.step()
    return opt


OPTIM_CORRUPTIONS = {
    "bad index": lambda state, draw: state.__setitem__(
        f"state.{draw(st.sampled_from(['-1', '2', '01', '+1', 'x', '1e0']))}.m", np.zeros(3)
    ),
    "unknown key": lambda state, draw: state.__setitem__(draw(st.text(min_size=1, max_size=6)), np.zeros(1)),
    "bad steps": lambda state, draw: state.__setitem__(
        "steps", np.asarray(draw(st.one_of(st.floats(), st.integers(max_value=-1), st.text(max_size=2))))
    ),
    "bad hyper": lambda state, draw: state.__setitem__(
        f"hyper.{draw(st.sampled_from(['lr', 'beta1', 'beta2', 'eps', 'weight_decay']))}",
        np.asarray(draw(st.one_of(non_finite, st.floats(max_value=-1e-9, allow_infinity=False)))),
    ),
    "bad buffer": lambda state, draw: state.__setitem__(
        f"state.{draw(st.integers(0, 1))}.{draw(st.sampled_from(['m', 'v']))}",
        draw(st.sampled_from([np.array([np.nan] * 3), np.zeros(7), np.array(["a", "b", "c"]), None])),
    ),
    "wrong type": lambda state, draw: state.__setitem__(
        "type", np.asarray(draw(st.sampled_from(["SGD", "AdamW"])))
    ),
}


@given(st.data())
def test_refused_optimizer_loads_change_nothing(data):
    opt = _adam_with_state()
    state = opt.state_dict()
    kind = data.draw(st.sampled_from(sorted(OPTIM_CORRUPTIONS)))
    OPTIM_CORRUPTIONS[kind](state, data.draw)
    before = opt.state_dict()
    _refused(lambda: opt.load_state_dict(state))
    after = opt.state_dict()
    assert before.keys() == after.keys()
    for k in before:
        np.testing.assert_array_equal(before[k], after[k], err_msg=f"{kind} changed {k}")


@pytest.mark.parametrize("value", ["0.1", None, 1j, [0.1], True])
def test_hyperparameter_type_errors_are_type_errors(value):
    with pytest.raises(TypeError):
        SGD([nn.Parameter(np.ones(1))], lr=value)
