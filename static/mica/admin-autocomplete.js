// Select2 draws its own combobox for an admin autocomplete field and names it only by
// the chosen value, so an empty one has no accessible name: name it, and the read-only
// text box inside it, by the field's label too. Loaded after the admin's autocomplete.js
// (mica.admin_fields.AUTOCOMPLETE_JS), so this runs after it has drawn the comboboxes.
django.jQuery(function () {
  document.querySelectorAll("select.admin-autocomplete").forEach(function (select) {
    var label = document.querySelector('label[for="' + select.id + '"]');
    var box = select.parentElement.querySelector(".select2-selection");
    if (!label || !box) {
      return;
    }
    label.id = label.id || select.id + "_label";
    var shown = box.querySelector(".select2-selection__rendered");
    box.setAttribute("aria-labelledby", label.id + (shown ? " " + shown.id : ""));
    if (shown) {
      shown.setAttribute("aria-labelledby", label.id + " " + shown.id);
    }
  });
});
