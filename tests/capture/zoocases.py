"""The model zoo's cases, shared by its tests and ``benchmarks/bench_zoo.py``: a real
``transformers`` architecture captured once, written clean or with a planted ``scale`` fault,
compared with replay, and cross-checked by the ablation of ``fpinspect confirm``."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from capturecases import compare

from fpinspect.capture import Capture, Injection, load_model
from fpinspect.capture.confirm import Ablation, confirm, cross_check


def zoo_capture(model: str, dtype: str, seed: int = 0) -> Capture:
    module, inputs = load_model(model, seed)
    return Capture(module, inputs, dtype=dtype, name=model)


def floating_regions(cap: Capture) -> list[int]:
    """The regions a planted ``scale`` fault can change (some output is floating point)."""
    return [r.region.index for r in cap.regions if Injection("0", "scale").changes(cap.graph, r.region)]


def planted_regions(cap: Capture, which: str = "middle") -> list[int]:
    """Where the cases plant a fault: every floating region (``all``), the one in the middle
    (``middle``), or the floating region nearest the middle whose fault the ablation confirms at
    the model's outputs (``reaching``: after a normalisation a scale may all but vanish, and then
    the ablation rightly confirms nothing)."""
    regions = floating_regions(cap)
    if which == "all":
        return regions
    middle = len(regions) // 2
    if which == "middle":
        return [regions[middle]]
    for index in sorted(regions, key=lambda i: (abs(regions.index(i) - middle), i)):
        (result,) = confirm(Ablation(cap, [Injection(str(index), "scale")]), [index]).regions
        if result.verdict == "confirmed":
            return [index]
    return []


@dataclass
class ZooRow:
    planted: str | None
    introduced: list[str]
    more_accurate: list[str]
    inherited: list[str]
    confirmed: list[str] | None
    disagreements: list[str] | None
    inert: bool = False  #: the planted fault changed no value: nothing for the comparison to find

    @property
    def ok(self) -> bool:
        expected = [] if self.planted is None or self.inert else [self.planted]
        return self.introduced == expected and not self.disagreements

    def markdown(self, model: str, dtype: str, seed: int, seconds: float) -> str:
        def names(xs):
            return ", ".join(_short(x) for x in xs) or "-"

        first = _short(self.introduced[0]) if self.introduced else "-"
        agree = (
            "-"
            if self.disagreements is None
            else ("yes" if not self.disagreements else "; ".join(self.disagreements))
        )
        capture = "clean" if self.planted is None else f"scale on {_short(self.planted)}"
        capture += " (changed no value)" if self.inert else ""
        confirmed = "-" if self.confirmed is None else names(self.confirmed)
        return (
            f"| {model} | {dtype} | {seed} | {capture} | {len(self.introduced)} | {first} | "
            f"{len(self.more_accurate)} | {len(self.inherited)} | {confirmed} | {agree} | {seconds:.0f} |"
        )


def _short(name: str) -> str:
    head, _, _ = name.partition("_")
    parts = name.split("_")
    return "_".join(parts[:2]) if head == "autofuse" else name


class ZooCase:
    """One capture of ``cap`` under ``out``: clean (``planted`` None) or with ``scale`` on region
    number ``planted``."""

    def __init__(self, cap: Capture, out: Path, planted: int | None = None):
        self.cap, self.out, self.planted = cap, Path(out), planted
        self.injections = [] if planted is None else [Injection(str(planted), "scale")]
        self.pair = cap.write(self.out, injections=self.injections)
        #: the planted fault changed no value (a scale of an all-zero mask): nothing to find
        self.inert = bool(cap.inert)
        self.report = compare(self.pair)

    @property
    def planted_name(self) -> str | None:
        return None if self.planted is None else self.cap.regions[self.planted].name

    def run(self, confirm_all: bool = True) -> ZooRow:
        summary = self.report.summary()
        confirmed = disagreements = None
        if confirm_all:
            ablation = Ablation(self.cap, self.injections)
            result = confirm(ablation, [r.region.index for r in self.cap.regions])
            confirmed = [r.name for r in result.regions if r.verdict == "confirmed"]
            disagreements = [d.sentence() for d in cross_check(self.report.localisation, result)]
        return ZooRow(
            self.planted_name,
            summary.introduced,
            summary.more_accurate,
            summary.inherited,
            confirmed,
            disagreements,
            self.inert,
        )
