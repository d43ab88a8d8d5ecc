"""Write GE-format fusion-on / fusion-off dump pairs from a PyTorch model.

``fpinspect capture MODEL --out DIR`` or, from Python::

    from fpinspect.capture import Capture, load_model
    module, inputs = load_model("transformer")
    pair = Capture(module, inputs, dtype="float16").write("out/")

Modules, in the order a capture uses them: :mod:`.models` and :mod:`.demos` (what to run),
:mod:`.trace` and :mod:`.optable` (torch.export to an operator graph), :mod:`.partition`
(fusion regions), :mod:`.eager` and :mod:`.fused` (the two runs), :mod:`.inject` (simulated
regressions), :mod:`.storage`, :mod:`.gejson` and :mod:`.dumpwriter` (the files),
:mod:`.pipeline` (all of it), :mod:`.command` (the CLI). Importing this package does not
import torch; the names below load it on first use.
"""

from __future__ import annotations

from ..lazy import lazy_exports

_EXPORTS = {
    "Capture": ".pipeline",
    "DumpPair": ".pipeline",
    "Injection": ".inject",
    "load_model": ".models",
    "CaptureError": ".errors",
}

__getattr__, __all__ = lazy_exports(__name__, _EXPORTS)
