"""The packages' lazy exports: nothing imported with the package, each name on first use."""

import subprocess
import sys

import pytest


def _run(code: str) -> str:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout


@pytest.mark.parametrize(
    ("package", "name", "module"),
    [
        ("fpinspect.dumps", "DumpComparison", "fpinspect.dumps.engine.compare"),
        ("fpinspect.experiments", "get_task", "fpinspect.experiments.registry"),
        ("fpinspect.capture", "CaptureError", "fpinspect.capture.errors"),
    ],
)
def test_a_name_loads_its_module_on_first_use_and_then_stays(package, name, module):
    out = _run(
        f"import sys, {package} as p\n"
        f"print({module!r} in sys.modules)\n"
        f"v = p.{name}\n"
        f"print({module!r} in sys.modules, {name!r} in vars(p), v is getattr(sys.modules[{module!r}], {name!r}))\n"
        f"from {package} import {name} as w\n"
        "print(w is v)\n"
    )
    assert out.split() == ["False", "True", "True", "True", "True"]


def test_an_unknown_name_is_an_attribute_error_naming_the_package():
    import fpinspect.dumps as dumps

    with pytest.raises(AttributeError, match="module 'fpinspect.dumps' has no attribute 'nope'"):
        dumps.nope  # noqa: B018
    assert "DumpComparison" in dumps.__all__ and dumps.__all__ == sorted(dumps.__all__)
