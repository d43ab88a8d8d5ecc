"""Inductor's switches for a capture: which regions to leave unfused, the code that does it in the
user's own model, and a check that it brings the model's outputs back within eager's thresholds.

Inductor has no per-kernel fusion switch; what a user can do is keep a piece of the model out of
``torch.compile``. ``torch.compiler.disable`` on a submodule's ``forward`` does that: when the
compiled model calls it, Dynamo breaks the graph and runs the submodule eagerly, op by op. The
smallest submodule that holds every original op of a region is found from the module path each
traced op carries (``torch.export``'s ``nn_module_stack``: the chain of modules, outermost first,
whose ``forward`` called it). When that is only the model itself (a residual ``x + f(x)`` written
in the model's own ``forward``, for one), no submodule holds the region, and the capture's own
exclusion (``fpinspect capture --unfuse REGION``) is the switch.

The check runs the capture again with the regions unfused (:class:`~.confirm.Ablation`, as
``fpinspect confirm`` does); the switches are **verified** only when the final outputs then pass
eager's thresholds.
"""

from __future__ import annotations

import shlex
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path

from .confirm import Ablation, Outcome
from .eager import Progress
from .spec import CaptureSpec
from .trace import Op

#: Why a region is among those to leave unfused.
INTRODUCED = "introduced (compare)"
CONFIRMED = "confirmed (confirm.json)"
SMALLEST_SET = "in confirm's smallest set (confirm.json)"


@dataclass(frozen=True)
class Module:
    """A submodule of the model: its path for ``model.get_submodule`` and its class."""

    path: str
    type: str

    def to_json(self) -> dict:
        return {"path": self.path, "type": self.type}


def module_stack(op: Op) -> list[Module]:
    """The modules whose ``forward`` ran ``op``, outermost first, the model itself left out."""
    stack = (op.node.meta.get("nn_module_stack") if op.node is not None else None) or {}
    return [Module(path, kind) for path, kind in stack.values() if path]


def smallest_submodule(ops: list[Op]) -> Module | None:
    """The innermost submodule whose ``forward`` ran every op of ``ops``; ``None`` when only the
    model itself holds them all."""
    stacks = [module_stack(op) for op in ops]
    common: Module | None = None
    for level in zip(*stacks):
        if any(m.path != level[0].path for m in level):
            break
        common = level[0]
    return common


def disable_code(module: Module) -> str:
    """The lines that keep ``module`` out of ``torch.compile`` in a model named ``model``."""
    return (
        f"sub = model.get_submodule({module.path!r})  # {module.type}\n"
        "sub.forward = torch.compiler.disable(sub.forward)\n"
    )


@dataclass
class RegionSwitch:
    """One region to leave unfused: why, where its ops live, and the code that unfuses it."""

    index: int
    name: str
    reasons: list[str]
    ops: list[tuple[str, str]]  #: (original op, the innermost submodule path that ran it, "" for the model)
    submodule: Module | None
    also_eager: list[str] = field(default_factory=list)  #: other regions with ops in ``submodule``
    notes: list[str] = field(default_factory=list)

    @property
    def code(self) -> str | None:
        return None if self.submodule is None else disable_code(self.submodule)

    @property
    def side_effects(self) -> str | None:
        if self.submodule is None:
            return None
        others = ", ".join(self.also_eager) if self.also_eager else "none"
        return (
            f"all of {self.submodule.path} runs eagerly, its other ops too (other regions in it: {others}); "
            "torch.compile breaks the graph at its call, so nothing fuses across its boundary"
        )

    def to_json(self) -> dict:
        return {
            "name": self.name,
            "index": self.index,
            "reasons": list(self.reasons),
            "ops": [{"op": op, "module": path} for op, path in self.ops],
            "submodule": None if self.submodule is None else self.submodule.to_json(),
            "code": self.code,
            "side_effects": self.side_effects,
            "also_eager": list(self.also_eager),
            "notes": list(self.notes),
        }


@dataclass
class InductorSwitches:
    """What ``fpinspect switches CAPTURE_DIR --for inductor`` reports (``to_json`` is its JSON)."""

    regions: list[RegionSwitch]
    capture_command: str  #: the capture again with the regions unfused (its own exclusion)
    baseline: Outcome  #: the final outputs as captured
    check: Outcome | None  #: the final outputs with the regions unfused; None when there are none

    @property
    def verified(self) -> bool:
        return self.check is not None and self.check.verdict == "pass"

    def to_json(self) -> dict:
        return {
            "compiler": "inductor",
            "regions": [r.to_json() for r in self.regions],
            "unfuse": [r.name for r in self.regions],
            "capture_command": self.capture_command,
            "baseline": self.baseline.to_json(),
            "check": None
            if self.check is None
            else {"unfused": [r.name for r in self.regions], **self.check.to_json()},
            "verified": self.verified,
        }


def chosen_regions(
    names: dict[str, int], introduced: list[str], confirmation: dict
) -> tuple[dict[int, list[str]], list[str]]:
    """The regions to leave unfused, each with its reasons, from the comparison's ``introduced``
    fused ops and ``fpinspect confirm``'s last result (``confirmation``, ``{}`` for none): its
    confirmed regions and its smallest set. ``names`` maps region names to numbers. Also returns
    the names ``confirm.json`` gives that this capture has no region of (a stale result)."""
    chosen: dict[int, list[str]] = {}
    stale: list[str] = []

    def add(name: str, reason: str) -> None:
        if name in names:
            chosen.setdefault(names[name], []).append(reason)
        elif name not in stale:
            stale.append(name)

    for name in introduced:
        add(name, INTRODUCED)
    for r in confirmation.get("regions") or []:
        if isinstance(r, dict) and r.get("verdict") == "confirmed" and isinstance(r.get("name"), str):
            add(r["name"], CONFIRMED)
    for name in confirmation.get("minimal_set") or []:
        if isinstance(name, str):
            add(name, SMALLEST_SET)
    return dict(sorted(chosen.items())), stale


def capture_command(spec: CaptureSpec, run_dir: str, unfuse: list[str]) -> str:
    """The ``fpinspect capture`` command line that makes this capture again with ``unfuse`` left
    out, into a new folder of the current one (never ``run_dir``: the capture analysed stays)."""
    out = f"{Path(run_dir).resolve().name or 'capture'}_unfused"
    args = ["fpinspect", "capture", spec.model, "--out", out, "--dtype", spec.dtype]
    args += ["--device", spec.device, "--seed", str(spec.seed)]
    for injection in spec.inject:
        args += ["--inject", injection]
    for region in dict.fromkeys([*spec.unfuse, *unfuse]):
        args += ["--unfuse", region]
    return shlex.join(args)


def inductor_switches(
    ablation: Ablation,
    chosen: dict[int, list[str]],
    spec: CaptureSpec,
    run_dir: str,
    fusion_helps: Collection[str] = (),
) -> InductorSwitches:
    """The switches that leave the ``chosen`` regions (number -> reasons) unfused, checked by
    running the capture again without them; ``fusion_helps`` names regions ``confirm`` found
    closer to float64 fused."""
    compiled = {r.region.index: r for r in ablation.regions}
    out: list[RegionSwitch] = []
    for index, reasons in chosen.items():
        region = compiled[index]
        members = region.region.members
        stacks = [module_stack(op) for op in members]
        sub = smallest_submodule(members)
        switch = RegionSwitch(
            index,
            region.name,
            reasons,
            [(op.name, s[-1].path if s else "") for op, s in zip(members, stacks)],
            sub,
        )
        if sub is None:
            held = sorted({s[0].path if s else "the model's own forward" for s in stacks})
            switch.notes.append(
                f"no single submodule holds its ops (they run in {', '.join(held)}): "
                "leave it unfused with the capture's own exclusion"
            )
        else:
            switch.also_eager = [
                r.name
                for i, r in compiled.items()
                if i != index and any(_inside(op, sub) for op in r.region.members)
            ]
        if region.name in fusion_helps:
            switch.notes.append(
                "confirm found fusion helps here: unfused, the outputs move further from float64"
            )
        out.append(switch)
    check = ablation.outcome(list(chosen)) if chosen else None
    command = capture_command(spec, run_dir, [s.name for s in out])
    return InductorSwitches(out, command, ablation.outcome(()), check)


def capture_switches(
    run_dir: str, introduced: list[str], progress: Progress | None = None, model: str | None = None
) -> tuple[InductorSwitches, list[str]]:
    """Inductor's switches for the capture in ``run_dir``, as ``fpinspect switches --for
    inductor`` finds them: the regions to leave unfused (the comparison's ``introduced`` fused
    ops and what ``confirm.json`` proved), their code, and the capture run again without them;
    also the names ``confirm.json`` gives that this capture has no region of. ``model``: the model
    the user named (``--model``); a factory only capture.json names is refused
    (:meth:`~.spec.CaptureSpec.to_run`), never run. Raises :class:`CaptureError`."""
    from ..dumps.runs.runfolder import last_confirmation
    from .inject import Injection
    from .pipeline import capture_of

    spec = CaptureSpec.read(run_dir).to_run(model, run_dir)
    confirmation = last_confirmation(run_dir)
    injections = [Injection.parse(i) for i in spec.inject]
    cap = capture_of(spec, progress)
    ablation = Ablation(cap, injections, unfused=cap.unfused(spec.unfuse))
    names = {r.name: r.region.index for r in cap.regions}
    chosen, stale = chosen_regions(names, introduced, confirmation)
    helps = {
        r.get("name")
        for r in confirmation.get("regions") or []
        if isinstance(r, dict) and r.get("verdict") == "fusion helps"
    }
    return inductor_switches(ablation, chosen, spec, run_dir, helps), stale


def _inside(op: Op, module: Module) -> bool:
    return any(m.path == module.path for m in module_stack(op))
