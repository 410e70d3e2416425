(function () {
  "use strict";
  // The data is the compact document of _html_data.py: rows failures first ([index, id,
  // status, duration, input, checks, output, detail, run, connector, tags, cost]), the pages of
  // the cases that did not pass as text, shared strings written once ({"$": n}). Everything user-written reaches
  // the page through textContent only.
  var raw = JSON.parse(document.getElementById("report-data").textContent);
  var strings = raw.strings || [];

  function decode(value) {
    if (Array.isArray(value)) { return value.map(decode); }
    if (value !== null && typeof value === "object") {
      if (Object.prototype.hasOwnProperty.call(value, "$o")) { return decodeFields(value.$o); }
      if (Object.prototype.hasOwnProperty.call(value, "$")) { return strings[value.$]; }
      return decodeFields(value);
    }
    return value;
  }
  function decodeFields(object) {
    var out = {};
    Object.keys(object).forEach(function (key) { out[key] = decode(object[key]); });
    return out;
  }

  var cases = decode(raw.cases || []);
  var details = raw.details || [];  // decoded when a case is opened
  var PAGE = 200;
  var statusFilter = document.getElementById("status-filter");
  var search = document.getElementById("search");
  var counter = document.getElementById("shown-count");
  var body = document.querySelector("#case-table tbody");
  var more = document.getElementById("more");
  var matching = [];
  var listed = 0;
  var haystacks = null;  // built on the first search

  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) { node.className = className; }
    if (text !== undefined && text !== null) { node.textContent = String(text); }
    return node;
  }
  function duration(ms) {
    if (ms === null || ms === undefined) { return "-"; }
    if (ms < 1000) { return Math.round(ms) + "ms"; }
    if (ms < 60000) { return (ms / 1000).toFixed(1) + "s"; }
    var minutes = Math.floor(ms / 60000);
    return minutes + "m" + Math.round((ms - minutes * 60000) / 1000) + "s";
  }
  function badge(status) { return el("span", "badge s-" + status, status); }
  function pre(text) { return el("pre", "", text); }
  function heading(text) { return el("h4", "", text); }
  function table(head, rows) {
    var t = el("table"), thead = el("thead"), tr = el("tr"), tbody = el("tbody");
    head.forEach(function (h) { tr.appendChild(el("th", "", h)); });
    thead.appendChild(tr); t.appendChild(thead);
    rows.forEach(function (cells) {
      var row = el("tr");
      cells.forEach(function (cell) {
        var td = el("td");
        if (cell instanceof Node) { td.appendChild(cell); } else { td.textContent = cell; }
        row.appendChild(td);
      });
      tbody.appendChild(row);
    });
    t.appendChild(tbody);
    return t;
  }
  function mark(ok, yes, no) { return el("span", ok ? "ok" : "bad", ok ? yes : no); }

  function assertionCell(item) {
    var cell = el("div", "", item[2]);
    item[3].forEach(function (pair) {  // expected / actual / the checker's own words
      var line = el("div", "cmp");
      line.appendChild(el("span", "cmp-label", pair[0] + ": "));
      line.appendChild(el("code", "", pair[1]));
      cell.appendChild(line);
    });
    return cell;
  }
  function toolTable(calls) {
    return table(["#", "Server", "Tool", "Status", "Arguments", "Result"], calls.map(function (c, i) {
      return [String(i + 1), c[0] || "-", el("code", "", c[1]),
        c[2] ? el("span", "bad", c[2]) : el("span", "ok", "ok"), pre(c[3]), pre(c[4] || "-")];
    }));
  }

  function passedPage(row) {
    var box = el("div", "body");
    if (row[10] && row[10].length) { box.appendChild(el("p", "tags", "Tags: " + row[10].join(", "))); }
    box.appendChild(heading("Input")); box.appendChild(pre(row[4]));
    box.appendChild(heading("Output")); box.appendChild(pre(row[6] || "(no output)"));
    if (row[11]) { box.appendChild(el("p", "", "Cost: " + row[11])); }
    box.appendChild(el("p", "note", (row[5] === "-" ? "No assertions" : "Assertions passed: " + row[5]) +
      ". A " + row[2] + " case's trace is left out of the report; the results file has it."));
    return box;
  }

  function casePage(row) {
    if (row[7] === undefined || row[7] === null) { return passedPage(row); }
    var d = decode(details[row[7]]);
    var box = el("div", "body");
    if (d.error) {
      var error = el("div", "error-box");
      error.appendChild(heading("Error")); error.appendChild(pre(d.error));
      box.appendChild(error);
    }
    if (row[10] && row[10].length) { box.appendChild(el("p", "tags", "Tags: " + row[10].join(", "))); }
    box.appendChild(heading("Input")); box.appendChild(pre(d.input));
    box.appendChild(heading("Output")); box.appendChild(pre(d.output));
    if (d.expected !== undefined) { box.appendChild(heading("Expected")); box.appendChild(pre(d.expected)); }
    if (d.assertions) {
      box.appendChild(heading("Assertions"));
      box.appendChild(table(["Type", "Result", "Message"], d.assertions.map(function (a) {
        return [el("code", "", a[0]), mark(a[1], "pass", "fail"), assertionCell(a)];
      })));
    }
    if (d.tools) { box.appendChild(heading("Tool calls")); box.appendChild(toolTable(d.tools)); }
    if (d.checkpoints) {
      box.appendChild(heading("Checkpoints"));
      box.appendChild(table(["Checkpoint", "Required", "Reached", "Turn", "Message"], d.checkpoints.map(function (p) {
        return [el("code", "", p[0]), p[1] ? "yes" : "no", mark(p[2], "reached", "not reached"), String(p[3]), p[4]];
      })));
    }
    if (d.turns) {
      box.appendChild(heading("Transcript"));
      var list = el("ol", "turns");
      d.turns.forEach(function (t) {
        var li = el("li");
        var head = el("div", "turn-head", "Turn " + t.turn + " · " + t.duration);
        if (t.reached.length) { head.appendChild(el("span", "ok", " · ✓ " + t.reached.join(", "))); }
        li.appendChild(head);
        li.appendChild(el("div", "who", "User")); li.appendChild(pre(t.user));
        li.appendChild(el("div", "who", "Agent")); li.appendChild(pre(t.agent));
        if (t.tools.length) { li.appendChild(el("div", "who", "Tool calls")); li.appendChild(toolTable(t.tools)); }
        if (t.error) { li.appendChild(el("div", "who", "Error")); li.appendChild(pre(t.error)); }
        list.appendChild(li);
      });
      box.appendChild(list);
    }
    if (d.usage) {
      box.appendChild(heading("Usage"));
      var dl = el("dl", "meta");
      Object.keys(d.usage).forEach(function (key) {
        dl.appendChild(el("dt", "", key));
        dl.appendChild(el("dd", "", d.usage[key] === null ? "-" : d.usage[key]));
      });
      box.appendChild(dl);
    }
    return box;
  }

  function toggle(tr, row) {
    var next = tr.nextElementSibling;
    if (next && next.classList.contains("case-page")) {
      next.hidden = !next.hidden;
      return;
    }
    var page = el("tr", "case-page");
    page.id = "case-" + row[0];
    var td = el("td"); td.colSpan = 6;
    td.appendChild(casePage(row));
    page.appendChild(td);
    tr.parentNode.insertBefore(page, tr.nextSibling);
  }

  function rowElement(row) {
    var tr = el("tr");
    tr.setAttribute("data-index", row[0]);
    tr.setAttribute("data-status", row[2]);
    tr.appendChild(el("td", "num", row[0] + 1));
    var idCell = el("td"), link = el("a");
    link.href = "#case-" + row[0];
    link.appendChild(el("code", "", row[1]));
    link.addEventListener("click", function (event) { event.preventDefault(); toggle(tr, row); });
    idCell.appendChild(link);
    if (row[8] !== null && row[8] !== undefined) { idCell.appendChild(document.createTextNode(" (run " + row[8] + ")")); }
    if (row[9]) { idCell.appendChild(document.createTextNode(" @ ")); idCell.appendChild(el("span", "connector", row[9])); }
    if (row[10] && row[10].length) { idCell.appendChild(el("span", "tags", " " + row[10].join(" "))); }
    tr.appendChild(idCell);
    var statusCell = el("td"); statusCell.appendChild(badge(row[2])); tr.appendChild(statusCell);
    tr.appendChild(el("td", "num", duration(row[3])));
    tr.appendChild(el("td", "num", row[5]));
    tr.appendChild(el("td", "preview", row[4].replace(/\s+/g, " ").slice(0, 100)));
    return tr;
  }

  function listMore() {
    var fragment = document.createDocumentFragment();
    var end = Math.min(listed + PAGE, matching.length);
    for (; listed < end; listed += 1) { fragment.appendChild(rowElement(matching[listed])); }
    body.appendChild(fragment);
    var left = matching.length - listed;
    more.hidden = left <= 0;
    more.textContent = "Show " + Math.min(PAGE, left) + " more (" + left + " not listed)";
    counter.textContent = matching.length + " of " + cases.length + " shown" +
      (left > 0 ? " (" + listed + " listed)" : "");
  }

  function haystack(row) {
    var d = row[7] === undefined || row[7] === null ? {} : decode(details[row[7]]);
    return [row[1], row[4], row[6] || "", (row[10] || []).join(" "), d.output || "", d.error || ""]
      .join("\n").toLowerCase();
  }

  function apply() {
    var status = statusFilter.value;
    var query = search.value.trim().toLowerCase();
    if (query !== "" && haystacks === null) { haystacks = cases.map(haystack); }
    matching = [];
    cases.forEach(function (row, i) {
      if ((status === "all" || row[2] === status) && (query === "" || haystacks[i].indexOf(query) !== -1)) {
        matching.push(row);
      }
    });
    body.textContent = "";
    listed = 0;
    listMore();
  }

  // A link to a case (the matrix's cells): list it, open its page, go there.
  function openCase(index) {
    var position = -1;
    matching.forEach(function (row, i) { if (row[0] === index) { position = i; } });
    if (position === -1) { statusFilter.value = "all"; search.value = ""; apply(); return openCase(index); }
    while (listed <= position) { listMore(); }
    var tr = body.querySelector('tr[data-index="' + index + '"]');
    var page = document.getElementById("case-" + index);
    if (!page) { toggle(tr, matching[position]); } else { page.hidden = false; }
    tr.scrollIntoView();
  }

  statusFilter.addEventListener("change", apply);
  search.addEventListener("input", apply);
  more.addEventListener("click", listMore);
  document.querySelectorAll("a[data-open]").forEach(function (link) {
    link.addEventListener("click", function (event) {
      event.preventDefault();
      openCase(Number(link.getAttribute("data-open").replace("case-", "")));
    });
  });
  apply();
  // The first failures open at once: what a reader came for.
  for (var i = 0, opened = 0; i < listed && opened < 5; i += 1) {
    var first = matching[i];
    if (first[2] === "failed" || first[2] === "error" || first[2] === "timeout") {
      toggle(body.querySelector('tr[data-index="' + first[0] + '"]'), first);
      opened += 1;
    }
  }
  // A link to the report with #case-N opens that case.
  var wanted = /^#case-(\d+)$/.exec(window.location.hash);
  if (wanted && cases.some(function (row) { return row[0] === Number(wanted[1]); })) {
    openCase(Number(wanted[1]));
  }
  document.body.setAttribute("data-ready-ms", String(Math.round(performance.now())));
})();
