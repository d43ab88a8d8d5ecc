"""Run one fused op's region with PyTorch on this bundle's saved inputs, eagerly and under
``torch.compile`` (written by `fpinspect repro` for a capture; needs torch and numpy, no fpinspect).

    python repro_torch.py      # prints, per compared output, the errors the fpinspect report gives

The region is ``subgraph.json``'s ``torch.code``: the fused op's original ops as torch.export
traced them from the model, the function the capture compiled. It runs three ways on each side's
saved inputs (``on``: what the fused op read, ``off``: what the original ops read): compiled by
``torch.compile`` (the fused kernel), eagerly op by op in the model's dtype, and eagerly in
float64 (the truth). The figures are those of ``repro.py`` beside this file, with PyTorch as the
replay: ``fidelity`` (eager here against the dumped eager output), ``fused_vs_replay`` (compiled
against eager), ``fused_vs_fp64``, ``eager_vs_fp64``; and ``compiled_vs_dump``: the compiled
output here against the fused output the capture dumped (0 when torch.compile reproduces it).
"""

import json
import math
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import repro  # noqa: E402  (the bundle's numpy script: its formats, metrics and printing)


def tensor(array, fmt, device):
    """A saved array as a tensor of its format (bfloat16 is saved as its bit patterns)."""
    if fmt == "bfloat16":
        return torch.from_numpy(array.view(np.int16)).view(torch.bfloat16).to(device)
    return torch.from_numpy(np.ascontiguousarray(array)).to(device)


def array(t):
    """A result as numpy holds it (bfloat16 as float32 values)."""
    t = t.detach().cpu()
    return (t.float() if t.dtype == torch.bfloat16 else t).numpy()


def region_function(code):
    """The region's ``forward`` as a plain function of its inputs."""
    namespace = {"torch": torch, "device": torch.device, "inf": math.inf, "nan": math.nan}
    exec(compile(code, "region", "exec"), namespace)
    forward = namespace["forward"]
    return lambda *inputs: forward(None, *inputs)


def main():
    with open(os.path.join(HERE, "subgraph.json"), encoding="utf-8") as f:
        manifest = json.load(f)
    arrays = np.load(os.path.join(HERE, "bundle.npz"), allow_pickle=False)
    spec = manifest["torch"]
    device = spec["device"]
    if device == "cuda" and not torch.cuda.is_available():
        print("note: the capture ran on CUDA, and PyTorch sees no GPU here: running on the CPU")
        device = "cpu"
    saved = {f"{b['producer']}:{b['index']}": b for b in manifest["boundary"]}

    def inputs(side, wide=False):
        out = []
        for key in spec["inputs"]:
            t = None if key is None else tensor(arrays[saved[key][side]], saved[key]["format"], device)
            out.append(t.double() if wide and t is not None and t.is_floating_point() else t)
        return out

    region = region_function(spec["code"])
    with torch.no_grad():
        fused = torch.compile(region, fullgraph=True, dynamic=False)(*inputs("on"))
        runs = {
            "eager_on": region(*inputs("on")),
            "eager_off": region(*inputs("off")),
            "fp64_on": region(*inputs("on", wide=True)),
            "fp64_off": region(*inputs("off", wide=True)),
        }
    print(
        f"fused op {manifest['op']} with torch {torch.__version__} on {device}: "
        f"{len(manifest['ops'])} original ops ({', '.join(o['type'] for o in manifest['ops'])})"
    )
    for fault in spec["simulated"]:
        print(
            f"note: the capture planted a SIMULATED fault here (--inject {fault}): the dumped fused output "
            "carries it, torch.compile here does not (compiled_vs_dump)"
        )
    results = []
    for out in manifest["outputs"]:
        key, fmt = f"{out['origin'][0]}:{out['origin'][1]}", out["format"]
        k = spec["outputs"].index(key)
        compiled, dumped = array(fused[k]), repro.decode(arrays[out["fused"]], fmt)
        got = repro.figures(
            fmt,
            compiled,
            repro.decode(arrays[out["eager"]], fmt),
            *(array(runs[name][k]) for name in ("eager_on", "eager_off", "fp64_on", "fp64_off")),
        )
        got["compiled_vs_dump"] = {
            "red": repro.red(compiled, dumped, fmt),
            "max_ulp": repro.max_ulp(compiled, dumped, fmt),
        }
        results.append({"fused_index": out["fused_index"], "origin": out["origin"], **got})
        repro.show(out, key, fmt, got)
    if "--json" in sys.argv:
        print(json.dumps(results))


if __name__ == "__main__":
    main()
