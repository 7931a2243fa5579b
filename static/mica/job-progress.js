// While a job run on this admin page is queued or running, fetch the page again every
// second and swap in its runs, so the progress a worker reports is seen as it moves.
// When the last one finishes, the status line says so to assistive technology too.
(function () {
  "use strict";
  var REGIONS = ["result_list", "jobrun_form"];
  var UNFINISHED = 'progress[data-job-state="queued"], progress[data-job-state="running"]';
  var status = null;

  function checkedRuns() {
    return Array.prototype.map.call(
      document.querySelectorAll("input[name=_selected_action]:checked"),
      function (box) { return box.value; }
    );
  }

  function swap(fresh) {
    var checked = checkedRuns();
    REGIONS.forEach(function (id) {
      var old = document.getElementById(id);
      var renewed = fresh.getElementById(id);
      if (old && renewed) old.replaceWith(document.adoptNode(renewed));
    });
    checked.forEach(function (value) {
      var box = document.querySelector('input[name=_selected_action][value="' + value + '"]');
      if (box) box.checked = true;
    });
  }

  function redraw() {
    fetch(window.location.href, { credentials: "same-origin", headers: { Accept: "text/html" } })
      .then(function (response) {
        if (!response.ok) throw new Error(String(response.status));
        return response.text();
      })
      .then(function (html) {
        swap(new DOMParser().parseFromString(html, "text/html"));
        if (document.querySelector(UNFINISHED)) {
          window.setTimeout(redraw, 1000);
        } else if (status) {
          status.textContent = status.dataset.finished;
        }
      })
      .catch(function () { window.setTimeout(redraw, 5000); });
  }

  // The admin loads this script in the page's head, before the runs are drawn.
  document.addEventListener("DOMContentLoaded", function () {
    status = document.getElementById("job-progress-status");
    if (document.querySelector(UNFINISHED)) window.setTimeout(redraw, 1000);
  });
})();
