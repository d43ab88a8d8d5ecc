"""The inspector's ``m`` and its palette entry: the run in Model Explorer, the highlighted op selected."""

from __future__ import annotations

import json
import sys
import urllib.request
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest

pytest.importorskip("model_explorer", reason="needs Model Explorer: pip install 'fpinspect[explorer]'")

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tui"))
from harness import app_for, drive, settle  # noqa: E402

REGRESSION = Path(__file__).resolve().parents[2] / "fpinspect" / "sample_dumps" / "regression"


@pytest.mark.parametrize(
    "keys", [["m"], ["ctrl+p", *"open in model explorer", "enter"]], ids=["m", "palette"]
)
def test_m_serves_the_run_with_the_highlighted_op_selected(keys):
    seen = {}

    async def scenario(pilot):
        app = pilot.app
        await pilot.press("i")  # the first op that introduces an error: autofuse_2_Add_LayerNorm
        await pilot.press(*keys)
        await settle(pilot)
        told = [m for m in app.told if m.startswith("Model Explorer: ")]
        assert told, list(app.told)
        seen["url"] = url = told[-1].removeprefix("Model Explorer: ")
        with urllib.request.build_opener(urllib.request.ProxyHandler({})).open(url, timeout=10) as page:
            assert page.status == 200
        seen["server"] = app.screen._explorer

    drive(app_for(REGRESSION), scenario)
    data = json.loads(parse_qs(urlparse(seen["url"]).query)["data"][0])
    on, off = data["uiState"]["paneStates"]
    assert (
        on["selectedNodeId"] == "autofuse_2_Add_LayerNorm"
        and on["selectedCollectionLabel"] == "regression (fusion on)"
    )
    assert off["selectedNodeId"] == "add" and off["selectedCollectionLabel"] == "regression (fusion off)"
    assert seen["server"].wait(timeout=30) is not None  # stopped with the inspector
