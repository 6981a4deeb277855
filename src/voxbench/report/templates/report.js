// Report page behaviour: search and filter turns and records, open the turn a link points to, one player at a time.
(function () {
  "use strict";
  // Filters: a verdict button, words typed in the search box (every word must occur in the
  // item's text: what was said, tool names and arguments, verdict reasons), and a select per
  // facet (data-facet="task" compares each item's data-task). All work offline.
  var turns = Array.prototype.slice.call(document.querySelectorAll("[data-verdict]"));
  var buttons = Array.prototype.slice.call(document.querySelectorAll("[data-filter]"));
  var search = document.getElementById("search");
  var facets = Array.prototype.slice.call(document.querySelectorAll("select[data-facet]"));
  var groups = Array.prototype.slice.call(document.querySelectorAll("[data-group]"));
  var counter = document.getElementById("shown-count");
  var kind = "all";
  function verdictMatches(el) {
    var verdict = el.getAttribute("data-verdict");
    return kind === "all" || verdict === kind ||
      (kind === "problems" && verdict !== "pass" && verdict !== "right");
  }
  function wordsMatch(el, words) {
    if (!words.length) { return true; }
    var text = el.textContent.toLowerCase();
    return words.every(function (w) { return text.indexOf(w) >= 0; });
  }
  function facetsMatch(el) {
    return facets.every(function (f) {
      return !f.value || el.getAttribute("data-" + f.getAttribute("data-facet")) === f.value;
    });
  }
  function apply() {
    var query = search ? search.value.trim().toLowerCase() : "";
    var words = query ? query.split(/\s+/) : [];
    var shown = 0;
    turns.forEach(function (el) {
      var show = verdictMatches(el) && facetsMatch(el) && wordsMatch(el, words);
      el.classList.toggle("hidden", !show);
      if (show) { shown += 1; }
    });
    groups.forEach(function (g) {
      g.classList.toggle("hidden", !g.querySelector("[data-verdict]:not(.hidden)"));
    });
    buttons.forEach(function (b) {
      b.setAttribute("aria-pressed", String(b.getAttribute("data-filter") === kind));
    });
    if (counter) { counter.textContent = shown + " of " + turns.length + " shown"; }
  }
  function applyFilter(k) { kind = k; apply(); }
  buttons.forEach(function (b) {
    b.addEventListener("click", function () { applyFilter(b.getAttribute("data-filter")); });
  });
  if (search) { search.addEventListener("input", apply); }
  facets.forEach(function (f) { f.addEventListener("change", apply); });
  Array.prototype.forEach.call(document.querySelectorAll("[data-expand]"), function (b) {
    b.addEventListener("click", function () {
      var open = b.getAttribute("data-expand") === "open";
      Array.prototype.forEach.call(document.querySelectorAll("details.turn"), function (d) {
        d.open = open;
      });
    });
  });
  function openTarget() {
    if (!location.hash) { return; }
    var el = document.getElementById(decodeURIComponent(location.hash.slice(1)));
    if (el && el.tagName === "DETAILS") { el.classList.remove("hidden"); el.open = true; }
  }
  window.addEventListener("hashchange", openTarget);
  openTarget();
  document.addEventListener("play", function (event) {
    Array.prototype.forEach.call(document.querySelectorAll("audio"), function (a) {
      if (a !== event.target && !a.paused) { a.pause(); }
    });
  }, true);
})();
