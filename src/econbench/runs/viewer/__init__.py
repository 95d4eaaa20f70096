"""``econbench view``: a local web page to browse runs, also while they are written.

:mod:`~econbench.runs.viewer.data` finds the runs, the ``*_data`` modules read them
incrementally, :mod:`~econbench.runs.viewer.server` serves the page and a JSON API on the
loopback, and ``static/`` holds the page (plain JavaScript, no external resources).
"""

from econbench.runs.viewer.data import Catalog, ViewerPathError, check_root
from econbench.runs.viewer.server import NotLoopbackError, ViewerServer, serve_in_thread

__all__ = [
    "Catalog",
    "NotLoopbackError",
    "ViewerPathError",
    "ViewerServer",
    "check_root",
    "serve_in_thread",
]
