import json

import numpy as np
import pytest

from fpinspect.experiments.results import (
    Histogram,
    Table,
    TaskReport,
    Verdict,
    jsonable,
    ulp_diff_histogram,
    ulp_error_histogram,
    ulp_error_shares,
)
from fpinspect.numerics import ulp_nan


def test_ulp_diff_histogram_bins_powers_of_two_and_nan():
    nan = ulp_nan(np.float16)
    h = ulp_diff_histogram("h", "t", np.array([0, 0, 1, 5, 9, nan], dtype=np.uint32), nan)
    assert h.bins == ("0", "1", "2", "3", "4-7", "8-15", "NaN")
    assert h.counts == (2, 1, 0, 0, 1, 1, 1)


def test_ulp_error_bins_tolerate_reference_noise_at_edges():
    # 1 + 2e-13 is an error of exactly 1 ULP seen through a float64 reference
    err = np.array([0.0, 0.25, 0.5, 1.0 + 2e-13, 1.5, 9.0, np.nan])
    h = ulp_error_histogram("h", "t", err)
    assert dict(zip(h.bins, h.counts)) == {
        "0": 1,
        "(0, 0.5]": 2,
        "(0.5, 1]": 1,
        "(1, 2]": 1,
        "(2, 4]": 0,
        "(4, 8]": 0,
        "> 8": 1,
        "NaN": 1,
    }
    shares = ulp_error_shares(err)
    assert list(shares) == ["0", "(0, 0.5]", "(0.5, 1]", "> 1"]
    assert shares["> 1"] == pytest.approx(2 / 7)


def test_jsonable_converts_numpy_and_non_finite():
    out = jsonable({"a": np.float32(1.5), "b": np.arange(2), "c": (float("-inf"),), 3: np.bool_(True)})
    assert out == {"a": 1.5, "b": [0, 1], "c": ["-Infinity"], "3": True}
    json.dumps(out, allow_nan=False)


def _report(**data):
    return TaskReport(
        task="C1",
        title="t",
        claim="c",
        profile="quick",
        environment={"device": "cpu", "torch": "x"},
        settings={"dtype": "float16", "seed": 1},
        data=data,
        verdicts=[Verdict("topic", "e", "m", None)],
        tables=[Table("T", ("a", "b"), ((1, 2.5),), summary=False)],
        histograms=[Histogram("h", "t", "x", ("0",), (3,))],
    )


def test_report_round_trips_with_contract_keys_on_top():
    r = _report(ulp_share={"0": 1.0, "1": 0.0, ">=2": 0.0})
    d = r.to_dict()
    assert d["ulp_share"]["0"] == 1.0 and d["device"] == "cpu" and d["seeds"] == {"inputs": 1}
    assert TaskReport.from_dict(json.loads(json.dumps(d))) == r


def test_task_data_cannot_shadow_report_keys():
    with pytest.raises(ValueError, match="reserved"):
        _report(device="gpu")
