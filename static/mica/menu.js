/* Primary navigation behind a "Menu" button on narrow screens.
 * Without this script the button stays hidden and the list stays open, so the
 * navigation works everywhere; site.css collapses the list only once
 * [data-menu-enhanced] is set, and only below its narrow-screen breakpoint.
 * The button's two labels come from the page, in the page's language. */
(function () {
  "use strict";

  var nav = document.querySelector("[data-menu]");
  if (!nav) { return; }
  var toggle = nav.querySelector(".menu-toggle");
  var list = toggle && document.getElementById(toggle.getAttribute("aria-controls"));
  if (!list) { return; }

  function isOpen() {
    return toggle.getAttribute("aria-expanded") === "true";
  }

  function setOpen(open) {
    toggle.setAttribute("aria-expanded", open ? "true" : "false");
    toggle.textContent = toggle.getAttribute(open ? "data-label-open" : "data-label-closed");
  }

  // A native button: Enter and Space already arrive here as a click.
  toggle.addEventListener("click", function () {
    setOpen(!isOpen());
  });

  // Escape closes from anywhere; focus goes back to the button unless the reader
  // had already moved on into the page.
  document.addEventListener("keydown", function (event) {
    if (event.key !== "Escape" || !isOpen()) { return; }
    var focused = document.activeElement;
    setOpen(false);
    if (!focused || focused === document.body || nav.contains(focused)) { toggle.focus(); }
  });

  // Following a link closes the menu, also for links within the same page.
  list.addEventListener("click", function (event) {
    if (event.target.closest && event.target.closest("a")) { setOpen(false); }
  });

  setOpen(false);
  toggle.hidden = false;
  nav.setAttribute("data-menu-enhanced", "");
}());
