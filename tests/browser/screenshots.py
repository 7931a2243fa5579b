"""Screenshots for the manual: with MICA_SCREENSHOTS set (to docs/screenshots, say), a
browser test's `shoot(page, "authors/01-sign-in", "ko")` saves what the page shows as
MICA_SCREENSHOTS/ko/authors/01-sign-in.png, 1280 × 800; without it, nothing is written.
The PNGs are squeezed with pngquant or optipng when the machine has them."""

import os
import shutil
import subprocess
from pathlib import Path

VIEWPORT = {"width": 1280, "height": 800}


def screenshots_dir():
    folder = os.environ.get("MICA_SCREENSHOTS")
    return Path(folder) if folder else None


def _squeezed(path):
    if shutil.which("pngquant"):
        subprocess.run(
            [
                "pngquant",
                "--force",
                "--skip-if-larger",
                "--quality=70-95",
                "--strip",
                "--output",
                str(path),
                str(path),
            ],
            check=False,
        )
    if shutil.which("optipng"):
        subprocess.run(["optipng", "-quiet", "-o2", "-strip", "all", str(path)], check=False)


def shoot(page, name, language, at=None):
    """Save the visible part of `page` as the manual's screenshot `name` in `language`:
    from the top of the page, or from the element `at` (a selector) when given."""
    folder = screenshots_dir()
    if folder is None:
        return None
    path = folder / language / f"{name}.png"
    path.parent.mkdir(parents=True, exist_ok=True)
    page.set_viewport_size(VIEWPORT)
    if at is None:
        page.evaluate("window.scrollTo(0, 0)")
    else:
        page.locator(at).first.evaluate("element => element.scrollIntoView()")
    page.screenshot(path=str(path), animations="disabled", caret="hide")
    _squeezed(path)
    return path
