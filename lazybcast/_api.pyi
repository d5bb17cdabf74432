# Stub for lazybcast/_api.py: the public broadcast functions (see their docstrings).
# Checked against the runtime by tests/test_stubs.py.

from collections.abc import Sequence
from typing import Any, SupportsIndex

import numpy as np
import numpy.typing as npt

from lazybcast._view import BroadcastView

__all__ = ["broadcast", "broadcast_arrays", "broadcast_shapes", "broadcast_to"]

# A 1-D sequence of integers or a 1-D integer array.
_ShapeLike = Sequence[SupportsIndex] | np.ndarray[Any, np.dtype[np.integer[Any]]]

def broadcast(
    data: npt.ArrayLike,
    target_shape: _ShapeLike,
    axes_mapping: _ShapeLike | None = None,
    *,
    mode: str = "numpy",
    axis: SupportsIndex = -1,
) -> BroadcastView: ...
def broadcast_to(data: npt.ArrayLike, shape: SupportsIndex | _ShapeLike) -> BroadcastView: ...
def broadcast_shapes(*shapes: SupportsIndex | Sequence[SupportsIndex]) -> tuple[int, ...]: ...
def broadcast_arrays(*arrays: npt.ArrayLike) -> tuple[BroadcastView, ...]: ...
