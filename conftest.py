"""Make ``python -m pytest`` from the repository root test the *installed* lazybcast.

``python -m`` puts the current directory first on ``sys.path``, so the source tree's
``lazybcast/`` (which has no compiled modules after a plain ``pip install .``) would shadow the
installed package. When the tree holds no built extension, drop it from the path. An in-place
or editable build (``pip install -e .``) keeps testing the tree.
"""

import glob
import os
import sys

_ROOT = os.path.dirname(os.path.abspath(__file__))

if not glob.glob(os.path.join(_ROOT, "lazybcast", "_view.*.so")) + glob.glob(
    os.path.join(_ROOT, "lazybcast", "_view.*.pyd")
):
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _ROOT]
