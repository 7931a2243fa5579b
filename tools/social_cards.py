"""Render the social preview cards: static/mica/social-card.en.png and .ko.png.

Link previews (Open Graph, Twitter cards) show these 1200 × 630 images; every
page's <head> in templates/base.html points to the one of its language. Each
card is an HTML page rendered by headless Chromium (Debian's chromium package,
driven by Playwright) and saved as PNG. The words come from the interface
catalogue (locale/ko), so the Korean card says what the Korean site says.

Run it after changing the words, the look or the catalogue, and commit the
PNGs it writes:

    .venv/bin/python tools/social_cards.py

It needs /usr/bin/chromium (or `chromium` on PATH) and, for the Korean card, a
Korean font such as Debian's fonts-noto-cjk; it refuses to write a card whose
text would fall back to missing-glyph boxes.
"""

import html
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUTPUT = ROOT / "static" / "mica"
WIDTH, HEIGHT = 1200, 630
LANGUAGES = ("en", "ko")

CARD = """<!DOCTYPE html>
<html lang="{lang}">
<head><meta charset="utf-8"><style>
  html, body {{ margin: 0; width: {width}px; height: {height}px; }}
  body {{
    box-sizing: border-box; display: flex; flex-direction: column; justify-content: space-between;
    padding: 72px 80px 64px; background: #ffffff; color: #1a1a1a;
    border-top: 24px solid #0b4f9c;
    font-family: "Noto Sans CJK KR", "Noto Sans KR", "Apple SD Gothic Neo", system-ui, sans-serif;
  }}
  :lang(ko) {{ word-break: keep-all; }}
  :lang(ko) .eyebrow {{ letter-spacing: 0.02em; }}
  .eyebrow {{
    margin: 0; color: #4a4a4a; font-size: 28px; letter-spacing: 0.08em; text-transform: uppercase;
  }}
  .wordmark {{ margin: 8px 0 0; font-size: 168px; font-weight: 800; letter-spacing: 0.08em;
    line-height: 1; }}
  .name {{ margin: 20px 0 0; font-size: 52px; font-weight: 700; line-height: 1.2; }}
  .line {{ margin: 0; padding-top: 28px; border-top: 4px solid #b3400b; color: #4a4a4a;
    font-size: 32px; line-height: 1.4; }}
</style></head>
<body>
  <div>
    <p class="eyebrow">{eyebrow}</p>
    <p class="wordmark">MICA</p>
    <p class="name">{name}</p>
  </div>
  <p class="line">{line}</p>
</body>
</html>
"""


def card_words(language):
    """The card's words in one language, from the interface catalogue."""
    from django.utils import translation
    from django.utils.translation import gettext

    with translation.override(language):
        return {
            "eyebrow": gettext("Consumer-agent benchmark"),
            "name": gettext("Multinational Index of Consumer Agents"),
            "line": gettext(
                "A public benchmark method for consumer-agent systems doing everyday errands, "
                "judged by what actually happened."
            ),
        }


def card_html(language):
    words = {key: html.escape(value) for key, value in card_words(language).items()}
    return CARD.format(lang=language, width=WIDTH, height=HEIGHT, **words)


def chromium_path():
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if not path:
        sys.exit("Debian's chromium package is not installed")
    return path


def has_font_for(language):
    """Whether fontconfig knows a font for the language (Chromium draws boxes otherwise)."""
    fc_list = shutil.which("fc-list")
    if not fc_list:
        return True
    found = subprocess.run([fc_list, f":lang={language}", "family"], capture_output=True, text=True)
    return bool(found.stdout.strip())


def render(languages=LANGUAGES):
    from playwright.sync_api import sync_playwright

    missing = [language for language in languages if not has_font_for(language)]
    if missing:
        sys.exit(f"No font for {', '.join(missing)} (install fonts-noto-cjk): no card written")
    written = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=chromium_path(), headless=True, args=["--no-sandbox"]
        )
        page = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT}, device_scale_factor=1)
        for language in languages:
            page.set_content(card_html(language), wait_until="load")
            page.evaluate("document.fonts.ready")
            target = OUTPUT / f"social-card.{language}.png"
            page.screenshot(
                path=str(target), clip={"x": 0, "y": 0, "width": WIDTH, "height": HEIGHT}
            )
            written.append(target)
        browser.close()
    return written


def main():
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mica.settings")
    import django

    django.setup()
    for target in render():
        print(target.relative_to(ROOT))


if __name__ == "__main__":
    main()
