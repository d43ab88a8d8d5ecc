"""The replay of one fused output in words and numbers: fused, eager and float64, side by
side (:class:`~fpinspect.replay.evidence.ReplayEvidence`)."""

from __future__ import annotations

from textual.content import Content

from ...dumps.engine.verdict import format_score
from ...replay.evidence import ReplayEvidence, max_ulp
from . import styled

#: The conclusion's colour by the role the replay gives the output.
_TONE = {"introduced": "$text-error", "more_accurate": "$text-success", "inherited": styled.MUTED}


def replay_lines(ev: ReplayEvidence | None, replaying: bool, indent: str = "  ") -> list[Content]:
    """Lines of a pair card: the three-way numbers, then the conclusion in words."""
    label = Content.styled(f"{indent}replay  ", "bold")
    if replaying:
        return [label + Content.styled("replaying the original ops on this op's inputs…", "$text-accent")]
    if ev is None:
        return [label + Content.styled("not replayed (r replays this op on its own inputs)", styled.MUTED)]
    if not ev.usable:
        return [label + Content.styled(f"{ev.status.replace('_', ' ')}: {ev.reason}", "$text-warning")]
    # one phrase a line: a card wraps a long line anywhere, a phrase's words apart
    fused, versus = three_way_parts(ev)
    under = Content(indent + " " * 8)
    return [label + fused, under + versus, under + conclusion(ev)]


def standard(ev: ReplayEvidence) -> Content:
    """``msprobe's benchmark standard (L2, LayerNorm): fail — MaxRelErr 3.1x eager's (limit 2)``."""
    s = ev.standard
    head = f"msprobe's benchmark standard ({s.level}{', ' + s.level_from if s.level_from else ''}): "
    if s.verdict is None:
        return Content.styled(head + f"not applicable ({s.reason})", styled.MUTED)
    failing = s.failing
    detail = (
        ", ".join(f"{m} {s.ratio(m):.3g}x eager's" for m in failing)
        if failing
        else "every ratio within its limit"
    )
    return Content.assemble((head, styled.MUTED), styled.verdict(s.verdict), (f" — {detail}", styled.MUTED))


def three_way_parts(ev: ReplayEvidence) -> tuple[Content, Content]:
    """``fused 0.21 eps · eager 4.6 eps from fp64`` and ``fused vs its eager replay 4.6 eps fail · fidelity 0 ULP``."""
    return (
        Content.assemble(
            "fused ",
            (format_score(ev.red("fused_vs_fp64")), "bold"),
            " · eager ",
            (format_score(ev.red("eager_vs_fp64")), "bold"),
            (" from fp64", styled.MUTED),
        ),
        Content.assemble(
            "fused vs its eager replay ",
            (format_score(ev.red("fused_vs_replay")), "bold"),
            " ",
            styled.verdict(ev.verdict),
            (f" · fidelity {max_ulp(ev.results.get('fidelity'))} ULP", styled.MUTED),
        ),
    )


def three_way(ev: ReplayEvidence) -> Content:
    """``fused 0.21 eps · eager 4.6 eps from fp64 · fused vs its eager replay 4.6 eps fail · fidelity 0 ULP``."""
    fused, versus = three_way_parts(ev)
    return fused + Content.styled(" · ", styled.MUTED) + versus


def conclusion(ev: ReplayEvidence) -> Content:
    return Content.styled(ev.conclusion(), _TONE.get(ev.role or "", styled.MUTED))
