"""Layout conversions: index formulas of ascend_formats.md §3.2, round trips, padding, errors."""

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fpinspect.dumps.formats.layouts import (
    PLAIN_LAYOUTS,
    FormatConversionError,
    FormatUnsupported,
    LayoutError,
    conversions,
    convert_layout,
    converter,
    needs_conversion,
    pack_layout,
    split_layout,
)

RNG = np.random.default_rng(0)


def storage_shape(layout, dst, origin, c0):
    """The storage shape GE gives an origin shape (§3.2), written out independently."""
    up = lambda size, block: -(-size // block)  # noqa: E731
    if layout == "NC1HWC0":
        n, c, h, w = origin if dst == "NCHW" else np.take(origin, (0, 3, 1, 2))
        return (n, up(c, c0), h, w, c0)
    if layout == "NDC1HWC0":
        n, c, d, h, w = origin if dst == "NCDHW" else np.take(origin, (0, 4, 1, 2, 3))
        return (n, d, up(c, c0), h, w, c0)
    if layout == "FRACTAL_NZ":
        *batch, m, n = (1, *origin) if len(origin) == 1 else origin
        return (*batch, up(n, c0), up(m, 16), 16, c0)
    if layout == "FRACTAL_Z":
        n, c, h, w = origin if dst == "NCHW" else np.take(origin, (3, 2, 0, 1))
        return (up(c, c0) * h * w, up(n, 16), 16, c0)
    if layout == "C1HWNCoC0":
        h, w, c, n = origin
        return (up(c, c0), h, w, n, c0, c0)
    raise AssertionError(layout)


def expected_from_formula(layout, dst, x, origin):
    """The §3.2 index formula evaluated element by element (vectorised with np.indices)."""
    if layout == "NC1HWC0":
        c0 = x.shape[-1]
        if dst == "NCHW":
            n, c, h, w = np.indices(origin)
        else:  # NHWC and ND
            n, h, w, c = np.indices(origin)
        return x[n, c // c0, h, w, c % c0]
    if layout == "NDC1HWC0":
        c0 = x.shape[-1]
        if dst == "NCDHW":
            n, c, d, h, w = np.indices(origin)
        else:
            n, d, h, w, c = np.indices(origin)
        return x[n, d, c // c0, h, w, c % c0]
    if layout == "FRACTAL_NZ":
        c0, m0 = x.shape[-1], x.shape[-2]
        flat = x.reshape(-1, *x.shape[-4:])
        mat = (1, *origin) if len(origin) == 1 else origin
        b, r, c = np.indices((flat.shape[0], *mat[-2:]))
        return flat[b, c // c0, r // m0, r % m0, c % c0].reshape(origin)
    if layout == "FRACTAL_Z":
        c0, n0 = x.shape[-1], x.shape[-2]
        if dst == "NCHW":
            n, c, h, w = np.indices(origin)
            H, W = origin[2], origin[3]
        else:  # HWCN
            h, w, c, n = np.indices(origin)
            H, W = origin[0], origin[1]
        return x[(c // c0) * H * W + h * W + w, n // n0, n % n0, c % c0]
    if layout == "C1HWNCoC0":
        c0 = x.shape[-1]
        h, w, c, n = np.indices(origin)
        return x[c // c0, h, w, n, c % c0, c % c0]
    raise AssertionError(layout)


#: (storage layout, destination, origin shape in destination order, C0)
CASES = [
    ("NC1HWC0", "NCHW", (2, 3, 4, 5), 16),
    ("NC1HWC0", "NCHW", (1, 16, 2, 2), 16),
    ("NC1HWC0", "NCHW", (2, 33, 1, 3), 16),
    ("NC1HWC0", "NHWC", (2, 4, 5, 17), 16),
    ("NC1HWC0", "ND", (1, 3, 3, 40), 32),
    ("NC1HWC0", "NHWC", (1, 2, 2, 9), 8),
    ("NDC1HWC0", "NCDHW", (2, 20, 3, 2, 2), 16),
    ("NDC1HWC0", "NDHWC", (1, 2, 3, 4, 5), 16),
    ("NDC1HWC0", "ND", (2, 1, 2, 2, 32), 16),
    ("FRACTAL_NZ", "ND", (5,), 16),
    ("FRACTAL_NZ", "ND", (1, 1), 16),
    ("FRACTAL_NZ", "ND", (17, 33), 16),
    ("FRACTAL_NZ", "ND", (16, 16), 16),
    ("FRACTAL_NZ", "ND", (3, 2, 5, 20), 16),
    ("FRACTAL_NZ", "ND", (2, 31, 40), 32),
    ("FRACTAL_Z", "NCHW", (20, 3, 3, 3), 16),
    ("FRACTAL_Z", "NCHW", (16, 32, 1, 1), 16),
    ("FRACTAL_Z", "NCHW", (5, 40, 2, 1), 32),
    ("FRACTAL_Z", "HWCN", (3, 3, 17, 33), 16),
    ("C1HWNCoC0", "HWCN", (2, 3, 20, 5), 16),
    ("C1HWNCoC0", "HWCN", (1, 1, 16, 1), 16),
]
IDS = [f"{s}->{d}{o}c0={c0}" for s, d, o, c0 in CASES]


@pytest.mark.parametrize(("layout", "dst", "origin", "c0"), CASES, ids=IDS)
def test_conversion_follows_the_index_formula(layout, dst, origin, c0):
    x = RNG.standard_normal(storage_shape(layout, dst, origin, c0)).astype(np.float32)
    got = convert_layout(x, layout, dst, origin)
    assert got.shape == origin
    np.testing.assert_array_equal(got, expected_from_formula(layout, dst, x, origin))


@pytest.mark.parametrize(("layout", "dst", "origin", "c0"), CASES, ids=IDS)
@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16, np.float32, np.int8])
def test_round_trip_origin_storage_origin(layout, dst, origin, c0, dtype):
    a = (RNG.standard_normal(origin) * 20).astype(dtype)
    stored = pack_layout(a, dst, layout, c0=c0)
    assert stored.shape == storage_shape(layout, dst, origin, c0) and stored.dtype == a.dtype
    back = convert_layout(stored, layout, dst, origin)
    assert back.dtype == a.dtype
    bits = f"u{a.dtype.itemsize}"  # bit-exact, NaN included
    np.testing.assert_array_equal(back.view(bits), a.view(bits))


@pytest.mark.parametrize(("layout", "dst", "origin", "c0"), CASES, ids=IDS)
def test_packing_pads_with_zeros(layout, dst, origin, c0):
    a = np.ones(origin, np.float32)
    stored = pack_layout(a, dst, layout, c0=c0)
    assert stored.sum() == a.size  # all padding (and the C1HWNCoC0 off-diagonal) is zero


@pytest.mark.parametrize(("layout", "dst", "origin", "c0"), CASES, ids=IDS)
def test_garbage_in_padding_is_cropped(layout, dst, origin, c0):
    stored = pack_layout(np.ones(origin, np.float32), dst, layout, c0=c0)
    garbage = np.where(stored == 0, np.nan, stored)  # padding bytes are undefined on device
    out = convert_layout(garbage, layout, dst, origin)
    assert not np.isnan(out).any() and (out == 1).all()


# --------------------------------------------------------------------------- property tests


def dim(lo=1, hi=40):
    return st.integers(lo, hi)


@settings(max_examples=60, deadline=None)
@given(
    n=dim(1, 3),
    c=dim(),
    h=dim(1, 4),
    w=dim(1, 4),
    c0=st.sampled_from([4, 8, 16, 32]),
    dst=st.sampled_from(["NCHW", "NHWC", "ND"]),
)
def test_nc1hwc0_round_trip_property(n, c, h, w, c0, dst):
    origin = (n, c, h, w) if dst == "NCHW" else (n, h, w, c)
    a = RNG.standard_normal(origin).astype(np.float16)
    np.testing.assert_array_equal(
        convert_layout(pack_layout(a, dst, "NC1HWC0", c0), "NC1HWC0", dst, origin), a
    )


@settings(max_examples=60, deadline=None)
@given(shape=st.lists(dim(1, 37), min_size=1, max_size=4), c0=st.sampled_from([8, 16, 32]))
def test_fractal_nz_round_trip_property(shape, c0):
    a = RNG.standard_normal(shape).astype(np.float32)
    stored = pack_layout(a, "ND", "FRACTAL_NZ", c0)
    np.testing.assert_array_equal(convert_layout(stored, "FRACTAL_NZ", "ND", tuple(shape)), a)


@settings(max_examples=40, deadline=None)
@given(n=dim(1, 35), c=dim(1, 35), h=dim(1, 3), w=dim(1, 3), c0=st.sampled_from([8, 16, 32]))
def test_fractal_z_round_trip_property(n, c, h, w, c0):
    a = RNG.standard_normal((n, c, h, w)).astype(np.float32)
    np.testing.assert_array_equal(
        convert_layout(pack_layout(a, "NCHW", "FRACTAL_Z", c0), "FRACTAL_Z", "NCHW", a.shape), a
    )
    hwcn = a.transpose(2, 3, 1, 0)
    np.testing.assert_array_equal(
        convert_layout(pack_layout(hwcn, "HWCN", "FRACTAL_Z", c0), "FRACTAL_Z", "HWCN", hwcn.shape), hwcn
    )


@settings(max_examples=30, deadline=None)
@given(h=dim(1, 3), w=dim(1, 3), c=dim(1, 35), n=dim(1, 4), c0=st.sampled_from([4, 16]))
def test_c1hwncoc0_round_trip_property(h, w, c, n, c0):
    a = RNG.standard_normal((h, w, c, n)).astype(np.float32)
    np.testing.assert_array_equal(
        convert_layout(pack_layout(a, "HWCN", "C1HWNCoC0", c0), "C1HWNCoC0", "HWCN", a.shape), a
    )


@settings(max_examples=30, deadline=None)
@given(
    n=dim(1, 2),
    c=dim(1, 35),
    d=dim(1, 3),
    h=dim(1, 3),
    w=dim(1, 3),
    c0=st.sampled_from([8, 16]),
    dst=st.sampled_from(["NCDHW", "NDHWC", "ND"]),
)
def test_ndc1hwc0_round_trip_property(n, c, d, h, w, c0, dst):
    origin = (n, c, d, h, w) if dst == "NCDHW" else (n, d, h, w, c)
    a = RNG.standard_normal(origin).astype(np.float32)
    np.testing.assert_array_equal(
        convert_layout(pack_layout(a, dst, "NDC1HWC0", c0), "NDC1HWC0", dst, origin), a
    )


# --------------------------------------------------------------------------- plain layouts


@pytest.mark.parametrize(
    ("src", "dst"),
    [
        ("NCHW", "ND"),
        ("ND", "NHWC"),
        ("NCHW", "NCHW"),
        (None, "ND"),
        ("", "NCDHW"),
        ("FRACTAL_Z:4", "fractal_z"),
        ("nc1hwc0", "NC1HWC0"),
    ],
)
def test_no_conversion_needed(src, dst):
    assert not needs_conversion(src, dst)


@pytest.mark.parametrize(
    ("src", "dst"), [("NCHW", "NHWC"), ("NC1HWC0", "ND"), ("ND", "FRACTAL_NZ"), (None, "NZ")]
)
def test_conversion_needed(src, dst):
    assert needs_conversion(src, dst)


def test_identity_returns_the_same_array():
    a = np.ones((2, 3))
    assert convert_layout(a, "NCHW", "ND", (9,)) is a
    assert convert_layout(a, "FRACTAL_NZ", "FRACTAL_NZ", None) is a


@pytest.mark.parametrize(
    ("src", "dst", "axes"),
    [
        ("NCHW", "NHWC", (0, 2, 3, 1)),
        ("NHWC", "NCHW", (0, 3, 1, 2)),
        ("NCHW", "HWCN", (2, 3, 1, 0)),
        ("NCDHW", "NDHWC", (0, 2, 3, 4, 1)),
        ("NC", "CN", (1, 0)),
    ],
)
def test_plain_permutations(src, dst, axes):
    a = RNG.standard_normal((2, 3, 4, 5, 6)[: len(src)])
    out = convert_layout(a, src, dst, a.transpose(axes).shape)
    np.testing.assert_array_equal(out, a.transpose(axes))


def test_plain_permutation_checks_the_origin_shape():
    with pytest.raises(FormatConversionError, match="not the permuted shape"):
        convert_layout(np.ones((1, 2, 3, 4)), "NCHW", "NHWC", (1, 2, 3, 4))


def test_layout_names_are_case_insensitive():
    a = np.arange(2 * 3 * 5 * 1, dtype=np.float32).reshape(2, 3, 5, 1)
    stored = pack_layout(a, "hwcn", "c1hwncoc0", 4)
    np.testing.assert_array_equal(convert_layout(stored, "c1hwncoc0", "hwcn", a.shape), a)


# --------------------------------------------------------------------------- registry and errors


def test_required_conversions_are_registered():
    required = {
        ("NC1HWC0", "NCHW"),
        ("NC1HWC0", "NHWC"),
        ("NC1HWC0", "ND"),
        ("NDC1HWC0", "NCDHW"),
        ("NDC1HWC0", "NDHWC"),
        ("NDC1HWC0", "ND"),
        ("FRACTAL_NZ", "ND"),
        ("FRACTAL_Z", "NCHW"),
        ("FRACTAL_Z", "HWCN"),
        ("C1HWNCoC0", "HWCN"),
    }
    assert required <= set(conversions())
    assert {"ND", "NCHW", "NHWC", "HWCN"} <= PLAIN_LAYOUTS


def test_registering_a_pair_twice_is_refused():
    before = conversions()
    with pytest.raises(ValueError, match="already registered"):
        converter("nc1hwc0", "nchw")(lambda x, origin: x)
    assert conversions() == before


def test_split_layout():
    assert split_layout("FRACTAL_Z:16") == ("FRACTAL_Z", 16)
    assert split_layout("NCHW") == ("NCHW", None)
    with pytest.raises(ValueError, match="sub-format"):
        split_layout("FRACTAL_Z:x")


@pytest.mark.parametrize(
    ("src", "dst", "needle"),
    [
        ("FRACTAL_NZ", "NCHW", "FRACTAL_NZ converts to ND"),
        ("NC1HWC0", "HWCN", "registered (NC1HWC0 converts to NCHW, ND, NHWC)"),
        ("MYSTERY", "ND", "MYSTERY is not a known layout"),
        ("FRACTAL_Z:4", "NCHW", "grouped"),
        ("NCHW", "FRACTAL_Z:2", "grouped"),
    ],
)
def test_unsupported_pairs(src, dst, needle):
    with pytest.raises(FormatUnsupported) as err:
        convert_layout(np.ones((4, 1, 16, 16)), src, dst, (16, 16, 1, 1))
    assert isinstance(err.value, LayoutError) and err.value.code == "FORMAT_UNSUPPORTED"
    assert (err.value.src, err.value.dst) == (src, dst)
    assert needle in str(err.value) and str(err.value).startswith(f"cannot convert {src} to {dst}: ")


@pytest.mark.parametrize(
    ("src", "dst", "shape", "origin", "needle"),
    [
        ("NC1HWC0", "NCHW", (1, 2, 4, 4), (1, 32, 4, 4), "NC1HWC0 array must have 5 dimensions, not 4"),
        ("NC1HWC0", "NCHW", (1, 2, 4, 4, 16), (1, 32, 4), "NCHW origin shape must have 4 dimensions"),
        ("NC1HWC0", "NCHW", (1, 2, 4, 4, 16), (1, 40, 4, 4), "origin C=40 is larger than the dumped 2 x 16"),
        (
            "NC1HWC0",
            "NCHW",
            (1, 2, 4, 4, 16),
            (1, 16, 4, 4),
            "origin C=16 needs 1 blocks of 16, the dumped shape has 2",
        ),
        ("NC1HWC0", "NHWC", (1, 2, 4, 4, 16), (2, 4, 4, 20), "origin N=2 differs from the dumped N=1"),
        ("NC1HWC0", "NCHW", (1, 2, 4, 4, 16), (1, 20, 5, 4), "origin H=5 differs"),
        ("NDC1HWC0", "NCDHW", (1, 2, 2, 4, 4, 16), (1, 16, 2, 4, 4), "origin C=16 needs 1 blocks"),
        ("NDC1HWC0", "NDHWC", (1, 2, 1, 4, 4, 16), (1, 3, 4, 4, 16), "origin D=3 differs"),
        ("FRACTAL_NZ", "ND", (2, 16, 16), (16, 32), "at least 4 dimensions"),
        ("FRACTAL_NZ", "ND", (2, 1, 16, 16), (), "at least 1 dimension"),
        ("FRACTAL_NZ", "ND", (2, 1, 16, 16), (17, 32), "origin m (rows)=17 is larger than the dumped 1 x 16"),
        ("FRACTAL_NZ", "ND", (2, 1, 16, 16), (16, 8), "origin n (columns)=8 needs 1 blocks"),
        ("FRACTAL_NZ", "ND", (3, 2, 1, 16, 16), (2, 16, 32), "origin batch dims (2,) hold 2 matrices"),
        ("FRACTAL_Z", "NCHW", (9, 1, 16, 16), (16, 16, 2, 2), "first axis 9 is not C1*H*W = 1*2*2"),
        ("FRACTAL_Z", "NCHW", (4, 1, 16, 16), (17, 16, 2, 2), "origin N=17 is larger"),
        ("FRACTAL_Z", "HWCN", (4, 1, 16), (2, 2, 16, 16), "FRACTAL_Z array must have 4 dimensions"),
        ("C1HWNCoC0", "HWCN", (1, 2, 2, 3, 8, 16), (2, 2, 16, 3), "Co=8 differs from C0=16"),
        ("C1HWNCoC0", "HWCN", (1, 2, 2, 3, 16, 16), (2, 2, 16, 4), "origin N=4 differs"),
        ("NC1HWC0", "NCHW", (1, 2, 4, 4, 16), (1, -1, 4, 4), "unknown (negative) dimensions"),
        ("NC1HWC0", "NCHW", (1, 2, 4, 4, 16), None, "is not a list of integers"),
    ],
)
def test_conversion_errors(src, dst, shape, origin, needle):
    with pytest.raises(FormatConversionError) as err:
        convert_layout(np.zeros(shape, np.float16), src, dst, origin)
    assert isinstance(err.value, LayoutError) and err.value.code == "FORMAT_CONVERSION_ERROR"
    message = str(err.value)
    assert message.startswith(f"cannot convert {src} to {dst}: ") and needle in message


def test_conversion_error_names_both_shapes():
    with pytest.raises(FormatConversionError) as err:
        convert_layout(np.zeros((1, 2, 4, 4, 16)), "NC1HWC0", "NCHW", (1, 40, 4, 4))
    assert "(dumped shape (1, 2, 4, 4, 16), origin shape (1, 40, 4, 4))" in str(err.value)


def test_packing_errors():
    with pytest.raises(FormatUnsupported, match="no packer"):
        pack_layout(np.ones((2, 2)), "ND", "FRACTAL_Z")
    with pytest.raises(FormatConversionError, match="C0 must be positive"):
        pack_layout(np.ones((1, 2, 2, 2)), "NCHW", "NC1HWC0", c0=0)
    with pytest.raises(FormatConversionError, match="NCHW array must have 4 dimensions, not 2"):
        pack_layout(np.ones((2, 2)), "NCHW", "NC1HWC0")
    with pytest.raises(FormatConversionError, match="at least 1 dimension"):
        pack_layout(np.float32(1.0), "ND", "FRACTAL_NZ")
