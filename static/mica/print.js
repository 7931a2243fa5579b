/* Print every collapsed section open: task contracts, superseded statements.
 * CSS alone cannot open a <details> in every browser (site.css also uses
 * ::details-content where it exists), so the closed ones are opened just before
 * printing and closed again afterwards, leaving the reader's own choices alone. */
(function () {
  "use strict";

  var opened = [];
  var marked = [];

  window.addEventListener("beforeprint", function () {
    var closed = document.querySelectorAll("details:not([open])");
    for (var i = 0; i < closed.length; i += 1) {
      closed[i].open = true;
      opened.push(closed[i]);
    }
    // site.css prints the address after an external link; not when the link's
    // own text already is that address.
    var links = document.querySelectorAll('main a[href^="http"]');
    for (var j = 0; j < links.length; j += 1) {
      if (links[j].textContent.trim() === links[j].getAttribute("href")) {
        links[j].setAttribute("data-href-shown", "");
        marked.push(links[j]);
      }
    }
  });

  window.addEventListener("afterprint", function () {
    while (opened.length) { opened.pop().open = false; }
    while (marked.length) { marked.pop().removeAttribute("data-href-shown"); }
  });
}());
