"""mica_verify: check a MICA export set and recompute its figures from the set alone.

Written apart from the portal on purpose: the formulas here are re-implemented from the
method's text, so a figure the portal computed wrongly disagrees with this package
instead of being checked against itself.
"""

__version__ = "0.1.0"
