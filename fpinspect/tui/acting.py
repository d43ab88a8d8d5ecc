"""What the inspector's action keys do to the highlighted fused op beyond the screen: its
switches, its repro bundle, the run's HTML report, a baseline in the results store. Each one
calls the function its command calls (``fpinspect switches``, ``repro``, ``report``,
``compare --record`` with ``baseline tag``) and returns the sentence to show; those that read
dumps run on a worker thread. No widget here.

Files go to a folder the user picks, by default beside the run (:func:`beside_run`); never
inside the run, nor inside the installed package (whose bundled samples the inspector opens).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..dumps.formats.fusion import fused_ops
from ..dumps.formats.graph import GeModel
from ..dumps.runs.leafgraphs import GraphChooser
from ..dumps.runs.runtree import Scope
from ..dumps.runs.sources import Sources
from ..dumps.switches import OpSwitches, autofuse_flags, autofuse_switches
from ..inspection.leaves import inspect_leaves
from ..inspection.pipeline import Inspection
from ..inspection.settings import CompareSettings
from ..replay.repro import ReproError, write_bundle
from ..reports.html import compared_page, compared_run_page
from ..reports.record import compare_settings, record_compare
from ..store import ResultsDB

#: the installed package: its bundled samples are opened, never written into
PACKAGE = Path(__file__).resolve().parents[1]


class ActionRefused(Exception):
    """An output place the action will not use, in one sentence."""


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def beside_run(sources: Sources) -> Path:
    """Where the actions write by default: the folder holding the run (the folder of its data
    folders); the working folder for a run inside the package (a bundled sample)."""
    parent = Path(sources.data_root).resolve().parent
    return Path.cwd() if _inside(parent, PACKAGE) else parent


def shown(path: str | os.PathLike) -> str:
    """``path`` as a panel shows it: relative to the working folder when inside it (short)."""
    absolute = Path(path).resolve()
    cwd = Path.cwd().resolve()
    return os.path.relpath(absolute, cwd) if _inside(absolute, cwd) else str(absolute)


def check_place(sources: Sources, path: str | os.PathLike) -> Path:
    """``path`` resolved, or :class:`ActionRefused` where it is inside the run or the package."""
    place = Path(path).expanduser().resolve()
    run = Path(sources.data_root).resolve()
    for folder, what in ((run, f"the run {run}"), (PACKAGE, f"the fpinspect package {PACKAGE}")):
        if _inside(place, folder):
            raise ActionRefused(f"{place} is inside {what}: choose a folder outside it.")
    return place


def new_folder(where: Path, stem: str) -> Path:
    """``where/stem``, or ``stem-2``, ``stem-3``... : a name not taken yet."""
    path, n = where / stem, 1
    while path.exists():
        n += 1
        path = where / f"{stem}-{n}"
    return path


def _inspection(sources: Sources, settings: CompareSettings) -> Inspection:
    """The run inspected anew, as the commands inspect it (the screen's own inspection belongs
    to its sweep), with the screen's ``settings``."""
    return Inspection.load(
        (sources.open_graph, sources.close_graph),
        {"open_data": sources.open_data, "close_data": sources.close_data},
        settings,
    )


# -- switches -------------------------------------------------------------------------------------
@dataclass
class Switches:
    """The AutoFuse switches of one fused op and the ``AUTOFUSE_FLAGS`` value they make."""

    op: OpSwitches
    flags: str

    @property
    def export_line(self) -> str:
        return f'export AUTOFUSE_FLAGS="{self.flags}"' if self.flags else ""

    def text(self) -> str:
        """The switches as ``fpinspect switches`` lists them, for a file or the clipboard."""
        o = self.op
        lines = [f"{o.op} ({o.type}: {', '.join(o.original_types) or 'original types not recorded'})"]
        for s in o.switches:
            lines += [f"  {s.setting}", f"      {s.removes}"]
            if s.also:
                lines.append(f"      also touches: {', '.join(s.also)}")
        lines += [f"  note: {note}" for note in o.notes]
        if self.export_line:
            lines += ["", self.export_line]
        return "\n".join(lines) + "\n"


def op_switches(model: GeModel, name: str) -> Switches:
    """The AutoFuse switches of fused op ``name`` of ``model`` (the fusion-on graph), as
    ``fpinspect switches`` finds them: what else each touches among every fused op of the graph."""
    every = fused_ops(model)
    op = next((o for o in every if o.name == name), None)
    if op is None:
        raise ActionRefused(f"{name} is not a fused op of the graph: no fusion switch concerns it")
    found = autofuse_switches(op, every)
    return Switches(found, autofuse_flags([found]))


# -- files ------------------------------------------------------------------------------------------
def write_repro(sources: Sources, settings: CompareSettings, name: str, out: Path) -> str:
    """The repro bundle of fused op ``name`` in the new folder ``out`` (for a capture of a
    built-in demo, with ``repro_torch.py`` too): what it holds and the command that runs it.
    Raises the bundle's ``ReproError`` or the run's ``InputError``."""
    manifest = write_bundle(_inspection(sources, settings).comparison, name, out)
    scripts = [f"python {out / 'repro.py'}"]
    note = ""
    if is_capture(sources):
        try:
            _torch_script(sources.run_dir, manifest, out)
            scripts.append(f"python {out / 'repro_torch.py'}")
        except ActionRefused as exc:
            note = f" No repro_torch.py: {str(exc).rstrip('.')}."
    return (
        f"Wrote the repro bundle of {name} to {out}: {len(manifest['ops'])} original ops, "
        f"{len(manifest['outputs'])} outputs. Run it: {' or '.join(scripts)}.{note}"
    )


def _torch_script(run_dir: str, manifest: dict, out: Path) -> None:
    """The capture's ``repro_torch.py`` in the bundle, as ``fpinspect repro`` writes it; only for a
    built-in demo (tracing the model again imports it). :class:`ActionRefused` says why not."""
    from ..capture.errors import CaptureError

    command = f"fpinspect repro {run_dir} {manifest['op']} --out {out} writes it from the command line"
    _demo_spec(run_dir, f"fpinspect repro {run_dir} {manifest['op']} --out {out}")
    try:
        from ..capture.repro_torch import write_torch_script
    except ModuleNotFoundError as exc:
        raise ActionRefused(f"it needs PyTorch ({exc.name} is not installed); {command}") from None
    try:
        write_torch_script(run_dir, manifest, out)
    except (CaptureError, ReproError) as exc:
        raise ActionRefused(str(exc)) from None


def write_report(sources: Sources, settings: CompareSettings, out: Path) -> str:
    """The run's HTML report (``fpinspect report``) written to ``out``."""
    page = compared_page(_inspection(sources, settings), f"fpinspect: {sources.name}")
    out.write_text(page, encoding="utf-8")
    return f"Wrote the HTML report of {sources.name} to {out}"


def write_run_report(sources: Sources, scope: Scope, settings: CompareSettings, out: Path) -> str:
    """The whole run's HTML report (``fpinspect report RUN``: the rank × graph grid, then each
    leaf) of the leaf pairs of ``scope``, compared now, written to ``out``."""
    choosers = GraphChooser(sources.open_graph, "fusion-on"), GraphChooser(sources.close_graph, "fusion-off")
    runs = inspect_leaves(scope.compared, choosers, settings, compare_input=True)
    out.write_text(compared_run_page(scope, runs, f"fpinspect: {sources.name}"), encoding="utf-8")
    return (
        f"Wrote the HTML report of the whole run {sources.name} ({len(scope.compared)} leaf pairs) to {out}"
    )


def record_baseline(sources: Sources, settings: CompareSettings, tag: str, db: Path | None = None) -> str:
    """The run compared as ``fpinspect compare --record`` does (same settings, so either checks
    against the other), recorded in the results store and tagged as baseline ``tag``."""
    inspection = _inspection(sources, settings)
    report = inspection.report()
    cmp = inspection.comparison
    recorded = compare_settings(
        cmp.thresholds.to_json(),
        cmp.amplification,
        settings.replay,
        settings.fused_types or (),
        settings.compare_unfused,
    )
    inputs = {
        "af_open_graph": sources.open_graph,
        "af_close_graph": sources.close_graph,
        "af_open_data": sources.open_data,
        "af_close_data": sources.close_data,
    }
    with ResultsDB(db) as store:
        run_id = record_compare(store, report, recorded, inputs)
        store.tag(tag, [run_id])
        path = store.path
    return (
        f"Recorded this comparison as run {run_id} in {path} and tagged it {tag}: "
        f"fpinspect baseline check --against {tag} checks a later run."
    )


# -- confirm ----------------------------------------------------------------------------------------
class Cancelled(Exception):
    """The user cancelled the action between two model runs."""


def is_capture(sources: Sources) -> bool:
    """Whether the run is a folder written by ``fpinspect capture`` (``confirm`` can run it again)."""
    from ..capture.spec import FILE

    return sources.run_dir is not None and os.path.isfile(os.path.join(sources.run_dir, FILE))


def _demo_spec(run_dir: str, command: str):
    """The capture's spec to run again (:meth:`~..capture.spec.CaptureSpec.to_run`), or
    :class:`ActionRefused` where its model is not a built-in demo: a capture folder's
    ``capture.json`` may name any module, and the inspector never imports one (``command`` runs
    it from the command line)."""
    from ..capture.errors import CaptureError
    from ..capture.spec import CaptureSpec

    try:
        spec = CaptureSpec.read(run_dir)
    except CaptureError as exc:
        raise ActionRefused(str(exc)) from None
    try:
        return spec.to_run(None, run_dir)
    except CaptureError:
        raise ActionRefused(
            f"{run_dir} captured {spec.model}, a model of your own, and the inspector imports no module "
            f"a capture folder names: run {command} from the command line"
        ) from None


def _listening(tell: Callable[[str], None], stop: Callable[[], bool]):
    """``heard(line)`` and a capture's ``progress(stage, done, total)``: each tells, and ends the
    work with :class:`Cancelled` once ``stop()`` is true."""

    def heard(line: str) -> None:
        if stop():
            raise Cancelled
        tell(line)

    def progress(stage: str, done: int, total: int) -> None:
        heard(f"{stage} {done}/{total}")

    return heard, progress


def inductor_check(
    run_dir: str, introduced: list[str], *, tell: Callable[[str], None], stop: Callable[[], bool]
) -> list[str]:
    """Inductor's switches for the capture in ``run_dir`` (``fpinspect switches --for
    inductor``: the regions to leave unfused, the code, and the capture run again without them),
    as the switches panel lists them. ``tell`` and ``stop`` as for :func:`confirm_op`."""
    from ..capture.errors import CaptureError

    command = f"fpinspect switches {run_dir} --for inductor"
    _demo_spec(run_dir, command)
    try:
        from ..capture.switches import capture_switches
    except ModuleNotFoundError as exc:
        raise ActionRefused(
            f"it needs PyTorch ({exc.name} is not installed); {command} says how to install it"
        ) from None
    _, progress = _listening(tell, stop)
    try:
        result, stale = capture_switches(run_dir, introduced, progress)
    except CaptureError as exc:
        raise ActionRefused(str(exc)) from None
    lines = (
        [f"note: confirm.json names {', '.join(stale)}, which this capture has no region of"] if stale else []
    )
    if not result.regions:
        return [
            *lines,
            "no fused op introduced an error and confirm.json confirms none: nothing to leave unfused",
        ]
    for r in result.regions:
        lines.append(f"{r.name} (region {r.index}): {'; '.join(r.reasons)}")
        if r.submodule is not None:
            lines.append(
                f"torch.compiler.disable on {r.submodule.path} ({r.submodule.type}), before torch.compile:"
            )
            lines += [f"    {line}" for line in r.code.splitlines()]
            lines.append(f"side effects: {r.side_effects}")
        lines += [f"note: {note}" for note in r.notes]
    lines.append(f"the capture's own exclusion: {result.capture_command}")
    c = result.check
    unfused = ", ".join(r.name for r in result.regions)
    lines.append(
        f"rerun with {unfused} unfused: final outputs {c.vs_eager:.3g} eps from eager ({c.verdict}), "
        f"{c.vs_fp64:.3g} from float64 -> "
        + (
            "verified: within eager's thresholds"
            if result.verified
            else "NOT verified: still beyond eager's thresholds"
        )
    )
    return lines


def confirm_op(
    run_dir: str,
    name: str,
    *,
    bisect: bool,
    tell: Callable[[str], None],
    stop: Callable[[], bool],
) -> str:
    """``fpinspect confirm`` of the capture in ``run_dir``: fused op ``name``'s region left
    unfused alone (``bisect``: also a smallest set of every region whose unfusing fixes the
    outputs), its result kept beside the capture (``confirm.json``). ``tell(line)`` hears each
    stage and model run; ``stop()`` true between two of them ends it with :class:`Cancelled`.
    Only a built-in demo is run: a capture folder's ``capture.json`` may name any module, and
    opening a folder must never import it."""
    from ..capture.errors import CaptureError
    from ..dumps.runs.runfolder import keep_confirmation

    if _inside(Path(run_dir).resolve(), PACKAGE):
        raise ActionRefused(
            f"{run_dir} is inside the fpinspect package (a bundled sample), and confirm keeps its result "
            "beside the capture: copy the folder elsewhere and open the copy"
        )
    spec = _demo_spec(run_dir, f"fpinspect confirm {run_dir}")
    try:
        from ..capture.confirm import Ablation, confirm
        from ..capture.inject import Injection
        from ..capture.pipeline import capture_of
    except ModuleNotFoundError as exc:
        raise ActionRefused(
            f"confirm runs the captured model again with PyTorch, and {exc.name} is not installed "
            f"(fpinspect confirm {run_dir} says how to install it)"
        ) from None
    heard, progress = _listening(tell, stop)

    try:
        injections = [Injection.parse(i) for i in spec.inject]
        cap = capture_of(spec, progress)
        regions = {r.name: r.region.index for r in cap.regions}
        if name not in regions:
            raise ActionRefused(f"the capture has no region {name} (regions: {', '.join(regions)})")
        ablation = Ablation(cap, injections, unfused=cap.unfused(spec.unfuse))
        chosen = list(regions.values()) if bisect else [regions[name]]
        result = confirm(ablation, chosen, bisect=bisect, log=heard)
    except CaptureError as exc:
        raise ActionRefused(str(exc)) from None
    if stop():  # cancelled during the last model run: nothing is kept
        raise Cancelled
    path = keep_confirmation(run_dir, result.to_json())
    mine = next((r for r in result.regions if r.name == name), None)
    verdict = f"{name}: {mine.verdict}" if mine is not None else ""
    smallest = ""
    if bisect:
        smallest = "smallest set whose unfusing fixes the outputs: " + (
            "none of the regions"
            if result.minimal_set is None
            else ", ".join(result.minimal_set) or "none needed"
        )
    said = "; ".join(p for p in (verdict, smallest) if p)
    return f"Confirm: {said} ({result.runs} model runs, {result.seconds:.1f} s); kept in {path}"
