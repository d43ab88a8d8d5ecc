"""A first pair with an empty compile cache: the kernels it calls after its pass are compiled by
a child process meanwhile (real processes, a real numba cache)."""

import json
import os
import subprocess
import sys
import textwrap
import threading
import time

import ml_dtypes
import numpy as np
import pytest

from fpinspect.numerics import compile_ahead
from fpinspect.numerics import kernels as K
from fpinspect.numerics.stats import _calls, after_pass_calls


@pytest.mark.parametrize("child", ["forked", "started"])
def test_a_cold_first_pair_loads_its_after_pass_kernels_from_what_a_child_compiled(tmp_path, child):
    """The fused pass's rarer work, KL's pass and the exact percentiles' selection come out of
    the cache (hits, no compile of their own), the fused pass itself is compiled by the caller,
    each of its block kernels once, by the caller or by the child (then loaded from the cache),
    and the figures equal those of this process, whose kernels are compiled here. The child is
    a fork where the caller has one thread; where it has another, a Python started anew."""
    other_thread = (
        "import threading, time; threading.Thread(target=time.sleep, args=(60,), daemon=True).start()"
    )
    code = f"""
        {other_thread if child == "started" else ""}
        import json, numpy as np
        from fpinspect.numerics import kernels as K
        from fpinspect.numerics.stats import accumulate, _calls
        a = np.linspace(-3, 3, 3000).astype(np.float16)
        b = (a * np.float16(1.001)).astype(np.float16)
        b[7] = np.nan  # an element that does not count: selected among as NaN
        (_, blocks), _ = _calls(a.dtype, b.dtype, a.size, True)
        from fpinspect.numerics import compile_ahead
        children, init = [], compile_ahead._Child.__init__
        def remembered(child, *args):
            init(child, *args)
            children.append(child)
        compile_ahead._Child.__init__ = remembered
        told = []
        compile_ahead.on_compile(told.append)
        s = accumulate(a, b, kl=True, worst=5)  # KL's pass is called in there, after the fused pass
        accumulate(a, b)  # the same kind again: nothing more to tell
        e = s.error_stats()
        named = sorted(set().union(*(c.named for c in children)))
        claimed = sorted(set().union(*(c.claimed for c in children)))
        counts = {{
            k.__name__: (sum(k.stats.cache_hits.values()), sum(k.stats.cache_misses.values()))
            for k in (K.fused_pass, K.finish_pass, K.kl_pass, K.select_ranks, *(k for k, _ in blocks))
        }}
        worst = [int(i) for i in s.worst_index]
        kinds = [type(c.process).__name__ for c in children]
        print(json.dumps({{"told": told, "counts": counts, "named": named, "claimed": claimed, "blocks": [k.__name__ for k, _ in blocks], "kl": s.kl, "p50": e["abs"]["p50"], "p99": e["rel"]["p99"], "worst": worst, "max_at": [s.max_abs_index, s.max_rel_index], "kinds": kinds}}))
    """
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_")}
    env["NUMBA_CACHE_DIR"] = str(tmp_path / "cache")
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=env, check=True
    )
    got = json.loads(out.stdout)
    # (a second child, for the pair without KL, where the first one had yet to cache its last kernels)
    assert set(got["kinds"]) == {{"forked": "_ForkedChild", "started": "Popen"}[child]}, got["kinds"]
    counts = got["counts"]
    # the pass: compiled once, by the caller or by the child (which takes it first); its rarer
    # work: loaded from what the child compiled
    assert sum(counts["fused_pass"]) == 1 and counts["finish_pass"] == [1, 0], (counts, out.stderr[-2000:])
    assert (counts["fused_pass"] == [1, 0]) == ("fused_pass" in got["named"]), got
    # KL's pass and the selection: each loaded from the child's cache, or compiled here while the
    # caller waited for the child to finish another (never both, never loaded without the child)
    for name in ("kl_pass", "select_ranks"):
        hits, misses = counts[name]
        assert hits + misses == 1 and (hits == 0 or name in got["named"]), (name, got)
    assert "finish_pass" in got["named"]
    # the block kernels: compiled by the caller (said so to the child first), or by the child,
    # found in the cache as the pass was compiled; none twice
    for name in got["blocks"]:
        hits, misses = counts[name]
        assert hits + misses == 1, (name, got)
        assert (misses == 1) == (name in got["claimed"]) and (hits == 1) == (name in got["named"]), (
            name,
            got,
        )
    # the user was told why the first pair takes seconds, once
    assert got["told"] == [
        "compiling the statistics kernels for float16 pairs (a few seconds, the first time on this "
        "machine; later runs load them from the cache)"
    ]

    from fpinspect.numerics.stats import accumulate

    a = np.linspace(-3, 3, 3000).astype(np.float16)
    b = (a * np.float16(1.001)).astype(np.float16)
    b[7] = np.nan
    s = accumulate(a, b, kl=True, worst=5)
    e = s.error_stats()
    assert [got["kl"], got["p50"], got["p99"]] == [s.kl, e["abs"]["p50"], e["rel"]["p99"]]
    assert got["worst"] == [int(i) for i in s.worst_index] and got["worst"][0] == 7  # the NaN first
    assert got["max_at"] == [s.max_abs_index, s.max_rel_index]


def test_the_calls_compiled_ahead_have_the_types_the_pair_passes():
    """Each kernel the child compiles is compiled for exactly the argument types the real calls
    of a pair of that kind pass: after a real pair, every one is ready (compiled here for its
    one-element arguments' types), for each storage width, with exact percentiles and without,
    for both kinds of ULP (one format; against a wider reference): the block kernels of the
    fused pass as the pass calls them, the pass itself (whether the child needs to), and the
    kernels called after it."""
    import numba

    from fpinspect.numerics.stats import accumulate

    for dtype, ref, n in (
        (np.float16, np.float16, 3000),
        (np.float32, np.float32, 3000),
        (np.float16, np.float32, 3000),
        (np.float16, np.float16, (1 << 21) + 5),
    ):
        a = np.linspace(-3, 3, n).astype(dtype)
        b = (a * 1.001).astype(ref)
        b[7] = np.nan
        accumulate(a, b, kl=True, worst=3).error_stats()
        calls = after_pass_calls(np.dtype(dtype), np.dtype(ref), n, True)
        # finish_pass's block kernels, of which its table is made, the longest compile first
        finishing = ["finish_pass", "_decode_block", "_worst_block", "_first_index", "_count_specials"]
        finishing += ["_count_large_distances"] if dtype == ref else []
        want = (
            finishing + ([] if n > 1 << 21 else ["select_ranks", "_select_within"]) + ["kl_pass", "_kl_sums"]
        )
        # only what such a pair calls, the longest compile first
        assert [kernel.__name__ for kernel, _ in calls] == want
        (pass_call, blocks), _ = _calls(np.dtype(dtype), np.dtype(ref), n, True)
        called = K.fused_pass.py_func.__code__.co_names
        in_pass = {
            name
            for name in called
            if getattr(K.__dict__.get(name), "targetoptions", {}).get("no_cpython_wrapper")
        }
        # the block kernels a pair of this kind calls (one it called without them in its table
        # would have raised above), and no other: one it never calls is never compiled for it
        every = {"_centre", "_decode_block", "_sums_block", "_ratios_block", "_fold_chunk"}
        kind = (
            {"_bit_equal", "_equal_block", "_ulp_diff_block", "_scatter"}
            if dtype == ref
            else {"_ulp_error_block"}
        )
        kept = {"_keep_block"} if n <= 1 << 21 else {"_scatter"}
        assert {kernel.__name__ for kernel, _ in blocks} == every | kind | kept <= in_pass
        for kernel, args in [pass_call, *blocks, *calls]:
            sig = tuple(numba.typeof(x, numba.core.typing.typeof.Purpose.argument) for x in args)
            # compiled here for these types; or (the block kernels of a pass loaded from the cache,
            # not compiled in this process) held by the cache for them, which the pass's compile filled
            assert sig in kernel.overloads or not kernel.overloads, (
                kernel.__name__,
                sig,
                list(kernel.overloads),
            )
            assert compile_ahead.ready(kernel, args), kernel.__name__


def test_a_pass_whose_caller_needs_nothing_after_it_waits_only_for_its_own_kernels(tmp_path):
    """The fused pass waits for the child to cache its rarer work (finish_pass, loaded from the
    cache, not compiled again) and returns while the child may still be compiling the rest (the
    exact percentiles' selection): that is neither waited for nor compiled by the caller until
    it is called. (It had been, in about a third of the runs: the caller, helping while it
    waited for finish_pass, compiled the selection, ~1.5 s, and the child, finding it claimed,
    ended first; the test then failed on the child's absence.)"""
    code = """
        import numpy as np
        from fpinspect.numerics import compile_ahead, kernels as K
        from fpinspect.numerics.stats import accumulate
        a = np.linspace(-3, 3, 3000).astype(np.float16)
        accumulate(a, a)
        named = sorted(set().union(*(c.named for c in compile_ahead._children)))
        print(len(K.select_ranks.overloads), sum(K.finish_pass.stats.cache_misses.values()), *named)
    """
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_")}
    env["NUMBA_CACHE_DIR"] = str(tmp_path / "cache")
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=env, check=True
    )
    selection, misses, *named = out.stdout.split()
    # a child still at work has cached finish_pass (one that has ended has cached everything)
    assert selection == "0" and misses == "0", out.stdout
    assert not named or "finish_pass" in named, out.stdout


class _FakeKernel:
    """A kernel as :class:`compile_ahead._Child` sees it: a name, numba's target options, and a
    compile that is only recorded."""

    def __init__(self, name: str, block: bool, compiled: list):
        self.__name__ = name
        self.targetoptions = {"no_cpython_wrapper": True} if block else {}
        self._compiled = compiled

    def compile(self, sig) -> None:
        self._compiled.append(self.__name__)


def test_waiting_for_a_pass_helps_with_its_block_kernels_only(monkeypatch):
    """While the caller waits for the child to cache finish_pass, it compiles the block kernels
    after it in the child's order that the child has not started on (finish_pass calls them:
    the caller needs them next), and not the kernels called from Python that follow (the
    selection, KL's pass), which it may call much later or never: the child compiles those
    meanwhile."""
    compiled: list[str] = []
    calls = [
        (_FakeKernel("finish_pass", False, compiled), ()),
        (_FakeKernel("_count_specials", True, compiled), ()),
        (_FakeKernel("_worst_block", True, compiled), ()),
        (_FakeKernel("select_ranks", False, compiled), ()),
        (_FakeKernel("kl_pass", False, compiled), ()),
    ]
    monkeypatch.setattr(compile_ahead, "ready", lambda kernel, args: kernel.__name__ in compiled)
    monkeypatch.setattr(compile_ahead, "argument_types", lambda args: args)
    child = compile_ahead._Child(subprocess.Popen([sys.executable, "-c", "pass"]), calls)
    child.process.wait()
    child.started = {"finish_pass"}
    while child._compile_one_after("finish_pass"):
        pass
    assert compiled == ["_count_specials", "_worst_block"]
    assert child.claimed == {"_count_specials", "_worst_block"}


def test_the_child_skips_what_the_caller_says_it_compiles_itself(tmp_path):
    """A kernel named on the child's standard input before it gets to it is not compiled there
    (the caller compiles it while it waits for another): nothing is compiled twice."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_")}
    env["NUMBA_CACHE_DIR"] = str(tmp_path / "cache")
    code = (
        "from fpinspect.numerics.compile_ahead import compile_calls; compile_calls('<f2', '<f2', 3000, True)"
    )
    # the child's cache is empty: it would compile the pass and its block kernels too
    (pass_call, blocks), after = _calls(np.dtype("<f2"), np.dtype("<f2"), 3000, True)
    claimed = [kernel.__name__ for kernel, _ in compile_ahead.child_calls([*blocks, pass_call], after)]
    assert claimed[-2:] == ["kl_pass", "_kl_sums"]
    claimed = claimed[:-2]  # all but KL's pass and its sums
    out = subprocess.run(
        [sys.executable, "-c", code],
        input="".join(name + "\n" for name in claimed),
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    assert out.stdout.split() == ["+kl_pass", "kl_pass", "+_kl_sums", "_kl_sums"], out.stdout


def test_the_child_of_a_bfloat16_pair_compiles_its_kernels(tmp_path):
    """ml_dtypes' formats are told to the child by name (their ``dtype.str`` is a raw ``'<V2'``,
    for which the child failed at once and the caller compiled everything itself). What the
    child is told is what :func:`compile_ahead.start` tells it; the caller claims all but KL's
    pass and its sums, which the child then compiles for bfloat16 pairs."""
    bf16 = np.dtype(ml_dtypes.bfloat16)
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_")}
    env["NUMBA_CACHE_DIR"] = str(tmp_path / "cache")
    told = compile_ahead.spelling(bf16)
    code = f"from fpinspect.numerics.compile_ahead import compile_calls; compile_calls({told!r}, {told!r}, 3000, True)"
    (pass_call, blocks), after = _calls(bf16, bf16, 3000, True)
    claimed = [kernel.__name__ for kernel, _ in compile_ahead.child_calls([*blocks, pass_call], after)][:-2]
    out = subprocess.run(
        [sys.executable, "-c", code],
        input="".join(name + "\n" for name in claimed),
        capture_output=True,
        text=True,
        env=env,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["+kl_pass", "kl_pass", "+_kl_sums", "_kl_sums"], out.stdout
    assert compile_ahead.spelling(np.dtype(">f2")) == ">f2"


def test_a_child_that_fails_on_a_kernel_is_waited_for_until_it_ends(monkeypatch):
    """A child that started on the kernel asked for and ends without caching it (it failed) is
    not waited for beyond its end; the caller then compiles the kernel itself."""
    quitter = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import time; print('kl_pass'); print('+finish_pass', flush=True); time.sleep(0.5)",
        ],
        stdout=subprocess.PIPE,
    )
    child = compile_ahead._Child(quitter)
    monkeypatch.setattr(compile_ahead, "_children", [child])
    deadline = time.monotonic() + 30
    while "finish_pass" not in child.started and time.monotonic() < deadline:
        child._read(0.1)  # until it has said what it started on (a loaded machine starts it late)
    compile_ahead.wait(K.finish_pass)
    assert compile_ahead._children == [] and child.named == {"kl_pass"} and quitter.returncode == 0


def test_a_kernel_the_child_has_not_started_on_is_not_waited_for(monkeypatch):
    """The caller compiles it itself at once (sooner than the child, busy with another, would
    get to it), and the child, still compiling, stays on the list."""
    busy = subprocess.Popen(
        [sys.executable, "-c", "import time; print('+_keep_block', flush=True); time.sleep(30)"],
        stdout=subprocess.PIPE,
    )
    try:
        child = compile_ahead._Child(busy)
        monkeypatch.setattr(compile_ahead, "_children", [child])
        started = time.monotonic()
        compile_ahead.wait(K.finish_pass)
        assert time.monotonic() - started < 5 and compile_ahead._children == [child]
    finally:
        busy.kill()
        busy.wait()


def test_nothing_is_compiled_ahead_of_a_warm_pair(monkeypatch):
    """Kernels this process already compiled (or loaded) start no child."""
    from fpinspect.numerics.stats import accumulate

    a = np.linspace(-1, 1, 100).astype(np.float16)
    accumulate(a, a * np.float16(1.01)).error_stats()  # the pass and the percentiles' selection
    monkeypatch.setattr(compile_ahead, "_started", set())
    monkeypatch.setattr(compile_ahead, "_children", [])
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


def _figures(s) -> str:
    """Every figure of a pair's statistics, exactly (repr keeps NaN, inf and every digit)."""
    scalars = {k: v for k, v in vars(s).items() if isinstance(v, (int, float, np.integer, np.floating))}
    arrays = {k: v.tolist() for k, v in vars(s).items() if isinstance(v, np.ndarray)}
    moments = [vars(s.x_moments), vars(s.y_moments)]
    return repr(
        (sorted(scalars.items()), sorted(arrays.items()), moments, s.error_stats(percentiles=(50, 90, 99)))
    )


@pytest.mark.parametrize("jobs", [1, 2])
def test_chunks_finished_after_a_child_compiled_finish_pass_give_the_figures_of_chunks_finished_at_once(
    monkeypatch, jobs
):
    """While a child is still compiling finish_pass, the pass goes on and finishes the chunks
    after (read again): special values (NaN, inf, both sides) in the deferred chunks and after
    them, the largest error first reached in a deferred chunk and reached again later (the
    lower index stays), the worst elements spread over both: every figure, sums included, the
    same bit for bit as finishing each chunk at once."""

    n = 200_000
    g = np.random.default_rng(11)
    ref = g.standard_normal(n).astype(np.float16)
    x = (ref.astype(np.float32) * g.choice([1.0, 1.001, 1.01], n)).astype(np.float16)
    x[[5, 40_000, 150_000]] = np.nan
    ref[[5, 90_000]] = np.nan
    x[[7, 120_000]], ref[[8, 120_001]] = np.inf, -np.inf
    x[30_000], ref[30_000] = 60.0, 1.0  # the largest abs error, in a deferred chunk ...
    x[170_000], ref[170_000] = 60.0, 1.0  # ... and the same one later: index 30 000 stays
    at_once = accumulate_with(monkeypatch, x, ref, jobs, deferred_chunks=0)
    late = accumulate_with(monkeypatch, x, ref, jobs, deferred_chunks=6)
    assert late.max_abs_index == 30_000 and late.nan_mismatch > 0 and late.inf_mismatch > 0
    assert _figures(late) == _figures(at_once)


def accumulate_with(monkeypatch, x, ref, jobs, deferred_chunks):
    """``accumulate`` (chunks of 8192 elements, KL, 12 worst) with finish_pass said to be coming
    from a child for the first ``deferred_chunks`` chunks each thread's share of the pass feeds;
    how many chunks were deferred is checked."""
    from fpinspect.numerics import stats

    feeding = threading.local()  # the pass state the thread feeds
    fed: dict[int, int] = {}
    deferred = []

    def coming(kernel):
        key = id(feeding.state)
        fed[key] = fed.get(key, 0) + 1
        return fed[key] <= deferred_chunks

    feed, finish = stats._Pass.feed, stats._Pass._finish_deferred

    def fed_by(state, *args):
        feeding.state = state
        feed(state, *args)

    def finishing(state):
        deferred.append(len(state.deferred))
        finish(state)

    monkeypatch.setattr(compile_ahead, "coming", coming)
    monkeypatch.setattr(stats._Pass, "feed", fed_by)
    monkeypatch.setattr(stats._Pass, "_finish_deferred", finishing)
    s = stats.accumulate(x, ref, jobs=jobs, chunk=8192, worst=12, kl=True)
    assert deferred == [deferred_chunks] * jobs
    return s


def test_the_child_compiles_this_fpinspect_whatever_folder_it_is_started_in(tmp_path):
    """Started in a folder that holds another ``fpinspect`` (a checkout of another version), the
    child still imports the caller's (it would compile the other's kernels, for nobody, and the
    caller all of its own itself): the rarer work comes out of its cache."""
    decoy = tmp_path / "elsewhere" / "fpinspect"
    decoy.mkdir(parents=True)
    marker = tmp_path / "imported"
    (decoy / "__init__.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    script = tmp_path / "first_pair.py"
    script.write_text(
        textwrap.dedent(
            """
            import numpy as np
            from fpinspect.numerics import kernels as K
            from fpinspect.numerics.stats import accumulate
            a = np.linspace(-3, 3, 3000).astype(np.float16)
            accumulate(a, (a * np.float16(1.001)).astype(np.float16))
            print(sum(K.finish_pass.stats.cache_hits.values()), sum(K.finish_pass.stats.cache_misses.values()))
            """
        )
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_")}
    env["NUMBA_CACHE_DIR"] = str(tmp_path / "cache")
    out = subprocess.run(
        [sys.executable, str(script)], cwd=decoy.parent, capture_output=True, text=True, env=env, check=True
    )
    assert not marker.exists() and out.stdout.split() == ["1", "0"], (out.stdout, out.stderr[-2000:])


def test_a_forked_child_keeps_no_descriptor_of_its_parent(tmp_path):
    """A forked child holds its two pipes and the null device only: not the parent's standard
    output, say, whose reader would otherwise wait for the child's end, seconds after the
    parent's (``fpinspect diff ... | head``)."""
    code = """
        import os, numpy as np
        from fpinspect.numerics import compile_ahead
        compile_ahead.start(np.dtype("<f2"), np.dtype("<f2"), 3000, True)
        child = compile_ahead._children[0].process
        fds = os.listdir(f"/proc/{child.pid}/fd")
        targets = sorted(os.readlink(f"/proc/{child.pid}/fd/{fd}") for fd in fds)
        print(type(child).__name__, os.readlink("/proc/self/fd/1"), *targets, sep="\\n")
    """
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_")}
    env["NUMBA_CACHE_DIR"] = str(tmp_path / "cache")
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=env, check=True
    )
    kind, stdout, *targets = out.stdout.split("\n")[:-1]
    assert kind == "_ForkedChild" and stdout.startswith("pipe:"), out.stdout
    assert stdout not in targets, out.stdout
    assert sorted(set(targets)) == sorted({"/dev/null", *(t for t in targets if t.startswith("pipe:"))})
    assert targets.count("/dev/null") == 3 and len(targets) == 5, targets  # 0, 1, 2 and two pipes
