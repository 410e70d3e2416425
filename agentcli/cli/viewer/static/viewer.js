// The viewer's only script: a filter chosen applies at once (the form works without it).
document.addEventListener("DOMContentLoaded", function () {
  var form = document.getElementById("filters");
  if (!form) return;
  form.querySelectorAll("select").forEach(function (select) {
    select.addEventListener("change", function () { form.submit(); });
  });
});
