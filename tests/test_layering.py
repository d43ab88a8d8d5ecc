"""The pure core (numerics, dumps) must work without torch and without textual."""

import subprocess
import sys
import textwrap


def test_core_imports_neither_torch_nor_textual():
    code = textwrap.dedent(
        """
        import sys

        class Block:
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in ("torch", "textual"):
                    raise ImportError("blocked: " + name)
                return None

        sys.meta_path.insert(0, Block())
        import numpy as np
        import fpinspect.numerics as n
        import fpinspect.dumps
        import fpinspect.dumps.pair, fpinspect.dumps.graph, fpinspect.dumps.datadump, fpinspect.dumps.layouts
        import fpinspect.cli
        import fpinspect.legacy
        s = n.error_stats(np.ones(4, np.float16), np.ones(4, np.float16))
        assert s["ulp"]["max"] == 0
        bad = [m for m in sys.modules if m.split(".")[0] in ("torch", "textual")]
        assert not bad, bad
        print("ok")
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"
