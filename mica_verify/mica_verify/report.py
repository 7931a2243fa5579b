"""What was checked and every mismatch, by name: printed for a person or as JSON."""

import json
import math
from dataclasses import dataclass, field

# Figures are compared to this relative (and, near zero, absolute) tolerance: the export
# writes floats in full, so anything wider is a different figure, not rounding.
TOLERANCE = 1e-9


@dataclass
class Report:
    source: str
    checked: dict = field(default_factory=dict)  # area -> how many checks passed or failed
    mismatches: list = field(default_factory=list)  # {"area", "name", "detail"}

    def check(self, area, name, passed, detail=""):
        self.checked[area] = self.checked.get(area, 0) + 1
        if not passed:
            self.mismatches.append({"area": area, "name": name, "detail": detail})
        return passed

    def fail(self, area, name, detail):
        return self.check(area, name, False, detail)

    def compare(self, area, name, published, recomputed):
        """A published figure against the recomputed one."""
        same = figures_equal(published, recomputed)
        detail = "" if same else f"published {_short(published)}, recomputed {_short(recomputed)}"
        return self.check(area, name, same, detail)

    @property
    def passed(self):
        return not self.mismatches and bool(self.checked)

    def as_json(self):
        return {
            "source": self.source,
            "passed": self.passed,
            "checked": self.checked,
            "mismatches": self.mismatches,
        }

    def as_text(self):
        lines = [f"mica_verify: {self.source}"]
        lines += [f"  checked {count:6d}  {area}" for area, count in self.checked.items()]
        for mismatch in self.mismatches:
            detail = f": {mismatch['detail']}" if mismatch["detail"] else ""
            lines.append(f"MISMATCH {mismatch['area']}: {mismatch['name']}{detail}")
        verdict = "every check passed" if self.passed else f"{len(self.mismatches)} mismatches"
        lines.append(f"mica_verify: {verdict}")
        return "\n".join(lines) + "\n"

    def dumps(self):
        return json.dumps(self.as_json(), ensure_ascii=False, indent=1) + "\n"


def figures_equal(a, b):
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return math.isclose(a, b, rel_tol=TOLERANCE, abs_tol=TOLERANCE)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(figures_equal(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(figures_equal(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def _short(value):
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 200 else text[:197] + "..."
