# The gate is tested on records ingested as an operator and as MICA staff would send them.
from tests.submissions.conftest import payload  # noqa: F401
