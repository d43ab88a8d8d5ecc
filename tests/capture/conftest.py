"""Captures shared by the capture tests: each demo is traced and compiled once per session.

Compiling is what costs time (about 20 s for the first Inductor compile of a process, 1-2 s
per region after that), so every test reads the same captures, and the whole session uses
one Inductor cache folder (``tests/conftest.py``). Without torch there is nothing to capture:
each test file is one skip that says so, and is not imported (most import torch; this file
imports it only inside fixtures).
"""

import pytest
from capturecases import INJECTED, compare
from extras import missing

WITHOUT_TORCH = missing("torch")


class _Skipped(pytest.File):
    """A test file that is not imported: it skips, with the reason, as it is collected."""

    def collect(self):
        pytest.skip(WITHOUT_TORCH)


def pytest_pycollect_makemodule(module_path, parent):
    if WITHOUT_TORCH:
        return _Skipped.from_parent(parent, path=module_path)
    return None


@pytest.fixture(scope="session")
def demo_capture(inductor_cache):
    """``demo_capture(name)``: the built-in demo ``name`` captured in float16 with seed 0,
    traced and compiled once per session."""
    from fpinspect.capture import Capture, load_model

    done = {}

    def get(name: str):
        if name not in done:
            module, inputs = load_model(name, seed=0)
            done[name] = Capture(module, inputs, dtype="float16", name=name)
        return done[name]

    return get


@pytest.fixture(scope="session")
def transformer_capture(demo_capture):
    return demo_capture("transformer")


@pytest.fixture(scope="session")
def conv_capture(demo_capture):
    return demo_capture("conv")


@pytest.fixture(scope="session")
def transformer_clean(transformer_capture, tmp_path_factory):
    pair = transformer_capture.write(tmp_path_factory.mktemp("transformer_clean"))
    return pair, compare(pair)


@pytest.fixture(scope="session")
def transformer_injected(transformer_capture, tmp_path_factory):
    from fpinspect.capture import Injection

    pair = transformer_capture.write(
        tmp_path_factory.mktemp("transformer_injected"), injections=[Injection.parse(INJECTED)]
    )
    return pair, compare(pair)


@pytest.fixture(scope="session")
def transformer_injected_ascend(transformer_capture, tmp_path_factory):
    from fpinspect.capture import Injection

    pair = transformer_capture.write(
        tmp_path_factory.mktemp("transformer_ascend"),
        storage_layouts="ascend",
        injections=[Injection.parse(INJECTED)],
    )
    return pair, compare(pair)


@pytest.fixture(scope="session")
def conv_clean(conv_capture, tmp_path_factory):
    pair = conv_capture.write(tmp_path_factory.mktemp("conv_clean"))
    return pair, compare(pair)
