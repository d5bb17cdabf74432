"""lazybcast: broadcasting as lazy views, materialized by typed ``nogil`` Cython kernels.

>>> import numpy as np, lazybcast
>>> v = lazybcast.broadcast_to(np.arange(4.0), (1_000_000, 4))
>>> v.nbytes, v.base.nbytes
(32000000, 32)
"""

# Run from a source checkout after `pip install .` (the README's commands do exactly that),
# `python -m` puts the checkout first on sys.path, and this package directory has no compiled
# modules. extend_path() adds the installed copy's directory to the package path, so the
# compiled modules are found there. With an in-place build, the checkout's own come first.
from pkgutil import extend_path as _extend_path

__path__ = _extend_path(__path__, __name__)

from lazybcast._api import broadcast, broadcast_arrays, broadcast_shapes, broadcast_to
from lazybcast._batches import RowDataset, collate
from lazybcast._memmap import pickle_by_value
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
    "collate",
    "pickle_by_value",
]
