"""Task D — pure data movement: are fused movement chains bit-identical to eager? (docs/test-plan.md
§2).

Every chain of :data:`CHAINS` runs eager and fused (one static compile per cell) for
each dtype and shape, and the two outputs are compared bit for bit (``bit_equal``; the
integer ``ulp_diff`` when they differ). The inputs are ``N(0, 1)`` drawn in float32 on
the CPU (seed ``seed``, the next seeds for further operands) and rounded to the dtype.

Five chains only move data — transpose → concat, slice → broadcast → concat, split →
transpose → concat, reshape → squeeze → expand, gather with random indices — so they
are expected to be bit-identical. The sixth is the plan's expected counter-example, a
broadcast that hides computation: ``cat([x + b.expand_as(x), z])`` with ``z`` of a
wider dtype, so the concat silently promotes the broadcast sum. Eager rounds ``x + b`` to
the storage dtype before the promotion; a fused kernel may keep the wider sum. When
that cell differs, the cause is checked, not assumed: the fused output is compared with
the sum computed in float32 and never rounded to the storage dtype.

``kernel_generated`` says whether the fused compiler emitted a kernel for the cell:
True when kernel source was captured, False when none was and the fused output is a
view of an input (nothing ran), None when neither can be told (for example an NPU run
without kernel dumps, or a library call).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from fpinspect.numerics import bit_equal, ulp_diff
from fpinspect.store.figures import COUNT, EXACT, Fields, Figures, Rows

from ..backends.base import Backend
from ..events import HistogramEvent, Message, Progress
from ..results import Histogram, Table, Verdict
from ..settings import TaskSettings
from ..task import Emit, Task


def transpose_concat(x, y):
    import torch

    return torch.cat([x.transpose(0, 1), y.transpose(0, 1)], dim=0)


def slice_broadcast_concat(x):
    import torch

    return torch.cat([x, x[:, :1].expand(-1, x.shape[1])], dim=-1)


def split_transpose_concat(x):
    import torch

    k = x.shape[1] // 2
    a, b = torch.split(x, [k, x.shape[1] - k], dim=1)
    return torch.cat([b.transpose(0, 1), a.transpose(0, 1)], dim=0)


def reshape_squeeze_expand(x):
    m, n = x.shape
    return x.reshape(1, m * n).squeeze(0).reshape(m, 1, n).expand(m, 3, n)


def gather_indices(x, index):
    import torch

    return torch.gather(x, 1, index)


def broadcast_add_promote(x, b, z):
    import torch

    return torch.cat([x + b.expand_as(x), z], dim=-1)


def _unrounded_sum(x, b, z):
    """What a fused kernel that keeps the broadcast sum in float32 would return for
    :func:`broadcast_add_promote`: the sum of the float32 values, never rounded to the
    storage dtype, then widened to ``z``'s dtype."""
    import torch

    return torch.cat([(x.float() + b.float()).to(z.dtype), z], dim=-1)


@dataclass(frozen=True)
class Chain:
    """One chain: ``fn`` on operands made by ``operands(x, seed)``; ``pure`` when it only
    moves data; for a chain with hidden computation, ``hidden`` says what it is and
    ``hypothesis`` computes the output that explanation predicts for the fused path."""

    name: str
    expression: str
    fn: Callable[..., Any]
    operands: str = "x"
    pure: bool = True
    hidden: str | None = None
    hypothesis: Callable[..., Any] | None = None


CHAINS = {
    c.name: c
    for c in (
        Chain("transpose_concat", "cat([x.T, y.T], 0)", transpose_concat, "x,y"),
        Chain("slice_broadcast_concat", "cat([x, x[:, :1].expand(m, n)], -1)", slice_broadcast_concat),
        Chain("split_transpose_concat", "a, b = split(x); cat([b.T, a.T], 0)", split_transpose_concat),
        Chain(
            "reshape_squeeze_expand",
            "x.reshape(1, mn).squeeze(0).reshape(m, 1, n).expand(m, 3, n)",
            reshape_squeeze_expand,
        ),
        Chain("gather", "gather(x, 1, index), index ~ U{0..n-1}", gather_indices, "x,index"),
        Chain(
            "broadcast_add_promote",
            "cat([x + b.expand_as(x), z], -1), z wider than x",
            broadcast_add_promote,
            "x,b,z",
            pure=False,
            hidden="the broadcast add x + b, promoted to z's wider dtype by the concat",
            hypothesis=_unrounded_sum,
        ),
    )
}

#: The dtype ``z`` takes in the promotion chain: the next wider format.
WIDER = {"float16": "float32", "bfloat16": "float32", "float32": "float64"}


@dataclass(frozen=True)
class DataMovementSettings(TaskSettings):
    """Every chain of ``chains`` (names of :data:`CHAINS`) for every dtype of ``dtypes``
    and every [rows, columns] of ``shapes``. ``dtypes`` replaces the common ``dtype``
    field, which this task does not read (:attr:`UNUSED`)."""

    dtypes: tuple[str, ...] = ("float16", "bfloat16", "float32")
    #: small, odd (not a multiple of 16), and typical transformer activations.
    shapes: tuple[tuple[int, int], ...] = ((16, 16), (37, 53), (2048, 4096), (4096, 1024))
    chains: tuple[str, ...] = tuple(CHAINS)

    QUICK: ClassVar = {"shapes": ((16, 16), (37, 53), (256, 768))}
    UNUSED: ClassVar = ("dtype",)

    def work(self) -> float:
        """Elements moved: dtypes × chains × the elements of every shape."""
        return float(len(self.dtypes) * len(self.chains) * sum(r * c for r, c in self.shapes))

    def __post_init__(self):
        empty = [n for n in ("dtypes", "shapes", "chains") if not getattr(self, n)]
        if empty:
            raise ValueError(f"{', '.join(empty)} must not be empty")
        odd = [d for d in self.dtypes if d not in WIDER]
        if odd:
            raise ValueError(f"dtype(s) {', '.join(odd)} not covered; choose from {', '.join(WIDER)}")
        unknown = [c for c in self.chains if c not in CHAINS]
        if unknown:
            raise ValueError(f"unknown chain(s) {', '.join(unknown)}; known: {', '.join(CHAINS)}")
        for shape in self.shapes:
            if len(shape) != 2 or min(shape) < 2:
                raise ValueError(f"shape {list(shape)} must be [rows, columns], each at least 2")


@dataclass
class Cell:
    """One chain × dtype × shape: the contract row and what explains a mismatch."""

    chain: str
    dtype: str
    shape: tuple[int, int]
    bit_equal: bool
    kernel_generated: bool | None
    max_ulp: int
    differing: int = 0
    elements: int = 0
    #: For a mismatch in a chain with hidden computation: whether the fused output equals
    #: that chain's hypothesis bit for bit.
    cause_confirmed: bool | None = None

    def row(self) -> dict[str, Any]:
        return {
            "chain": self.chain,
            "dtype": self.dtype,
            "shape": list(self.shape),
            "bit_equal": self.bit_equal,
            "kernel_generated": self.kernel_generated,
            "max_ulp": self.max_ulp,
        }


def cause(cell: Cell, out_dtype: str) -> str:
    """The counter-example's cause in words, from its chain and the hypothesis check."""
    chain = CHAINS[cell.chain]
    share = f"{cell.differing} of {cell.elements} elements differ, by up to {cell.max_ulp} ULP of {out_dtype}"
    if chain.pure:
        return f"unexpected: a chain that only moves data changed bits ({share})"
    checked = {
        True: f"confirmed: the fused output equals the float32 sum never rounded to {cell.dtype}, bit for bit",
        False: "not confirmed: the fused output is not the unrounded float32 sum either",
        None: "not checked",
    }[cell.cause_confirmed]
    return (
        f"hidden computation — {chain.hidden}: eager rounds the sum to {cell.dtype} before the promotion, "
        f"the fused kernel can keep it in float32 ({share}); {checked}"
    )


def _label(shape: tuple[int, int]) -> str:
    return "×".join(map(str, shape))


#: The figures a baseline check compares (:mod:`fpinspect.store.figures`): each :class:`Cell`
#: of :meth:`DataMovementResult.data`'s ``table``, and the verdict's bit-equality.
FIGURES = Figures(
    Rows("table", ("chain", "dtype", "shape"), {"bit_equal": EXACT, "max_ulp": COUNT}),
    Fields({"all_pure_movement_bit_equal": EXACT}),
)


@dataclass
class DataMovementResult:
    settings: DataMovementSettings
    cells: list[Cell]
    #: Output dtype of each (chain, dtype) (the promotion chain widens).
    out_dtypes: dict[tuple[str, str], str] = field(default_factory=dict)

    def _out_dtype(self, c: Cell) -> str:
        return self.out_dtypes.get((c.chain, c.dtype), c.dtype)

    @property
    def pure(self) -> list[Cell]:
        return [c for c in self.cells if CHAINS[c.chain].pure]

    @property
    def hidden(self) -> list[Cell]:
        return [c for c in self.cells if not CHAINS[c.chain].pure]

    def all_pure_movement_bit_equal(self) -> bool:
        return bool(self.pure) and all(c.bit_equal for c in self.pure)

    def counter_examples(self) -> list[dict[str, Any]]:
        return [
            {
                **c.row(),
                "pure": CHAINS[c.chain].pure,
                "elements_differing": c.differing,
                "cause": cause(c, self._out_dtype(c)),
            }
            for c in self.cells
            if not c.bit_equal
        ]

    def data(self) -> dict[str, Any]:
        return {
            "table": [c.row() for c in self.cells],
            "counter_examples": self.counter_examples(),
            "all_pure_movement_bit_equal": self.all_pure_movement_bit_equal(),
            "chains": {
                n: {"expression": CHAINS[n].expression, "pure": CHAINS[n].pure} for n in self.settings.chains
            },
        }

    def verdicts(self) -> list[Verdict]:
        pure, hidden = self.pure, self.hidden
        bad = [c for c in pure if not c.bit_equal]
        measured = f"{len(pure) - len(bad)} of {len(pure)} cells (chain × dtype × shape) are bit-identical"
        if bad:
            measured += "; not: " + ", ".join(f"{c.chain} {c.dtype} {_label(c.shape)}" for c in bad)
        views = sum(c.kernel_generated is False for c in pure)
        measured += f". {views} of them ran no kernel at all (the fused output is a view of the input)."
        out = [
            Verdict(
                "pure data movement is bit-identical",
                "transpose, reshape, squeeze, expand, slice, concat, split and gather chains give eager = fused "
                "bit for bit in every dtype and shape",
                measured,
                self.all_pure_movement_bit_equal() if pure else None,
            )
        ]
        if hidden:
            differ = [c for c in hidden if not c.bit_equal]
            if differ:
                by_dtype = sorted({c.dtype for c in differ}, key=self.settings.dtypes.index)
                same = sorted({c.dtype for c in hidden} - set(by_dtype), key=self.settings.dtypes.index)
                confirmed = all(c.cause_confirmed for c in differ)
                measured = (
                    f"differs in {', '.join(by_dtype)} (up to {max(c.max_ulp for c in differ)} ULP)"
                    + (f", bit-identical in {', '.join(same)}" if same else "")
                    + "; the cause — eager rounds the broadcast sum to the storage dtype, the fused kernel keeps it "
                    + (
                        "in float32 — is confirmed bit for bit in every differing cell."
                        if confirmed
                        else "in float32 — is NOT confirmed in every differing cell (see counter_examples)."
                    )
                )
                agrees = True
            else:
                measured = "bit-identical in every dtype and shape: this device shows no counter-example."
                agrees = None
            out.append(
                Verdict(
                    "a broadcast hiding a type promotion may differ",
                    "a broadcast with hidden computation (an implicit type promotion) can change bits — the plan's "
                    "expected counter-example",
                    measured,
                    agrees,
                )
            )
        return out

    def tables(self) -> list[Table]:
        return [
            Table(
                "dtype × shape × chain (eager against fused)",
                ("chain", "dtype", "shape", "bit-equal", "kernel generated", "max ULP"),
                tuple(
                    (c.chain, c.dtype, list(c.shape), c.bit_equal, c.kernel_generated, c.max_ulp)
                    for c in self.cells
                ),
            ),
            Table(
                "Counter-examples",
                ("chain", "dtype", "shape", "max ULP", "cause"),
                tuple(
                    (e["chain"], e["dtype"], e["shape"], e["max_ulp"], e["cause"])
                    for e in self.counter_examples()
                ),
            ),
            Table(
                "Chains",
                ("chain", "expression", "pure movement"),
                tuple((n, CHAINS[n].expression, CHAINS[n].pure) for n in self.settings.chains),
            ),
        ]

    def histograms(self) -> list[Histogram]:
        return [mismatch_chart(self.settings, self.cells)]


def mismatch_chart(s: DataMovementSettings, cells: list[Cell]) -> Histogram:
    done = [n for n in s.chains if any(c.chain == n for c in cells)]
    return Histogram(
        "d_cells_not_bit_equal",
        "Cells where fused differs from eager, per chain",
        f"chain ({len(s.dtypes)} dtypes × {len(s.shapes)} shapes each)",
        tuple(done),
        tuple(sum(not c.bit_equal for c in cells if c.chain == n) for n in done),
        ylabel="cells not bit-equal",
    )


def _operands(chain: Chain, x, dtype: str, seed: int, device: str) -> list:
    """The chain's operands besides ``x``, drawn on the CPU from seeds after ``seed``."""
    import torch

    from ..tensors import torch_dtype

    m, n = x.shape
    out = []
    for i, name in enumerate(chain.operands.split(",")):
        g = torch.Generator().manual_seed(seed + i)
        if name == "x":
            t = x
        elif name == "y":
            t = torch.randn((m, n), generator=g).to(torch_dtype(dtype))
        elif name == "index":
            t = torch.randint(0, n, (m, n), generator=g)
        elif name == "b":
            t = torch.randn((n,), generator=g).to(torch_dtype(dtype))
        elif name == "z":
            t = torch.randn((m, n), generator=g).to(torch_dtype(WIDER[dtype]))
        else:
            raise ValueError(f"unknown operand {name!r}")
        out.append(t.to(device))
    return out


def _aliases_input(out, args) -> bool:
    ptr = out.untyped_storage().data_ptr()
    return any(hasattr(a, "untyped_storage") and a.untyped_storage().data_ptr() == ptr for a in args)


def run_cell(
    backend: Backend, chain: Chain, dtype: str, shape: tuple[int, int], seed: int
) -> tuple[Cell, str]:
    """Run one cell eager and fused; returns it and its output dtype's name."""
    import torch

    from ..tensors import to_numpy, torch_dtype

    g = torch.Generator().manual_seed(seed)
    x = torch.randn(tuple(shape), generator=g).to(torch_dtype(dtype)).to(backend.device)
    args = _operands(chain, x, dtype, seed + 1, backend.device)
    eager = to_numpy(backend.eager(chain.fn)(*args))
    compiled = backend.compile(chain.fn, *args)
    fused = to_numpy(compiled.output)
    if compiled.kernels:
        generated: bool | None = True
    else:
        generated = False if _aliases_input(compiled.output, args) else None
    same = eager.shape == fused.shape and bit_equal(eager, fused)
    dist = ulp_diff(fused, eager) if not same else np.zeros(1, dtype=np.uint8)
    cell = Cell(
        chain.name,
        dtype,
        tuple(shape),
        same,
        generated,
        int(dist.max()),
        int(np.count_nonzero(dist)),
        int(eager.size),
    )
    if not same and chain.hypothesis is not None:
        cell.cause_confirmed = bit_equal(to_numpy(chain.hypothesis(*args)), fused)
    return cell, str(fused.dtype)


def run(s: DataMovementSettings, backend: Backend, emit: Emit) -> DataMovementResult:
    cells: list[Cell] = []
    out_dtypes: dict[tuple[str, str], str] = {}
    total = len(s.chains) * len(s.dtypes) * len(s.shapes)
    for name in s.chains:
        chain = CHAINS[name]
        emit(Message(f"{name}: {chain.expression}"))
        for dtype in s.dtypes:
            for shape in s.shapes:
                cell, out_dtype = run_cell(backend, chain, dtype, shape, s.seed)
                cells.append(cell)
                out_dtypes[(name, dtype)] = out_dtype
                emit(Progress("D cells", len(cells), total))
        emit(HistogramEvent(mismatch_chart(s, cells)))
    return DataMovementResult(s, cells, out_dtypes)


TASK = Task(
    id="D",
    title="Pure data movement: bit identity",
    claim="§2: pure data movement (transpose, reshape, slice, concat, split, broadcast) can be bit-identical",
    settings=DataMovementSettings,
    run=run,
    figures=FIGURES,
    priority="P1",
)
