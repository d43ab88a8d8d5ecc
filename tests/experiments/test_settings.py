import dataclasses
import re

import pytest

from fpinspect.experiments.registry import TASK_IDS, UnknownTask, all_tasks, canonical_id, get_task
from fpinspect.experiments.tasks.reduction_order import ReductionOrderSettings


@pytest.mark.parametrize("task", all_tasks(), ids=lambda t: t.id)
def test_profiles_round_trip_and_keep_the_structure(task):
    full, quick = task.settings.profile("full"), task.settings.profile("quick")
    assert full == task.settings()
    for s in (full, quick):
        assert task.settings.from_dict(s.to_dict()) == s
    # quick scales sizes and counts, never the kind of data
    assert quick.dtype == full.dtype and quick.seed == full.seed
    assert {f.name for f in dataclasses.fields(quick)} == {f.name for f in dataclasses.fields(full)}


def test_plan_values_are_the_full_profile():
    assert get_task("A").settings.profile("full").shape == (8, 2048, 4096)
    assert get_task("A").settings.profile("full").runs == 1000
    assert get_task("C1").settings.profile("full").shape == (1024, 1024)
    assert get_task("C1").settings.profile("full").scalar == 0.7
    c2 = get_task("C2").settings.profile("full")
    assert (c2.n, c2.chunk_sizes, c2.runs) == (16384, (512, 1024, 2048), 1000)
    c3 = get_task("C3").settings.profile("full")
    assert (c3.low, c3.high, c3.iterations) == (0.01, 100.0, (1, 2, 3))


def test_bad_settings_are_refused():
    with pytest.raises(ValueError, match="unknown setting"):
        get_task("C1").settings.from_dict({"shape": [4, 4], "colour": "red"})
    with pytest.raises(ValueError, match="unknown profile"):
        get_task("C1").settings.profile("medium")
    with pytest.raises(ValueError, match="power of two"):
        ReductionOrderSettings(chunk_sizes=(384,))


def test_task_ids_are_case_insensitive():
    assert [canonical_id(t.lower()) for t in TASK_IDS] == list(TASK_IDS)
    with pytest.raises(UnknownTask, match="known tasks: " + ", ".join(TASK_IDS)):
        canonical_id("Z9")


def test_overrides_parse_by_field_type():
    from fpinspect.experiments.tasks.data_movement import DataMovementSettings

    s = (
        get_task("C2")
        .settings.profile("quick")
        .with_overrides(5, ["runs=7", "chunk_sizes=256,512", "high=0.5"])
    )
    assert (s.seed, s.runs, s.chunk_sizes, s.high) == (5, 7, (256, 512), 0.5)
    d = DataMovementSettings().with_overrides(None, ["shapes=[[4, 6], [5, 7]]", "dtypes=bfloat16"])
    assert d.shapes == ((4, 6), (5, 7)) and d.dtypes == ("bfloat16",)
    assert DataMovementSettings.from_dict(d.to_dict()) == d


@pytest.mark.parametrize(
    ("assignment", "message"),
    [
        ("shapes=[[4, 6.5]]", "expects integers"),
        ("shapes=4x6", "expects a JSON list like [[16, 16]"),
        ("shapes=[4, 6", "expects a JSON list, and '[4, 6' is not one"),
        ("shapes=[[1, 6]]", "refused: shape [1, 6] must be [rows, columns]"),
        ("chains=fold", "refused: unknown chain(s) fold"),
        ("shapes=[]", "refused: shapes must not be empty"),
        ("dtypes=float64", "refused: dtype(s) float64 not covered; choose from float16, bfloat16, float32"),
        ("dtypes=float16,int8", "'int8' is not a float format name"),
    ],
)
def test_bad_overrides_say_which_setting(assignment, message):
    from fpinspect.experiments.settings import SettingError
    from fpinspect.experiments.tasks.data_movement import DataMovementSettings

    with pytest.raises(SettingError, match=re.escape(message)):
        DataMovementSettings().with_overrides(None, [assignment])


def test_a_field_the_task_does_not_read_is_refused():
    from fpinspect.experiments.settings import SettingError
    from fpinspect.experiments.tasks.accumulated_error import AccumulatedErrorSettings

    with pytest.raises(SettingError, match="this task does not read 'dtype'"):
        AccumulatedErrorSettings().with_overrides(None, ["dtype=bfloat16"])
    with pytest.raises(SettingError) as info:
        AccumulatedErrorSettings().with_overrides(None, ["colour=1"])
    assert "dtype," not in str(info.value) and "dtypes" in str(info.value)
