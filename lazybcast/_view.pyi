# Stub for the compiled module lazybcast/_view.pyx. C-level types are kept as comments
# (intp_t is Py_ssize_t); cdef-only members (_wrap, _check_out, _with_source, _size) are not
# visible from Python and are not listed. Checked against the build by tests/test_stubs.py.

from collections.abc import Callable, Iterator
from typing import Any, Final, NoReturn, TypeVar, overload

import numpy as np
from typing_extensions import disjoint_base

MODES: Final[tuple[str, ...]]

_Out = TypeVar("_Out")

def _format_bytes(n: float) -> str: ...

@disjoint_base  # a cdef class: its C layout cannot be combined with another
class BroadcastView:
    # cdef readonly object _source: an np.ndarray with the view's rank, each axis the view's
    # size or 1
    @property
    def _source(self) -> np.ndarray[Any, Any]: ...
    @property
    def shape(self) -> tuple[int, ...]: ...  # cdef readonly tuple
    @property
    def strides(self) -> tuple[int, ...]: ...  # cdef readonly tuple (0 on broadcast axes)
    @property
    def base(self) -> np.ndarray[Any, Any]: ...  # cdef readonly object
    @property
    def mode(self) -> str: ...  # cdef readonly str
    # cdef intp_t _size (not visible)
    def __init__(self, *args: Any, **kwargs: Any) -> None: ...  # always raises TypeError
    @staticmethod
    def _checked(
        source: np.ndarray[Any, Any],
        shape: tuple[int, ...],
        base: np.ndarray[Any, Any] | None = None,
        mode: str = "numpy",
    ) -> BroadcastView: ...
    @property
    def dtype(self) -> np.dtype[Any]: ...
    @property
    def ndim(self) -> int: ...
    @property
    def size(self) -> int: ...  # intp_t
    @property
    def itemsize(self) -> int: ...
    @property
    def nbytes(self) -> int: ...
    @property
    def source(self) -> np.ndarray[Any, Any]: ...
    @property
    def T(self) -> NoReturn: ...  # always raises AttributeError
    def __len__(self) -> int: ...
    # out: an ndarray or any writeable DLPack / buffer-protocol object; returned as given
    @overload
    def materialize(
        self,
        out: None = None,
        *,
        dtype: np.typing.DTypeLike | None = None,
        threads: int | None = None,
    ) -> np.ndarray[Any, Any]: ...
    @overload
    def materialize(
        self,
        out: _Out,
        *,
        dtype: np.typing.DTypeLike | None = None,
        threads: int | None = None,
    ) -> _Out: ...
    def __array__(
        self, dtype: np.typing.DTypeLike | None = None, copy: bool | None = None
    ) -> np.ndarray[Any, Any]: ...
    # A lazy BroadcastView for basic keys; an ndarray (advanced keys) or a NumPy scalar.
    def __getitem__(self, key: Any, /) -> Any: ...
    def __setitem__(self, key: Any, value: Any, /) -> NoReturn: ...  # always raises TypeError
    def __delitem__(self, key: Any, /) -> NoReturn: ...
    def __iter__(self) -> Iterator[Any]: ...
    def iter_batches(
        self,
        batch_size: int,
        *,
        out: Any = None,  # a buffer, or a list/tuple of buffers (a ring)
        drop_last: bool = False,
        prefetch: int = 0,
    ) -> Iterator[Any]: ...  # ndarrays, or slices of the caller's buffers
    def __reduce__(self) -> tuple[Callable[..., BroadcastView], tuple[Any, ...]]: ...
    def __dask_tokenize__(self) -> tuple[Any, ...]: ...
    # dask.array.Array (typed as Any so that type checking does not need dask installed)
    def to_dask(self, chunks: Any = "auto") -> Any: ...

def _rebuild(
    source: np.ndarray[Any, Any],
    shape: tuple[int, ...],
    mode: str,
    base_shape: tuple[int, ...] | None = None,
) -> BroadcastView: ...
def make_view(
    data: np.ndarray[Any, Any],
    aligned: tuple[int, ...],  # tuple
    shape: tuple[int, ...],  # tuple
    mode: str,  # str
) -> BroadcastView: ...
