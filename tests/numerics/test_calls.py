"""The passes' calls to their block kernels through tables of addresses (fpinspect.numerics.calls)."""

import numpy as np
import pytest

from fpinspect.numerics import kernels as K
from fpinspect.numerics import stats


def _pair():
    a = np.linspace(-3, 3, 3000).astype(np.float16)
    return a, (a.astype(np.float32) * 1.001).astype(np.float16)


def test_a_pass_compiles_without_its_block_kernels_code():
    """numba links a directly called kernel's module into its caller (and optimises it again);
    called through the table, the pass's compiled library links none of its block kernels'
    (numba's runtime library only), nor does the exact percentiles' selection link the kernel it
    narrows a bucket with, nor KL's pass its sums and decoding. Compiled afresh here: one loaded
    from the cache says nothing."""
    import numba

    stats.accumulate(*_pair(), worst=3, kl=True).error_stats()  # 3000 values: exact, by select_ranks
    kernels = (*K._CALLEES, K._select_within, K._kl_sums)
    callees = {id(c.library) for k in kernels for c in k.overloads.values()}
    names = [k.__name__ for k in kernels]
    for driver in (K.fused_pass, K.finish_pass, K.select_ranks, K.kl_pass):
        options = {k: v for k, v in driver.targetoptions.items() if k != "nopython"}  # njit's own
        fresh = numba.njit(**{**options, "cache": False})(driver.py_func)
        fresh.compile(driver.signatures[0])
        compiled = fresh.overloads[driver.signatures[0]]
        linked = getattr(compiled.library, "_linking_libraries", None)
        assert linked is not None, "numba's code library no longer says what it links"
        assert not [lib for lib in linked if id(lib) in callees or any(n in lib.name for n in names)], (
            driver.__name__,
            [lib.name for lib in linked],
        )


def test_a_table_made_for_other_types_is_an_error_not_a_call_into_the_wrong_code():
    """Each call checks its slot's stamp of the argument types before calling the address: a
    table of another plan (float32 pairs, other array types) is refused in one sentence."""
    a, b = _pair()
    st = stats.accumulate(a, b, worst=3)
    plan = st.plan
    other = stats.accumulate(a.astype(np.float32), b.astype(np.float32), worst=3).plan
    state = stats._Pass(plan, (np.empty(a.size), np.empty(a.size), np.empty(a.size)))
    try:
        va, vb = plan.views(a, plan.a_decode), plan.views(b, plan.b_decode)
        args = state._arguments(0, va, vb)
        wrong = other.tables(K.block_calls, ())  # made already: no arguments needed
        with pytest.raises(RuntimeError, match="the kernel table has no _centre for these types"):
            K.fused_pass(*args[:-1], wrong)
        with pytest.raises(RuntimeError, match="has no _centre"):
            K.fused_pass(*args[:-1], np.zeros_like(wrong))  # an empty table: nothing to call
        K.fused_pass(*args)  # its own table
    finally:
        state.release()


def test_a_slot_that_says_the_wrong_return_type_is_refused_when_its_table_is_made():
    """A pass is typed with what each slot says its kernel returns (its callees uncompiled): a
    kernel that returns something else is refused before anything calls it."""
    from numba import njit, types

    from fpinspect.numerics import calls

    @njit(no_cpython_wrapper=True, no_cfunc_wrapper=True)
    def halve(x):
        return x / 2.0

    calls.slot(halve, types.int64)
    with pytest.raises(RuntimeError, match=r"halve returns float64, not the int64 its slot says"):
        calls.table([(halve, (3.0,))])
    calls.slot(halve, types.float64)
    assert calls.table([(halve, (3.0,))]).any()
