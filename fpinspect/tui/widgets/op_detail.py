"""The detail of the highlighted fused op: its original ops and how they were connected in
the fusion-off graph, its neighbours in the fusion-on graph, and one card per compared pair;
when every op is listed, also its tensors, dump files and attributes."""

from __future__ import annotations

import os

from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.widgets import Static

from ...dumps import PairPlan, Record
from ...dumps.engine.verdict import format_score
from ...replay.evidence import ReplayEvidence
from ...reports.format import fmt_num
from ..model import OriginalOp, RunView
from . import styled
from .hanging import Hanging
from .in_place import update_in_place
from .replay_view import replay_lines

#: Neighbours named before "+N more".
_NAMES = 4


def _names(names: list[str]) -> str:
    more = f" +{len(names) - _NAMES} more" if len(names) > _NAMES else ""
    return ", ".join(names[:_NAMES]) + more if names else "none"


def _neighbours(pairs: list[tuple[str, bool]]) -> Content:
    """Neighbour names; those inside the same fused op in the accent colour."""
    return Content(", ").join(
        Content.styled(n, "$text-accent" if inside else styled.MUTED) for n, inside in pairs
    )


def _original(o: OriginalOp, width: int, type_width: int) -> Content:
    line = Content.assemble(
        ("  " + o.name.ljust(width), "bold"), "  ", (o.type.ljust(type_width), styled.MUTED)
    )
    if o.present is False:
        return line + Content.styled("  not in the fusion-off graph", "$text-warning")
    if o.inputs:
        line += Content("  ← ") + _neighbours(o.inputs)
    if o.outputs:
        line += Content("  → ") + _neighbours(o.outputs)
    return line


def pair_content(
    plan: PairPlan,
    record: Record | None,
    pending: bool,
    replay: ReplayEvidence | None = None,
    replaying: bool = False,
) -> Content:
    """One pair: what is compared with what, its verdict and metrics, its replay (outputs of a
    comparison), files and layouts."""
    p = plan
    origin = f"{p.origin_op}:{p.origin_index}" if p.origin_op else "no original mapped"
    if p.kind == "output":
        head = Content.assemble((f"output {p.fused_index}", "bold"), f" → {origin}")
    else:
        head = Content.assemble((f"input {p.fused_index}", "bold"), f" ← {p.src_op}  ↔ {origin}")
    lines = [head]
    result = record.result if record else None
    if pending:
        lines[0] += Content.styled("   computing…", "$text-accent")
    elif record is not None:
        lines[0] += Content("   ") + styled.verdict(record.verdict)
        if result is not None and result.compared:
            ulp = result.metrics.errors.ulp
            lines[0] += Content(f"  {format_score(record.score)}")
            lines.append(Content(f"  ULP max {fmt_num(ulp.max)}  cos {fmt_num(result.cosine, 'cos')}"))
        # one phrase a line: a card wraps a long line anywhere, a phrase's words apart
        lines += [Content.styled("  " + reason, styled.MUTED) for reason in record.reasons]
        if p.kind == "output" and result is not None and result.compared:
            lines += replay_lines(replay, replaying)
    if "SKIPPED_CONST_DATA" not in p.status:  # data and constants have nothing to show
        sides = [("on ", p.fused_file, p.fused_desc), ("off", p.origin_file, p.origin_desc)]
        for side, f, desc in sides if p.origin_desc or p.origin_file else sides[:1]:
            name = os.path.basename(f.path) if f else "no dump file"
            lines.append(Content.assemble(f"  {side}  ", (styled.tensor(desc), styled.MUTED)))
            lines.append(Content.styled(f"  {name}", "" if f else "$text-warning"))
    codes = record.status if record else list(p.status)
    tail = Content("  ") + styled.status(codes) if codes else Content("")
    if record is not None and record.conversion:
        tail += Content(f"  converted: {record.conversion}")
    message = p.message or (result.message if result else None)
    if message:
        tail += Content.styled(f"  {message}", styled.MUTED)
    if tail:
        lines.append(tail)
    return Content("\n").join(lines)


#: Characters of an attribute value shown before "…".
_VALUE = 96


def _value(value) -> str:
    text = repr(value) if not isinstance(value, str) else value
    return text if len(text) <= _VALUE else text[: _VALUE - 1] + "…"


def op_info_content(insp: RunView, name: str) -> Content:
    """Op ``name`` as the graph records it: each input (its producer) and output with its
    tensor description and fusion-on dump file, then every attribute."""
    op = insp.op_info(name)

    def tensor_line(label: str, io: str, index: int, desc) -> Content:
        f = insp.dump_of(name, io, index)
        dump = os.path.basename(f.path) if f else ("no dump file" if insp.open_index is not None else "")
        origin = (
            f"  origin {desc.origin_format} {list(desc.origin_shape)}" if desc and desc.origin_shape else ""
        )
        return Content.assemble(f"  {label}  ", (styled.tensor(desc) + origin, styled.MUTED), "  ", dump)

    lines = [Content.styled(f"Inputs ({len(op.inputs)})", "bold")]
    for k, ref in enumerate(op.inputs):
        source = f"← {ref.op}:{ref.index}" if ref is not None else "(not connected)"
        lines.append(
            tensor_line(f"{k} {source}", "input", k, op.input_desc[k] if k < len(op.input_desc) else None)
        )
    if op.control_inputs:
        lines.append(Content.styled(f"  control: {_names(op.control_inputs)}", styled.MUTED))
    lines.append(Content.styled(f"Outputs ({len(op.output_desc)})", "bold"))
    lines += [tensor_line(str(i), "output", i, d) for i, d in enumerate(op.output_desc)]
    lines.append(Content.styled(f"Attributes ({len(op.attrs)})  graph {op.graph}", "bold"))
    lines += [
        Content.assemble(f"  {key} ", (_value(value), styled.MUTED))
        for key, value in sorted(op.attrs.items())
    ]
    return Content("\n").join(lines)


class PairCard(Static, can_focus=True):
    """One output or input pair of the detailed op; ``enter`` drills down into it."""

    DEFAULT_CSS = """
    PairCard {
        padding: 0 1;
        margin-top: 1;
        border-left: outer $panel-lighten-2;
        &:focus { border-left: outer $accent; background: $boost; }
        &.-picked { border-left: thick $accent; }
    }
    """
    BINDINGS = [Binding("enter", "choose", "Drill down", tooltip="Open this pair", id="drill-pair")]

    class Chosen(Message):
        def __init__(self, plan: PairPlan) -> None:
            super().__init__()
            self.plan = plan

    def __init__(
        self,
        plan: PairPlan,
        record: Record | None,
        pending: bool,
        replay: ReplayEvidence | None = None,
        replaying: bool = False,
        picked: bool = False,
    ) -> None:
        super().__init__(
            Hanging.of(pair_content(plan, record, pending, replay, replaying)), classes="-picked" * picked
        )
        self.plan = plan

    def show(
        self,
        record: Record | None,
        pending: bool,
        plan: PairPlan | None = None,
        replay: ReplayEvidence | None = None,
        replaying: bool = False,
    ) -> None:
        """Show ``plan`` (default: the card's own) with its record and replay."""
        self.plan = plan or self.plan
        update_in_place(self, Hanging.of(pair_content(self.plan, record, pending, replay, replaying)))

    def action_choose(self) -> None:
        self.post_message(self.Chosen(self.plan))


class OpDetail(VerticalScroll):
    DEFAULT_CSS = """
    OpDetail {
        padding: 0 1;
        & > #detail-originals, & > #detail-links, & > #detail-info { margin-top: 1; }
        & > #detail-info { display: none; }
        /* as tall as its cards (a Vertical is 1fr and clips: the op's tensors below cut them off) */
        & > #detail-pairs { height: auto; }
    }
    """

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.op_name: str | None = None
        #: the pair of :attr:`op_name` highlighted with ``[`` / ``]`` (None: the default one)
        self._picked: tuple | None = None

    def compose(self):
        yield Static(id="detail-head")
        yield Static(id="detail-originals")
        yield Static(id="detail-links")
        yield Vertical(id="detail-pairs")
        yield Static(id="detail-info")  # every op listed: its tensors, dumps and attributes

    @property
    def cards(self) -> list[PairCard]:
        return list(self.query_one("#detail-pairs").query_children(PairCard))

    def show(self, insp: RunView, name: str | None) -> None:
        """Detail op ``name`` (None: nothing is listed)."""
        if name is None:
            self.op_name = None
            self.query_one("#detail-head", Static).update(
                "No op is listed." if insp.showing_all else "No fused op is listed."
            )
            for part in ("#detail-originals", "#detail-links", "#detail-info"):
                self.query_one(part, Static).update("")
            self.query_one("#detail-pairs").remove_children()
            self.can_focus = True
            return
        row = insp.by_name[name]
        finding = insp.findings.get(name)
        head = Content.assemble(
            (name, "bold"),
            "  ",
            (row.op.type, styled.MUTED),
            (f"  #{row.position + 1} of {len(insp.rows)}", styled.MUTED),
        )
        pending = row.verdict is None and insp.pending(name)
        state = Content("\n") + (
            Content.styled("computing…", "$text-accent") if pending else styled.verdict(row.verdict)
        )
        if finding is not None and finding.role:
            state += Content(" · ") + styled.role(finding.role)
        if finding is not None and finding.reason:
            state += Content(f": {finding.reason}")
        confirmed = insp.confirmed.get(name)
        if confirmed is not None:
            state += Content("\n") + Content.styled(
                _ablation_line(confirmed, finding),
                "$text-error" if confirmed.get("verdict") == "confirmed" else styled.MUTED,
            )
        # in place: moving along the list mostly shows parts of the same heights (no layout then)
        update_in_place(self.query_one("#detail-head", Static), head + state)
        update_in_place(self.query_one("#detail-originals", Static), self._originals(insp, name))
        links = Content.assemble(
            ("producers ", styled.MUTED),
            _names(insp.producers(name)),
            ("  (p)", styled.MUTED),
            ("\nconsumers ", styled.MUTED),
            _names(insp.consumers(name)),
            ("  (c)", styled.MUTED),
        )
        update_in_place(self.query_one("#detail-links", Static), links)
        self._show_pairs(insp, name)
        info = self.query_one("#detail-info", Static)
        info.display = insp.showing_all
        if insp.showing_all:
            update_in_place(info, op_info_content(insp, name))

    def _originals(self, insp: RunView, name: str) -> Content:
        originals = insp.originals(name)
        where = "in the fusion-off graph" if insp.close_model is not None else "(no fusion-off graph loaded)"
        title = Content.styled(f"Original ops ({len(originals)}) {where}", "bold")
        width = max((len(o.name) for o in originals), default=0)
        type_width = max((len(o.type) for o in originals), default=0)
        return Content("\n").join([title, *(_original(o, width, type_width) for o in originals)])

    def picked(self, insp: RunView, name: str) -> PairPlan | None:
        """The pair of op ``name`` that ``enter`` opens: the one highlighted with ``[`` / ``]``,
        else :meth:`~..model.RunView.focus_plan` (the worst output)."""
        chosen = [p for p in insp.plans(name) if p.key == self._picked] if name == self.op_name else []
        return chosen[0] if chosen else insp.focus_plan(name)

    def step_pick(self, insp: RunView, step: int) -> None:
        """Highlight the pair ``step`` cards after the highlighted one (wrapping round)."""
        plans = insp.plans(self.op_name) if self.op_name is not None else []
        if not plans:
            return
        keys = [p.key for p in plans]
        self._picked = keys[(keys.index(self.picked(insp, self.op_name).key) + step) % len(keys)]
        for card in self.cards:
            card.set_class(card.plan.key == self._picked, "-picked")
            if card.plan.key == self._picked:
                card.scroll_visible(animate=False)

    def _show_pairs(self, insp: RunView, name: str) -> None:
        """One card per pair; cards already mounted are reused (moving along the list then
        re-renders text instead of rebuilding widgets)."""
        if name != self.op_name:
            self._picked = None
        plans = insp.plans(name)
        pending = {p.key for p in insp.pending(name)}
        cards = self.cards
        replaying = name in insp.replaying
        self.op_name, before = name, self.op_name
        picked = getattr(self.picked(insp, name), "key", None)
        for card, plan in zip(cards, plans):
            card.show(insp.record(plan), plan.key in pending, plan, insp.replay(plan), replaying)
            card.set_class(plan.key == picked, "-picked")
        for card in cards[len(plans) :]:
            card.remove()
        if len(plans) > len(cards):
            self.query_one("#detail-pairs").mount_all(
                PairCard(p, insp.record(p), p.key in pending, insp.replay(p), replaying, p.key == picked)
                for p in plans[len(cards) :]
            )
        # focusable only without cards: tab from the list then lands on a card enter opens
        self.can_focus = not plans
        if name != before:
            self.scroll_home(animate=False)


def _ablation_line(confirmed: dict, finding) -> str:
    """What ``fpinspect confirm`` (kept in confirm.json) says of this op's region at the model's
    outputs, and whether that agrees with the comparison's finding."""
    verdict = confirmed.get("verdict")
    only, removed = confirmed.get("only"), confirmed.get("removed")
    if isinstance(only, dict) and isinstance(only.get("final_vs_eager"), (int, float)):
        moved = f"fused alone it moves them {only['final_vs_eager']:.3g} eps from eager"
    else:  # a confirm.json written before regions were run fused alone
        share = f", removing {max(removed, 0):.0%} of the deviation" if isinstance(removed, float) else ""
        moved = f"unfused alone{share}"
    line = f"{verdict} at the model's outputs (fpinspect confirm: {moved})"
    role = finding.role if finding is not None else None
    if isinstance(verdict, str) and (role == "introduced") != (verdict == "confirmed"):
        said = (role or (finding.verdict if finding is not None else None) or "not compared").replace(
            "_", " "
        )
        line += f"; the comparison says {said}"
    return line
