"""Replay the fused ops of a comparison that need it, and report with the evidence.

``which`` selects the ops: ``failing`` (the default: ops whose worst output verdict is
``fail`` or ``warn``), ``all``, or ``none``.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from ..dumps.verdict import worst_verdict
from .evidence import OpReplay, replay_op

CHOICES = ("failing", "all", "none")


def ops_to_replay(comparison, which: str) -> list[str]:
    """Names of the fused ops ``which`` selects, in topological order (records are computed)."""
    if which not in CHOICES:
        raise ValueError(f"replay must be one of {', '.join(CHOICES)}, not {which!r}")
    if which == "none":
        return []
    names = []
    for op in comparison.fused:
        verdict = worst_verdict(comparison.compute(p).verdict for p in comparison.outputs[op.name])
        if which == "all" or verdict in ("fail", "warn"):
            names.append(op.name)
    return names


def replay_ops(comparison, names: list[str], jobs: int = 1, progress=None) -> dict[str, OpReplay]:
    """:func:`~.evidence.replay_op` for each of ``names`` (on ``jobs`` threads); ``progress(done,
    total)`` after each op."""
    done = 0

    def one(name: str) -> OpReplay:
        nonlocal done
        result = replay_op(comparison, name)
        done += 1
        if progress is not None:
            progress(done, len(names))
        return result

    if jobs <= 1 or len(names) <= 1:
        results = [one(n) for n in names]
    else:
        # each thread takes the next op until none is left: a future per op cost more than
        # replaying an op that stops early (no inputs dumped), ~75 us against ~20
        order = iter(names)

        def work() -> list[OpReplay]:
            return [one(name) for name in order]  # next() of a list iterator is atomic

        with ThreadPoolExecutor(max_workers=jobs) as pool:
            parts = [pool.submit(work) for _ in range(min(jobs, len(names)))]
            # each thread's ops in the order it took them: put back in the order of names
            done_by_name = {r.name: r for part in parts for r in part.result()}
            results = [done_by_name[n] for n in names]
    return {r.name: r for r in results}


def run_with_replay(
    comparison,
    *,
    replay: str = "failing",
    compare_input: bool = False,
    jobs: int = 1,
    progress=None,
    known: dict[str, OpReplay] | None = None,
    cluster=None,
):
    """:meth:`~fpinspect.dumps.compare.DumpComparison.run`, with the selected ops replayed
    and their evidence given to the localisation and to each output record. Replays in
    ``known`` (the inspector's) are used as they are, and kept in the evidence. ``cluster``, a
    Dask client, computes the records on its workers (:mod:`fpinspect.dumps.cluster`)."""
    # every record first: which ops to replay depends on their verdicts
    comparison.compute_all(jobs=jobs, progress=progress, cluster=cluster)
    known = dict(known or {})
    todo = [n for n in ops_to_replay(comparison, replay) if n not in known]
    # an op left out has no evidence, which its finding then says (the threshold rule decided)
    evidence = {op.name: OpReplay(op.name, {}) for op in comparison.fused}
    evidence.update({**known, **replay_ops(comparison, todo, jobs)})
    report = comparison.run(compare_input=compare_input, jobs=jobs, evidence=evidence)
    return report.with_annotation(
        "replay",
        {(name, "output", i): ev.to_json() for name, r in evidence.items() for i, ev in r.outputs.items()},
    )
