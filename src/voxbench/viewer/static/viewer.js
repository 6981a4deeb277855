// voxbench viewer: sortable tables, searching turns, picking two runs to compare, following a live run.
(function () {
  "use strict";
  var script = document.currentScript;

  // A cell without a number (or not ranked) is null: it sorts last whichever way a column is sorted.
  function cellValue(row, index, numeric) {
    var cell = row.children[index];
    if (!cell) return numeric ? null : "";
    var raw = cell.hasAttribute("data-value") ? cell.getAttribute("data-value") : cell.textContent;
    if (!numeric) return raw.trim().toLowerCase();
    if (cell.hasAttribute("data-unranked")) return null;  // shown, never ranked
    var n = parseFloat(raw);
    return isNaN(n) ? null : n;
  }

  function makeSortable(table) {
    var headers = table.querySelectorAll("thead th[data-sort]");
    headers.forEach(function (th) {
      th.classList.add("sort");
      th.setAttribute("tabindex", "0");
      function sort() {
        var index = Array.prototype.indexOf.call(th.parentNode.children, th);
        var numeric = th.getAttribute("data-sort") === "number";
        // The first click ranks the best first: a lower-is-better metric (WER, latency)
        // ascending, any other descending; the next click turns it round.
        var first = th.getAttribute("data-better") === "lower" ? "ascending" : "descending";
        var current = th.getAttribute("aria-sort");
        var order = current ? (current === "ascending" ? "descending" : "ascending") : first;
        var descending = order === "descending";
        headers.forEach(function (h) { h.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", order);
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (a, b) {
          var x = cellValue(a, index, numeric), y = cellValue(b, index, numeric);
          if (x === y) return 0;
          if (x === null) return 1;
          if (y === null) return -1;
          return (x < y ? -1 : 1) * (descending ? -1 : 1);
        });
        rows.forEach(function (r) { body.appendChild(r); });
      }
      th.addEventListener("click", sort);
      th.addEventListener("keydown", function (e) { if (e.key === "Enter") sort(); });
    });
  }

  function comparePicker(form) {
    var button = form.querySelector("#compare-button");
    var boxes = form.querySelectorAll("input.pick");
    function picked() {
      return Array.prototype.filter.call(boxes, function (b) { return b.checked; });
    }
    boxes.forEach(function (box) {
      box.addEventListener("change", function () {
        var chosen = picked();
        if (chosen.length > 2) { box.checked = false; chosen = picked(); }
        button.disabled = chosen.length !== 2;
      });
    });
    form.addEventListener("submit", function (e) {
      var chosen = picked();
      if (chosen.length !== 2) { e.preventDefault(); return; }
      form.querySelector("#compare-a").value = chosen[0].value;
      form.querySelector("#compare-b").value = chosen[1].value;
      boxes.forEach(function (b) { b.disabled = true; });  // only a and b in the URL
    });
  }

  function followRun(url, status) {
    if (!url || status !== "started") return;
    var seen = null;
    function poll() {
      fetch(url, { cache: "no-store" })
        .then(function (r) { return r.ok ? r.json() : null; })
        .then(function (data) {
          if (!data) return;
          if (seen !== null && data.signature !== seen) { window.location.reload(); return; }
          seen = data.signature;
          if (data.live) window.setTimeout(poll, 2000);
          else if (seen !== null) window.location.reload();
        })
        .catch(function () { window.setTimeout(poll, 5000); });
    }
    poll();
  }

  function start() {
    document.querySelectorAll("table.sortable").forEach(makeSortable);
    var onlyFailed = document.getElementById("only-failed");
    var turns = document.getElementById("turns");
    if (onlyFailed && turns) {
      onlyFailed.addEventListener("change", function () {
        turns.classList.toggle("only-failed", onlyFailed.checked);
      });
    }
    var search = document.getElementById("turn-search");
    if (search && turns) {
      // Every word typed must occur in the turn's text (said, tools, verdict reasons).
      search.addEventListener("input", function () {
        var words = search.value.trim().toLowerCase().split(/\s+/).filter(Boolean);
        Array.prototype.forEach.call(turns.tBodies[0].rows, function (row) {
          var text = row.textContent.toLowerCase();
          var match = words.every(function (w) { return text.indexOf(w) >= 0; });
          row.classList.toggle("no-match", !match);
        });
      });
    }
    var form = document.getElementById("compare-form");
    if (form) comparePicker(form);
    if (script && script.dataset.live) followRun(script.dataset.live, script.dataset.status);
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
