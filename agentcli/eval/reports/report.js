(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("report-data").textContent);
  var results = data.results || [];
  var haystacks = results.map(function (r) { return JSON.stringify(r).toLowerCase(); });
  var statusFilter = document.getElementById("status-filter");
  var search = document.getElementById("search");
  var counter = document.getElementById("shown-count");

  function apply() {
    var status = statusFilter.value;
    var query = search.value.trim().toLowerCase();
    var shown = 0;
    document.querySelectorAll("[data-index]").forEach(function (el) {
      var i = Number(el.getAttribute("data-index"));
      var visible = (status === "all" || el.getAttribute("data-status") === status) &&
        (query === "" || haystacks[i].indexOf(query) !== -1);
      el.hidden = !visible;
      if (visible && el.tagName === "TR") { shown += 1; }
    });
    counter.textContent = shown + " of " + results.length + " shown";
  }

  statusFilter.addEventListener("change", apply);
  search.addEventListener("input", apply);
  document.querySelectorAll("button.raw-toggle").forEach(function (button) {
    button.addEventListener("click", function () {
      var pre = button.nextElementSibling;
      if (pre.hidden && pre.textContent === "") {
        pre.textContent = JSON.stringify(results[Number(button.getAttribute("data-raw"))], null, 2);
      }
      pre.hidden = !pre.hidden;
      button.textContent = pre.hidden ? "Show raw JSON" : "Hide raw JSON";
    });
  });
  document.querySelectorAll("a[data-open]").forEach(function (link) {
    link.addEventListener("click", function () {
      var target = document.getElementById(link.getAttribute("data-open"));
      if (target) { target.open = true; }
    });
  });
  apply();
})();
