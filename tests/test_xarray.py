"""xarray keeps a view as a duck array: ``DataArray(view).data`` stays a ``BroadcastView``
through selection, transposition, arithmetic and reductions, with NumPy's values.

xarray accepts a duck array that has ``ndim``, ``shape``, ``dtype``, ``__array_function__``
and ``__array_ufunc__`` (``xarray.namedarray.utils.is_duck_array``); its reductions of float
data call ``np.nanmean`` & co., which the view implements at source cost.
"""

import numpy as np
import pytest

import lazybcast
from lazybcast import BroadcastView

xr = pytest.importorskip("xarray", reason="xarray is an optional test dependency")


@pytest.fixture(params=["float64", "int32"])
def arrays(request):
    src = (np.arange(12, dtype=request.param) % 5).reshape(1, 3, 4)
    if request.param == "float64":
        src = src.copy()
        src[0, 1, 2] = np.nan
    view = lazybcast.broadcast_to(src, (500, 3, 4))
    ref = np.broadcast_to(src, (500, 3, 4))
    dims = ("time", "y", "x")
    return xr.DataArray(view, dims=dims), xr.DataArray(ref, dims=dims)


def _same(got, expected, max_source=12):
    assert type(got.data) is BroadcastView, type(got.data)
    assert got.data.source.size <= max_source
    assert got.dims == expected.dims
    xr.testing.assert_allclose(got.copy(data=got.data.materialize()), expected)


def test_is_a_duck_array():
    from xarray.namedarray.utils import is_duck_array

    view = lazybcast.broadcast_to(np.arange(3.0), (2, 3))
    assert is_duck_array(view)
    assert type(xr.DataArray(view, dims=("a", "b")).data) is BroadcastView


@pytest.mark.filterwarnings("ignore:Degrees of freedom <= 0:RuntimeWarning")  # older xarray
@pytest.mark.parametrize("op", [
    lambda d: d.isel(time=slice(10, 20)),
    lambda d: d.isel(time=3),
    lambda d: d.transpose("x", "time", "y"),
    lambda d: d * 2 + 1,
    lambda d: -d,
    lambda d: np.exp(d),
    lambda d: d > 2,
    lambda d: d.mean("time"),
    lambda d: d.mean("x"),
    lambda d: d.mean(),
    lambda d: d.sum("time", skipna=False),
    lambda d: d.max("y"),
    lambda d: d.std("time"),
    lambda d: d.var("x", ddof=1),
    lambda d: d.argmax("x"),
    lambda d: d.isel(time=slice(0, 100)).transpose("x", "y", "time").mean("time") * 3,
    lambda d: d.expand_dims("band"),
    lambda d: d.astype("float32"),
], ids=lambda op: None)
def test_operations_keep_the_view(arrays, op):
    da, ref = arrays
    got = op(da)
    expected = op(ref)
    if got.ndim == 0:
        xr.testing.assert_allclose(got, expected)
        return
    _same(got, expected)


def test_arithmetic_between_arrays_broadcasts_lazily():
    a = xr.DataArray(lazybcast.broadcast_to(np.arange(4.0), (1000, 4)), dims=("t", "x"))
    b = xr.DataArray(lazybcast.broadcast_to(np.arange(3.0)[:, None], (3, 4)), dims=("y", "x"))
    got = a + b
    assert type(got.data) is BroadcastView
    assert got.sizes == {"t": 1000, "x": 4, "y": 3}
    assert got.data.source.size == 12
    expected = np.asarray(a)[:, :, None] + np.asarray(b).T[None]
    np.testing.assert_array_equal(got.transpose("t", "x", "y").data.materialize(), expected)
