// Report page behaviour: filter turns, open the turn a link points to, one player at a time.
(function () {
  "use strict";
  var turns = Array.prototype.slice.call(document.querySelectorAll("[data-verdict]"));
  var buttons = Array.prototype.slice.call(document.querySelectorAll("[data-filter]"));
  function applyFilter(kind) {
    turns.forEach(function (el) {
      var show = kind === "all" || el.getAttribute("data-verdict") === kind ||
        (kind === "problems" && el.getAttribute("data-verdict") !== "pass");
      el.classList.toggle("hidden", !show);
    });
    buttons.forEach(function (b) {
      b.setAttribute("aria-pressed", String(b.getAttribute("data-filter") === kind));
    });
  }
  buttons.forEach(function (b) {
    b.addEventListener("click", function () { applyFilter(b.getAttribute("data-filter")); });
  });
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
