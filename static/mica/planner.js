/* Scope planner, enhanced: the summary follows every tick without a reload.
 * The rules mirror mica/site/planner.py; the form still submits, and the
 * server's answer is the authority. Words live in the page (both languages),
 * so this script only moves numbers and shows or hides what is already there. */
(function () {
  "use strict";

  var form = document.querySelector("[data-planner]");
  if (!form) { return; }

  // Which side of the matrix each mode takes from the reader's choice.
  var MODES = {
    "country-focused": { market: true, task: false },
    "task-focused": { market: false, task: true },
    "custom-matrix": { market: true, task: true },
    "full-benchmark": { market: false, task: false }
  };
  var FALLBACK_MODE = "custom-matrix";

  function all(selector, root) {
    return Array.prototype.slice.call((root || document).querySelectorAll(selector));
  }

  function boxes(name) {
    return all('input[type="checkbox"][name="' + name + '"]', form);
  }

  function currentMode() {
    var radio = form.querySelector('input[name="mode"]:checked');
    return radio && MODES[radio.value] ? radio.value : FALLBACK_MODE;
  }

  function side(name, chosen) {
    return boxes(name).filter(function (box) { return !chosen || box.checked; });
  }

  // The markets a task applies in travel with its checkbox (data-applies).
  function appliesIn(box, code) {
    return (box.getAttribute("data-applies") || "").split(" ").indexOf(code) !== -1;
  }

  function scopeOf(mode) {
    var rule = MODES[mode];
    var markets = side("market", rule.market).map(function (box) { return box.value; });
    var tasks = side("task", rule.task);
    var missing = [];
    if (!markets.length) { missing.push("market"); }
    if (!tasks.length) { missing.push("task"); }
    var planned = missing.length ? 0 : markets.length * tasks.length;
    var eligible = 0;
    if (!missing.length) {
      tasks.forEach(function (box) {
        eligible += markets.filter(function (code) { return appliesIn(box, code); }).length;
      });
    }
    return {
      mode: mode, markets: markets, tasks: tasks, missing: missing,
      figures: {
        markets: markets.length, tasks: tasks.length, planned: planned,
        eligible: eligible, "not-applicable": planned - eligible
      }
    };
  }

  function manifestQuery(scope) {
    var rule = MODES[scope.mode];
    var params = new URLSearchParams();
    params.append("mode", scope.mode);
    if (rule.market) { scope.markets.forEach(function (code) { params.append("market", code); }); }
    if (rule.task) { scope.tasks.forEach(function (box) { params.append("task", box.value); }); }
    return params.toString();
  }

  // Boxes the mode ignores are disabled, so nobody ticks something that counts for nothing.
  function disableIgnoredGroups(mode) {
    all("[data-planner-group]", form).forEach(function (group) {
      group.disabled = !MODES[mode][group.getAttribute("data-planner-group")];
    });
  }

  function showFigures(scope) {
    Object.keys(scope.figures).forEach(function (name) {
      all('[data-figure="' + name + '"]').forEach(function (node) {
        var text = String(scope.figures[name]);
        if (node.textContent !== text) { node.textContent = text; }
      });
    });
  }

  function showErrors(scope) {
    var summary = document.querySelector("[data-planner-errors]");
    if (summary) { summary.hidden = !scope.missing.length; }
    all("[data-error-for]").forEach(function (node) {
      node.hidden = scope.missing.indexOf(node.getAttribute("data-error-for")) === -1;
    });
  }

  function showManifest(scope) {
    var holder = document.querySelector("[data-planner-manifest]");
    if (!holder) { return; }
    holder.hidden = scope.missing.length > 0;
    var link = holder.querySelector("a");
    link.href = form.getAttribute("data-manifest-base") + "?" + manifestQuery(scope);
  }

  function cellItem(code, box) {
    var item = document.createElement("li");
    var name = document.createElement("code");
    name.textContent = box.value;
    item.appendChild(document.createTextNode(code + " \u00b7 " + box.getAttribute("data-title") + " "));
    item.appendChild(name);
    return item;
  }

  function showNotApplicable(scope) {
    var details = document.querySelector("[data-planner-cells]");
    if (!details) { return; }
    var list = details.querySelector("ul");
    var items = [];
    if (!scope.missing.length) {
      scope.markets.forEach(function (code) {
        scope.tasks.forEach(function (box) {
          if (!appliesIn(box, code)) { items.push(cellItem(code, box)); }
        });
      });
    }
    list.replaceChildren.apply(list, items);
    details.hidden = !items.length;
  }

  function update() {
    var mode = currentMode();
    var scope = scopeOf(mode);
    disableIgnoredGroups(mode);
    showFigures(scope);
    showErrors(scope);
    showManifest(scope);
    showNotApplicable(scope);
  }

  form.addEventListener("change", update);
  update();

  // After a submitted empty scope, take the reader straight to what went wrong.
  var errors = document.querySelector("[data-planner-errors]");
  if (errors && !errors.hidden) { errors.focus(); }
}());
