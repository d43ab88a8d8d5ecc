"""pytest plugin (entry point ``pytest11``): precision assertions as fixtures.

    def test_kernel(assert_ulp):
        assert_ulp(my_kernel(x), reference(x), max_ulp=1)

Failures list the worst elements with their indices, values and bit patterns.
"""

from __future__ import annotations

import pytest

from .numerics import testing as _t


@pytest.fixture
def assert_ulp():
    """``assert_ulp(actual, expected, max_ulp=1)``: every element within ``max_ulp`` ULPs."""
    return _t.assert_ulp


@pytest.fixture
def assert_bit_equal():
    """``assert_bit_equal(actual, expected)``: same shape, dtype and bit patterns."""
    return _t.assert_bit_equal
