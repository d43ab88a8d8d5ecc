"""Fusion-on vs fusion-off comparison (mode 1): plan every pair, compute on demand.

:class:`DumpComparison` loads both graphs and both datadump folders, then *plans* one pair
per fused-op output (against the original op output it replaced) and per fused-op input
(against the original producer's output) — cheap, no tensor is read. :meth:`compute`
turns one plan into a :class:`Record` (cached; safe to call from worker threads), and
:meth:`run` computes everything, localises, and returns the report of the design notes.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from ..numerics import float_format, is_supported
from ..numerics.chunks import CastView
from .datadump import DumpFile, DumpIndex
from .errors import InputError
from .graph import (
    FusedOp,
    GeModel,
    TensorDesc,
    collector_paused,
    fused_ops,
    is_data_source,
    load_graph,
    numpy_dtype_name,
)
from .layouts import PLAIN_LAYOUTS, LayoutError, convert_layout, needs_conversion
from .pair import PairResult, compare_arrays, finish_status, json_clean, json_number
from .tensors import dump_desc, load_dump, open_dump
from .verdict import ThresholdTable, judge


@dataclass
class PairPlan:
    """One pair to compare, decided from the graphs and file indices alone."""

    kind: str  #: "output" or "input"
    fused_op: str
    fused_type: str
    fused_index: int
    origin_op: str | None
    origin_index: int | None
    status: list[str] = field(default_factory=list)  #: codes known before reading data
    message: str | None = None
    fused_file: DumpFile | None = None
    origin_file: DumpFile | None = None
    fused_desc: TensorDesc | None = None
    origin_desc: TensorDesc | None = None
    src_op: str | None = None  #: for inputs: the producer in the fusion-on graph

    @property
    def key(self) -> tuple[str, str, int]:
        return (self.fused_op, self.kind, self.fused_index)

    @property
    def comparable(self) -> bool:
        return self.fused_file is not None and self.origin_file is not None and not any(
            s in self.status for s in ("NO_MAPPING", "SKIPPED_CONST_DATA", "FILE_NOT_FOUND", "ORIGIN_NOT_FOUND")
        )


@dataclass
class Record:
    """One row of the comparison (the ``records`` contract of the design notes)."""

    plan: PairPlan
    result: PairResult | None
    verdict: str | None = None
    reasons: tuple[str, ...] = ()
    score: float | None = None
    conversion: str | None = None  #: e.g. "fused NC1HWC0->NCHW"

    @property
    def status(self) -> list[str]:
        codes = list(self.plan.status) + (self.result.status if self.result else [])
        return finish_status(list(dict.fromkeys(codes)))

    def to_json(self) -> dict:
        p, r = self.plan, self.result
        return {
            "kind": p.kind,
            "fused_op": p.fused_op,
            "fused_type": p.fused_type,
            "fused_index": p.fused_index,
            "origin_op": p.origin_op,
            "origin_index": p.origin_index,
            "status": self.status,
            "cosine": json_number(r.cosine) if r else None,
            "max_abs": json_number(r.max_abs) if r else None,
            "max_rel": json_number(r.max_rel) if r else None,
            "metrics": json_clean({**(r.metrics if r else {}), "worst": r.worst if r else [],
                                   "red_eps": self.score}),  # fmt: skip
            "verdict": self.verdict,
            "reasons": list(self.reasons),
            "message": p.message or (r.message if r else None),
            "conversion": self.conversion,
            "fused_file": p.fused_file.path if p.fused_file else None,
            "origin_file": p.origin_file.path if p.origin_file else None,
        }


class DumpComparison:
    """Both sides of one run, loaded and planned. Raises :class:`InputError` for bad inputs."""

    def __init__(self, open_graph: str, close_graph: str, open_data: str, close_data: str, *,
                 iteration: str | None = None, close_iteration: str | None = None,
                 thresholds: ThresholdTable | None = None, worst: int = 5):  # fmt: skip
        with collector_paused():
            self._load(open_graph, close_graph, open_data, close_data, iteration, close_iteration)
        self.thresholds = thresholds or ThresholdTable()
        self.worst = worst
        self._cache: dict[tuple, Record] = {}
        self._inflight: dict[tuple, threading.Event] = {}
        self._lock = threading.Lock()

    def _load(self, open_graph, close_graph, open_data, close_data, iteration, close_iteration) -> None:
        self.open_model: GeModel = load_graph(open_graph)
        self.close_model: GeModel = load_graph(close_graph)
        self.open_index = DumpIndex.scan(open_data, iteration)
        self.close_index = DumpIndex.scan(close_data, close_iteration if close_iteration is not None else iteration)
        self.fused: list[FusedOp] = fused_ops(self.open_model)
        self.plans: list[PairPlan] = []
        self.outputs: dict[str, list[PairPlan]] = {}
        self.inputs: dict[str, list[PairPlan]] = {}
        for op in self.fused:
            self.outputs[op.name] = [self._plan_output(op, o) for o in op.outputs]
            self.inputs[op.name] = [self._plan_input(op, i) for i in op.inputs]
            self.plans += self.outputs[op.name] + self.inputs[op.name]

    # -- planning --------------------------------------------------------------------------
    def _lookup_origin(self, plan: PairPlan) -> None:
        if plan.origin_op is None:
            return
        if not self.close_model.has_op(plan.origin_op):
            plan.status.append("ORIGIN_NOT_FOUND")
            plan.message = f"original op {plan.origin_op} is not in the fusion-off graph"
        else:
            descs = self.close_model.ops[plan.origin_op].output_desc
            plan.origin_desc = descs[plan.origin_index] if 0 <= plan.origin_index < len(descs) else None
        plan.origin_file = self.close_index.lookup(plan.origin_op, "output", plan.origin_index)
        if plan.origin_file is None and "ORIGIN_NOT_FOUND" not in plan.status:
            plan.status.append("FILE_NOT_FOUND")
            plan.message = f"no fusion-off dump of {plan.origin_op} output {plan.origin_index}"

    def _note_duplicates(self, plan: PairPlan) -> None:
        for f in (plan.fused_file, plan.origin_file):
            if f is not None and f.candidates > 1 and "MULTIPLE_DUMPS" not in plan.status:
                plan.status.append("MULTIPLE_DUMPS")

    def _locate(self, plan: PairPlan, fused_file: DumpFile | None, what: str) -> PairPlan:
        """Attach both dump files to ``plan`` and note what is missing or duplicated."""
        plan.fused_file = fused_file
        self._lookup_origin(plan)
        if fused_file is None:
            plan.status.append("FILE_NOT_FOUND")
            plan.message = f"no fusion-on dump of {plan.fused_op} {what}"
        self._note_duplicates(plan)
        return plan

    @staticmethod
    def _skip(plan: PairPlan, code: str, message: str) -> PairPlan:
        plan.status.append(code)
        plan.message = message
        return plan

    def _plan_output(self, op: FusedOp, out) -> PairPlan:
        plan = PairPlan("output", op.name, op.type, out.index, out.origin_op, out.origin_index,
                        fused_desc=out.desc)  # fmt: skip
        if out.origin_op is None or out.origin_index is None:
            return self._skip(plan, "NO_MAPPING",
                              f"output {out.index} carries no _datadump_origin_name / _datadump_origin_output_index")  # fmt: skip
        return self._locate(plan, self.open_index.lookup(op.name, "output", out.index), f"output {out.index}")

    def _plan_input(self, op: FusedOp, inp) -> PairPlan:
        plan = PairPlan("input", op.name, op.type, inp.index, inp.origin_op, inp.origin_index,
                        fused_desc=inp.desc, src_op=inp.src_op)  # fmt: skip
        if is_data_source(inp.src_type):
            return self._skip(plan, "SKIPPED_CONST_DATA", f"fed by {inp.src_type} {inp.src_op}")
        if inp.origin_op is None or inp.origin_index is None:
            return self._skip(plan, "NO_MAPPING", f"producer {inp.src_op} output {inp.src_index} has no origin mapping")
        # The fused op's own input dump; without one, its producer's output dump holds the same data.
        fused_file = self.open_index.lookup(op.name, "input", inp.index) or self.open_index.lookup(
            inp.src_op, "output", inp.src_index
        )
        return self._locate(plan, fused_file, f"input {inp.index}")

    # -- computing -----------------------------------------------------------------------
    def sides(self, plan: PairPlan):
        """The two arrays to compare in one layout: ``(a, b, status codes, conversion note)``.

        A side's layout, dtype and shapes are its raw dump header's when it has one, else the
        graph's. A side in a storage layout (NC1HWC0, FRACTAL_NZ, ...) is first restored to its own
        origin layout and shape, padding cropped: when both sides are stored padded, both
        are restored (padding bytes are undefined). Then, if the two plain layouts still
        differ (NCHW vs NHWC), the fused side is permuted to the original side's layout.
        Sides needing nothing stay chunked file readers (never loaded whole).
        """
        fa, fb = plan.fused_file, plan.origin_file
        a, b = open_dump(fa), open_dump(fb)
        da, db = dump_desc(fa, plan.fused_desc), dump_desc(fb, plan.origin_desc)
        la, lb = _layout(da), _layout(db)
        notes: list[str] = []
        if _is_storage(la):
            a, la = _restore(load_dump(fa), da, lb, b.shape, notes, "fused")
        if _is_storage(lb):
            b, lb = _restore(load_dump(fb), db, la, a.shape, notes, "original")
        if needs_conversion(la, lb):
            src = a if isinstance(a, np.ndarray) else load_dump(fa)
            a = np.ascontiguousarray(convert_layout(src, la, lb, b.shape))
            notes.append(f"fused {la}->{lb}")
        status = ["FORMAT_CONVERTED"] if notes else []
        a, b = _as_declared(a, b, plan, notes)
        return a, b, status, "; ".join(notes) or None

    def compute(self, plan: PairPlan) -> Record:
        """The record of ``plan``: computed once, then cached. Thread-safe: a caller asking
        for a pair another thread is computing waits for that result instead of redoing it."""
        key = plan.key
        with self._lock:
            hit = self._cache.get(key)
            if hit is not None:
                return hit
            running = self._inflight.get(key)
            if running is None:
                self._inflight[key] = threading.Event()
        if running is not None:
            running.wait()
            return self.compute(plan)
        try:
            rec = self._compute(plan)
            with self._lock:
                self._cache[key] = rec
            return rec
        finally:
            with self._lock:
                self._inflight.pop(key).set()

    def _compute(self, plan: PairPlan) -> Record:
        if not plan.comparable:
            return Record(plan, None)
        try:
            a, b, status, note = self.sides(plan)
        except InputError as exc:
            return Record(plan, PairResult(status=[exc.code], message=str(exc)))
        except LayoutError as exc:
            return Record(plan, PairResult(status=[exc.code], message=str(exc)))
        res = compare_arrays(a, b, status=status, worst=self.worst)
        j = judge(res, self.thresholds)
        return Record(plan, res, j.verdict, j.reasons, j.score, note)

    def run(self, *, compare_input: bool = False, jobs: int = 1, amplification: float | None = None,
            progress=None) -> Report:  # fmt: skip
        """Compute every record (inputs too: localisation needs them) and localise."""
        from .localise import AMPLIFICATION, localise

        todo = [p for p in self.plans if p.comparable]
        jobs = max(1, jobs)
        done = 0

        def one(p: PairPlan) -> None:
            nonlocal done
            self.compute(p)
            if progress is not None:
                with self._lock:
                    done += 1
                    progress(done, len(todo))

        if jobs == 1:
            for p in todo:
                one(p)
        else:
            # Bigger tensors first, so the pool does not end on one long pair.
            todo.sort(key=lambda p: -_file_size(p.fused_file.path))
            with ThreadPoolExecutor(max_workers=jobs) as pool:
                list(pool.map(one, todo))
        loc = localise(self, AMPLIFICATION if amplification is None else amplification)
        shown = [self.compute(p) for p in self.plans if compare_input or p.kind == "output"]
        return Report(shown, loc, self)


def _file_size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def _as_declared(a, b, plan: PairPlan, notes: list[str]):
    """Both sides in the float format the graphs declare, when the dumps store it widened.

    msaccucmp saves bfloat16 tensors as float32: judged as float32 they would be measured
    against float32's epsilon and ULPs. Casting back is exact, and ULPs and thresholds are
    then those of the declared format.
    """
    declared = {numpy_dtype_name(d.dtype) if d else None for d in (plan.fused_desc, plan.origin_desc)}
    name = declared.pop() if len(declared) == 1 else None
    if name is None or not is_supported(name):
        return a, b
    fmt = float_format(name)
    out = []
    for side in (a, b):
        stored = np.dtype(side.dtype)
        if is_supported(stored) and float_format(stored).p > fmt.p:
            side = side.astype(fmt.dtype) if isinstance(side, np.ndarray) else CastView(side, fmt.dtype)
            notes.append(f"{'fused' if not out else 'original'} stored {stored}, compared as declared {name}")
        out.append(side)
    return out[0], out[1]


def _layout(desc: TensorDesc | None) -> str | None:
    """The layout with its sub-format (``FRACTAL_Z:16``): grouped layouts must not pass as plain."""
    return desc.full_layout if desc else None


def _is_storage(layout: str | None) -> bool:
    return layout is not None and layout.partition(":")[0].upper() not in PLAIN_LAYOUTS


def _restore(arr: np.ndarray, desc: TensorDesc | None, other_layout: str | None, other_shape,
             notes: list[str], side: str) -> tuple[np.ndarray, str]:  # fmt: skip
    """A storage-layout array in its origin layout (the other side's, if it has none recorded)."""
    layout = _layout(desc)
    if desc is not None and desc.origin_format:
        target, shape = desc.origin_format, desc.origin_shape or tuple(other_shape)
    else:
        target = other_layout if other_layout and not _is_storage(other_layout) else "ND"
        shape = tuple(other_shape)
    notes.append(f"{side} {layout}->{target}")
    return np.ascontiguousarray(convert_layout(arr, layout, target, shape)), target


@dataclass
class Report:
    records: list[Record]
    localisation: object
    comparison: DumpComparison

    def summary(self) -> dict:
        recs = self.records
        verdicts = {v: sum(1 for r in recs if r.verdict == v) for v in ("pass", "warn", "fail")}
        verdicts["none"] = sum(1 for r in recs if r.verdict is None)
        statuses: dict[str, int] = {}
        for r in recs:
            for s in r.status:
                statuses[s] = statuses.get(s, 0) + 1
        loc = self.localisation
        return {
            "fused_ops": len(self.comparison.fused),
            "records": len(recs),
            "verdicts": verdicts,
            "statuses": dict(sorted(statuses.items())),
            "introduced": [o.name for o in loc.introduced],
            "inherited": [o.name for o in loc.inherited],
            "unverified": [o.name for o in loc.unverified],
            "first_introduced": loc.first(),
            "look_first": loc.advice(),
            "thresholds": self.comparison.thresholds.to_json(),
        }

    def to_json(self) -> dict:
        return {"records": [r.to_json() for r in self.records], "summary": self.summary()}
