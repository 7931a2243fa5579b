"""Screen readers get every form field's help and error texts, read from Chromium's
accessibility tree.

Issue 18: "`aria-describedby` points to ids that do not exist, so screen readers miss
help and error texts"; acceptance: "screen readers get help and error texts on every
form (checked through the accessibility tree in the browser tests)".
"""

import pytest

from tests.browser.reading import db, site  # noqa: F401 (the fixtures)

pytestmark = pytest.mark.browser


# Each field of a form, as a sighted reader sees it: its control (a group of boxes is one
# control, its fieldset), marked so the accessibility tree can be asked about it, and the
# help and error texts printed in its .field box.
FIELDS = """() => [...document.querySelectorAll("main form .field")]
  .filter((box) => !box.closest(".honeypot"))
  .map((box, number) => {
    const control = box.querySelector("fieldset, input:not([type=hidden]), textarea, select");
    control.setAttribute("data-field", number);
    return {
      name: control.id || control.querySelector("legend").textContent.trim(),
      selector: `[data-field="${number}"]`,
      shown: [...box.querySelectorAll(".help, .errors")]
        .map((text) => text.textContent.replace(/\\s+/g, " ").trim()),
    };
  })"""


def accessible_description(cdp, selector):
    """The description Chromium's accessibility tree gives the element `selector` finds."""
    root = cdp.send("DOM.getDocument", {"depth": 0})["root"]["nodeId"]
    node = cdp.send("DOM.querySelector", {"nodeId": root, "selector": selector})["nodeId"]
    tree = cdp.send("Accessibility.getPartialAXTree", {"nodeId": node, "fetchRelatives": False})
    described = [n for n in tree["nodes"] if not n.get("ignored")][0]
    return " ".join(described.get("description", {}).get("value", "").split())


def unsaid_texts(page):
    """Per field, the help and error texts on screen its accessible description lacks;
    and how many texts there were."""
    cdp = page.context.new_cdp_session(page)
    fields = page.evaluate(FIELDS)
    assert len(fields) > 4
    unsaid = {}
    for field in fields:
        description = accessible_description(cdp, field["selector"])
        if missing := [text for text in field["shown"] if text not in description]:
            unsaid[field["name"]] = {"shown": missing, "described": description}
    return unsaid, sum(len(field["shown"]) for field in fields)


@pytest.mark.parametrize("prefix", ["", "/ko"])
@pytest.mark.parametrize("path", ["/submit/challenge/", "/submit/system/"])
def test_every_help_and_error_text_is_in_its_fields_description(page, site, prefix, path):
    page.goto(f"{site}{prefix}{path}")
    unsaid, texts = unsaid_texts(page)
    assert texts > 0 and unsaid == {}, unsaid
    # Sent empty, the form comes back with an error beside each required field.
    with page.expect_navigation():
        page.locator("main form button[type=submit]").click()
    assert page.locator("main form .errors").count() > 2
    unsaid, texts = unsaid_texts(page)
    assert texts > 6 and unsaid == {}, unsaid
