/* The API reference's console: sends one of the schema's request examples (or the
 * reader's own body) to the API with the reader's token, and shows the answer as it is.
 * Words live in the page (both languages); this script only moves them. The token goes
 * in the Authorization header to this site alone and is kept nowhere. */
(function () {
  "use strict";

  var form = document.querySelector(".try-console");
  var data = document.getElementById("try-examples");
  if (!form || !data || !window.fetch) { return; }

  var examples = JSON.parse(data.textContent);
  var token = form.querySelector("#try-token");
  var choice = form.querySelector("#try-example");
  var body = form.querySelector("#try-body");
  var status = form.querySelector("#try-status");
  var answer = form.querySelector("#try-answer");

  function showExample() {
    var example = examples[choice.value];
    body.value = example ? JSON.stringify(JSON.parse(example.body), null, 2) : "";
  }

  function say(template, value) {
    status.textContent = template.replace("{status}", value);
  }

  function show(response) {
    return response.text().then(function (text) {
      var shown = text;
      try { shown = JSON.stringify(JSON.parse(text), null, 2); } catch (notJson) { /* as sent */ }
      answer.textContent = shown;
      answer.hidden = false;
      say(form.dataset.answered, response.status);
    });
  }

  choice.addEventListener("change", showExample);
  form.addEventListener("submit", function (event) {
    event.preventDefault();
    if (!token.value.trim()) {
      say(form.dataset.noToken, "");
      token.focus();
      return;
    }
    say(form.dataset.sending, "");
    answer.hidden = true;
    window.fetch(form.dataset.endpoint, {
      method: "POST",
      credentials: "omit",
      headers: {
        "Authorization": "Token " + token.value.trim(),
        "Content-Type": "application/json",
        "Accept": "application/json",
        "Accept-Language": document.documentElement.lang || "en"
      },
      body: body.value
    }).then(show, function () { say(form.dataset.networkError, ""); });
  });

  document.querySelector(".try-needs-script").hidden = true;
  form.hidden = false;
  showExample();
}());
