"""The acceptance matrix of #9: standard blocks built from ``torch.nn``, captured clean and
with one planted regression, judged by ``fpinspect compare --replay all --format json``.

A clean capture must introduce nothing, and every fused op of it must replay faithfully
from the attributes capture writes; the same block with ``--inject`` must name exactly the
injected region as introduced; and the cancellation chain, where the fused kernel is the
more accurate side, must be ``more_accurate``, not introduced.
"""

import pytest
from capturecases import compare

pytestmark = pytest.mark.slow  # each block compiles its regions with Inductor once per session

#: Block -> the regression planted in it: a region mid-graph, so errors flow downstream.
BLOCKS = {
    "encoder": "1=bf16",  # nn.TransformerEncoderLayer: the feed-forward ReLU
    "conv": "1=bf16",  # conv + batch norm: the second batch norm, residual add and SiLU
    "rotary": "0=bf16",  # RMSNorm + linear + rotary embedding: the RMSNorm
    "mlp": "1=bf16",  # LayerNorm + MLP + softmax: the GELU
}


@pytest.fixture(scope="session")
def judged(demo_capture, tmp_path_factory):
    """``judged(block, injection)``: the compare JSON of one capture pair (cached)."""
    from fpinspect.capture import Injection

    done = {}

    def get(block: str, injection: str | None):
        if (block, injection) not in done:
            out = tmp_path_factory.mktemp(f"{block}_{'clean' if injection is None else 'injected'}")
            planted = None if injection is None else Injection.parse(injection)
            pair = demo_capture(block).write(out, injections=[planted] if planted else [])
            done[block, injection] = compare(pair, replay="all").to_json()
        return done[block, injection]

    return get


def _why(report: dict) -> list:
    return [
        (r["fused_op"], r["kind"], r["fused_index"], r["verdict"], r.get("reasons"))
        for r in report["records"]
        if r["verdict"] not in (None, "pass")
    ]


@pytest.mark.parametrize("block", BLOCKS)
def test_a_clean_block_introduces_nothing(block, judged):
    report = judged(block, None)
    assert report["summary"]["introduced"] == [], _why(report)


@pytest.mark.parametrize("block", BLOCKS)
def test_an_injected_block_names_exactly_the_injected_region(block, demo_capture, judged):
    from fpinspect.capture import Injection

    target = demo_capture(block).target(Injection.parse(BLOCKS[block]))
    report = judged(block, BLOCKS[block])
    assert report["summary"]["introduced"] == [target.name], _why(report)


@pytest.mark.parametrize("block", [*BLOCKS, "cancellation"])
def test_every_fused_op_of_a_clean_block_replays_faithfully(block, judged):
    outputs = [r for r in judged(block, None)["records"] if r["kind"] == "output"]
    assert outputs
    not_ok = [(r["fused_op"], r["replay"]) for r in outputs if (r["replay"] or {}).get("status") != "ok"]
    assert not not_ok, not_ok
    assert max(r["replay"]["fidelity"]["max_ulp"] for r in outputs) <= 1


def test_the_cancellation_chain_is_more_accurate_not_introduced(judged):
    report = judged("cancellation", None)
    summary = report["summary"]
    assert (summary["introduced"], summary["more_accurate"]) == ([], ["autofuse_0_Muls_Exp_Adds"])
    (out,) = [r for r in report["records"] if r["kind"] == "output"]
    assert out["verdict"] == "fail"  # against eager it fails every threshold ...
    evidence = out["replay"]
    assert evidence["closer_to_truth"] == "fused"  # ... and is the side closer to float64
    assert evidence["fused_vs_fp64"]["red"] < 0.5 and evidence["eager_vs_fp64"]["red"] > 5
