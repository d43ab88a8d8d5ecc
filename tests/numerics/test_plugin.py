"""The pytest plugin's fixtures, as a user's test suite sees them."""

import numpy as np
import pytest


def test_fixtures_pass_on_good_data(assert_ulp, assert_bit_equal):
    x = np.linspace(-1, 1, 101).astype(np.float16)
    assert_bit_equal(x, x.copy())
    assert_ulp(x, np.nextafter(x, np.float16(2)), max_ulp=1)


def test_assert_ulp_report_names_worst_elements(assert_ulp):
    x = np.zeros((3, 4), np.float16)
    y = x.copy()
    y[2, 1] = np.float16(2**-24) * 5
    y[0, 3] = np.nan
    with pytest.raises(AssertionError) as err:
        assert_ulp(x, y, max_ulp=1)
    text = str(err.value)
    assert "2 of 12 elements differ by more than 1 ULP" in text
    assert "[2, 1]" in text and "0x0005" in text and "[0, 3]" in text and "0x7e00" in text
    # a NaN mismatch is listed first
    assert text.index("[0, 3]") < text.index("[2, 1]")


def test_assert_bit_equal_catches_signed_zero(assert_bit_equal):
    with pytest.raises(AssertionError, match="1 of 2 elements are not bit-identical"):
        assert_bit_equal(np.array([0.0, 1.0], np.float32), np.array([-0.0, 1.0], np.float32))
    with pytest.raises(AssertionError, match="dtypes differ"):
        assert_bit_equal(np.zeros(2, np.float32), np.zeros(2, np.float16))
