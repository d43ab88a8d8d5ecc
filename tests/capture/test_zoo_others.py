"""Real `transformers` architectures (fpinspect/capture/zoo.py) captured with Inductor fusion:
no false culprit on a clean capture, the planted one found first, and the ablation agreeing."""

import pytest

pytest.importorskip("transformers")

from zootests import (  # noqa: E402, F401 (collected here, for these models)
    test_a_clean_capture_names_no_culprit,
    test_a_planted_fault_is_the_only_culprit_and_confirmed,
)


def pytest_generate_tests(metafunc):
    metafunc.parametrize("model", ["hf-gpt2", "hf-bert", "hf-vit"])
