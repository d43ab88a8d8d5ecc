"""ml_dtypes (bfloat16, float8) is imported only where one of its formats is named or met: its
import costs every process ~0.7 s with ml_dtypes 0.7 (0.04 s with 0.5 / 0.6). Each check runs in a
fresh interpreter, since this test process has imported ml_dtypes already."""

import subprocess
import sys
import textwrap


def _run(code: str) -> str:
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_numpy_formats_import_no_ml_dtypes():
    out = _run(
        """
        import sys
        import numpy as np
        from fpinspect.numerics import accumulate, common_format, float_format, is_supported
        from fpinspect.dumps.engine.pair import compare_arrays
        a = np.linspace(-2, 2, 100, dtype=np.float16)
        res = compare_arrays(a, np.nextafter(a, np.float16(9)), worst=3)
        assert res.metrics.errors.ulp.max == 1, res.metrics.errors.ulp
        assert compare_arrays(a, a.astype(np.float32)).status == ["DTYPE_CAST"]
        assert common_format(np.float16, np.float32).name == "float32"
        assert float_format("float32").p == 24 and float_format(np.float16).tiny == 2.0**-14
        assert not is_supported(np.int32) and not is_supported("int32")
        print("ml_dtypes" in sys.modules)
        """
    )
    assert out == "False"


def test_ml_dtypes_formats_by_name_before_ml_dtypes_is_imported(tmp_path):
    """A name (a raw dump's DT_BF16, a task's format) imports ml_dtypes and finds the format."""
    path = tmp_path / "Mul.mul.1.0.1700000000000001"
    out = _run(
        f"""
        import sys
        import numpy as np
        from fpinspect.numerics import FORMATS, dtype_of, float_format, is_supported
        from fpinspect.dumps.formats.rawdump import RawPayload, read_raw_header, tensor_array, write_raw_dump
        assert "ml_dtypes" not in sys.modules
        b = np.array([1.0, -0.5, 3.0], dtype=np.float32)
        write_raw_dump({str(path)!r}, "mul", [RawPayload(b, "DT_BF16", "ND")], [])
        t = read_raw_header({str(path)!r}).inputs[0]
        bf = tensor_array({str(path)!r}, t)
        assert bf.dtype.name == "bfloat16" and bf.astype(np.float32).tolist() == b.tolist()
        assert float_format(bf.dtype).p == 8 and is_supported(bf.dtype)
        assert float_format("float8_e4m3fn").max == 448.0
        assert dtype_of("float8_e8m0fnu").itemsize == 1 and not is_supported("float8_e8m0fnu")
        print(*FORMATS)
        """
    )
    assert out == "float8_e4m3fn float8_e5m2 bfloat16 float16 float32 float64"


def test_a_dtype_of_ml_dtypes_is_supported_without_naming_it():
    """An array of ml_dtypes' made by the caller: the registry completes on meeting its dtype."""
    out = _run(
        """
        import numpy as np
        from fpinspect.numerics import common_format, float_format, is_supported
        import ml_dtypes
        x = np.zeros(3, dtype=ml_dtypes.bfloat16)
        print(is_supported(x.dtype), float_format(x).name, common_format(x.dtype, np.float16).name)
        """
    )
    assert out == "True bfloat16 float32"
