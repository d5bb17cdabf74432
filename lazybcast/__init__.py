"""lazybcast: broadcasting as lazy views, materialized by typed ``nogil`` Cython kernels.

>>> import numpy as np, lazybcast
>>> v = lazybcast.broadcast_to(np.arange(4.0), (1_000_000, 4))
>>> v.nbytes, v.base.nbytes
(32000000, 32)
"""

from lazybcast._api import broadcast, broadcast_arrays, broadcast_shapes, broadcast_to
from lazybcast._batches import RowDataset
from lazybcast._version import __version__
from lazybcast._view import BroadcastView

__all__ = [
    "BroadcastView",
    "RowDataset",
    "__version__",
    "broadcast",
    "broadcast_arrays",
    "broadcast_shapes",
    "broadcast_to",
]
