"""Settings that cannot run are refused before any process starts: one sentence, exit 2."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from fpinspect.cli.experiments import run_command


@pytest.mark.parametrize(
    ("args", "sentence"),
    [
        (
            ["S", "--seed", str(10**30)],
            "task S: --seed must be an integer from 0 to 2**63 - 1, not " + str(10**30),
        ),
        (
            ["S", "--set", "stats_size=-5"],
            "task S: setting 'stats_size' counts or sizes something and cannot be negative (-5)",
        ),
        (
            ["C3", "--set", "shape=[-1]"],
            "task C3: setting 'shape' counts or sizes something and cannot be negative (-1)",
        ),
        (["C1", "--set", "seed=9223372036854775808"], "task C1: setting 'seed' cannot exceed 2**63 - 1"),
        (["C1", "--set", "low=nan"], "task C1: setting 'low' must be a finite number, not nan"),
        (
            ["B", "--set", "inputs=1000000000000"],
            "task B: these settings ask for 31,250,000 times the work of",
        ),
    ],
)
def test_settings_that_cannot_run_are_refused_up_front(args, sentence):
    result = CliRunner().invoke(run_command, [*args, "--device", "cpu"])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert len(result.stderr.strip().splitlines()) == 1
    assert result.stderr.startswith(f"fpinspect run: {sentence}")


def test_settings_far_beyond_the_plan_say_how_long_they_would_take_and_how_to_insist():
    result = CliRunner().invoke(run_command, ["B", "--device", "cpu", "--set", "inputs=1000000000000"])
    assert " years (rough, for these settings:" in result.stderr
    assert result.stderr.rstrip().endswith("pass --force to run them anyway.")
