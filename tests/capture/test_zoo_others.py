"""Real `transformers` architectures (fpinspect/capture/zoo.py) captured with Inductor fusion:
no false culprit on a clean capture, the planted one found first, and the ablation agreeing."""

import pytest

pytest.importorskip("transformers")

from zootests import check_clean, check_planted  # noqa: E402

MODELS = ["hf-gpt2", "hf-bert", "hf-vit"]


@pytest.mark.slow
@pytest.mark.parametrize("model", MODELS)
def test_a_clean_capture_names_no_culprit(model, tmp_path, inductor_cache):
    check_clean(model, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("model", MODELS)
def test_a_planted_fault_is_the_only_culprit_and_confirmed(model, tmp_path, inductor_cache):
    check_planted(model, tmp_path)
