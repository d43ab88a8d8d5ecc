"""A first pair with an empty compile cache: the kernels it calls after its pass are compiled by
a child process meanwhile (real processes, a real numba cache)."""

import json
import os
import subprocess
import sys
import textwrap

import numpy as np

from fpinspect.numerics import compile_ahead
from fpinspect.numerics import kernels as K
from fpinspect.numerics.stats import after_pass_calls


def test_a_cold_first_pair_loads_its_after_pass_kernels_from_what_a_child_compiled(tmp_path):
    """KL's pass and the exact percentiles' selection come out of the cache
    (hits, no compile of their own), the pass itself is compiled by the caller, and the
    figures equal those of this process, whose kernels are compiled here."""
    code = """
        import json, numpy as np
        from fpinspect.numerics import kernels as K
        from fpinspect.numerics.stats import accumulate
        a = np.linspace(-3, 3, 3000).astype(np.float16)
        b = (a * np.float16(1.001)).astype(np.float16)
        b[7] = np.nan  # an element that does not count: selected among as NaN
        from fpinspect.numerics import compile_ahead
        told = []
        compile_ahead.on_compile(told.append)
        s = accumulate(a, b, kl=True)  # KL's pass is called in there, after the fused pass
        accumulate(a, b)  # the same kind again: nothing more to tell
        e = s.error_stats()
        waited_for = not compile_ahead._children
        counts = {
            k.__name__: (sum(k.stats.cache_hits.values()), sum(k.stats.cache_misses.values()))
            for k in (K.fused_pass, K.kl_pass, K.select_ranks)
        }
        print(json.dumps({"told": told, "counts": counts, "waited": waited_for, "kl": s.kl, "p50": e["abs"]["p50"], "p99": e["rel"]["p99"]}))
    """
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_")}
    env["NUMBA_CACHE_DIR"] = str(tmp_path / "cache")
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=env, check=True
    )
    got = json.loads(out.stdout)
    assert got["counts"] == {
        "fused_pass": [0, 1],
        "kl_pass": [1, 0],
        "select_ranks": [1, 0],
    }, out.stderr[-2000:]
    assert got["waited"]
    # the user was told why the first pair takes seconds, once
    assert got["told"] == [
        "compiling the statistics kernels for float16 pairs (a few seconds, the first time on this "
        "machine; later runs load them from the cache)"
    ]

    from fpinspect.numerics.stats import accumulate

    a = np.linspace(-3, 3, 3000).astype(np.float16)
    b = (a * np.float16(1.001)).astype(np.float16)
    b[7] = np.nan
    s = accumulate(a, b, kl=True)
    e = s.error_stats()
    assert [got["kl"], got["p50"], got["p99"]] == [s.kl, e["abs"]["p50"], e["rel"]["p99"]]


def test_the_after_pass_calls_have_the_types_the_pair_passes():
    """Each kernel the child compiles is compiled for exactly the argument types the real calls
    of a pair of that kind pass: after a real pair, every one is ready (compiled here for its
    one-element arguments' types), for each storage width, with exact percentiles and without."""
    from fpinspect.numerics.stats import accumulate

    for dtype, n in ((np.float16, 3000), (np.float32, 3000), (np.float16, (1 << 21) + 5)):
        a = np.linspace(-3, 3, n).astype(dtype)
        b = (a * 1.001).astype(dtype)
        b[7] = np.nan
        accumulate(a, b, kl=True).error_stats()
        calls = after_pass_calls(np.dtype(dtype), np.dtype(dtype), n, True)
        want = {"kl_pass"} if n > 1 << 21 else {"kl_pass", "select_ranks"}
        assert {kernel.__name__ for kernel, _ in calls} == want  # only what such a pair calls
        for kernel, args in calls:
            sig = tuple(__import__("numba").typeof(x) for x in args)
            assert sig in kernel.overloads, (kernel.__name__, sig, list(kernel.overloads))
            assert compile_ahead.ready(kernel, args)


def test_a_pass_whose_caller_needs_nothing_after_it_does_not_wait(tmp_path):
    """The fused pass alone (no KL, no percentiles asked for) returns while the child may still
    be compiling: it is not waited for until one of its kernels is called."""
    code = """
        import numpy as np
        from fpinspect.numerics import compile_ahead
        from fpinspect.numerics.stats import accumulate
        a = np.linspace(-3, 3, 3000).astype(np.float16)
        accumulate(a, a)
        print(len(compile_ahead._children))
    """
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_")}
    env["NUMBA_CACHE_DIR"] = str(tmp_path / "cache")
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=env, check=True
    )
    assert out.stdout.split() == ["1"]


def test_nothing_is_compiled_ahead_of_a_warm_pair(monkeypatch):
    """Kernels this process already compiled start no child."""
    monkeypatch.setattr(compile_ahead, "_started", set())
    a = np.linspace(-1, 1, 100).astype(np.float16)
    K.select_ranks(np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64))
    compile_ahead.start(a.dtype, a.dtype, a.size, False)
    assert compile_ahead._children == [] and compile_ahead._started  # looked, and found them


def test_a_forked_worker_does_not_wait_for_its_parents_child(monkeypatch):
    """``compare --jobs N`` forks workers: a child compiling for the parent is not theirs."""
    import multiprocessing

    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        monkeypatch.setattr(compile_ahead, "_children", [sleeper])
        ctx = multiprocessing.get_context("fork")
        with ctx.Pool(1) as pool:
            assert pool.apply(_children_here) == 0
        assert compile_ahead._children == [sleeper]
    finally:
        sleeper.kill()
        sleeper.wait()


def _children_here() -> int:
    return len(compile_ahead._children)


def test_a_warm_pass_tells_nothing(monkeypatch):
    """Kernels compiled in this process or held by the cache: no sentence about compiling."""
    from fpinspect.numerics import stats

    a = np.linspace(-3, 3, 300).astype(np.float32)
    stats.accumulate(a, a * np.float32(1.001))  # compiled (or loaded) here
    told = []
    monkeypatch.setattr(compile_ahead, "_listener", told.append)
    monkeypatch.setattr(stats, "_announced", set())
    stats.accumulate(a, a * np.float32(1.001))
    assert told == []


def test_a_kernel_compiled_in_memory_every_run_says_so_and_how_to_keep_it(monkeypatch):
    import numba

    told = []
    monkeypatch.setattr(compile_ahead, "_listener", told.append)
    kernel = numba.njit(lambda x: x + 1)  # no cache: what a read-only install without a cache folder gets
    compile_ahead.announce(kernel, (1.0,), "float64 pairs")
    assert len(told) == 1 and "every run compiles" in told[0] and "NUMBA_CACHE_DIR" in told[0]
    kernel(1.0)
    compile_ahead.announce(kernel, (1.0,), "float64 pairs")  # compiled now
    assert len(told) == 1
