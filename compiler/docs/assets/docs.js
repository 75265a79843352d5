// lynxc docs: the index page's tool search. The data is embedded in the page
// (<script type="application/json" id="search-data">): a page opened from file:// cannot fetch().
(function () {
  "use strict";
  var data = document.getElementById("search-data");
  var input = document.getElementById("search");
  var list = document.getElementById("search-results");
  var status = document.getElementById("search-status");
  if (!data || !input || !list || !status) return;
  var entries = JSON.parse(data.textContent);
  entries.forEach(function (e) {
    e.haystack = (e.tool + " " + e.tool.replace(/[_.-]/g, " ") + " " + e.title + " " + e.text).toLowerCase();
  });
  var LIMIT = 50;

  function show(query) {
    while (list.firstChild) list.removeChild(list.firstChild);
    var words = query.toLowerCase().split(/\s+/).filter(Boolean);
    if (!words.length) { status.textContent = ""; return; }
    var found = entries.filter(function (e) {
      return words.every(function (w) { return e.haystack.indexOf(w) !== -1; });
    });
    status.textContent = found.length === 0 ? "No tool matches." :
      found.length + (found.length === 1 ? " tool matches." : " tools match.") +
      (found.length > LIMIT ? " Showing the first " + LIMIT + "." : "");
    found.slice(0, LIMIT).forEach(function (e) {
      var item = document.createElement("li");
      var link = document.createElement("a");
      link.href = e.href;
      link.textContent = e.server + " / " + e.tool;
      item.appendChild(link);
      if (e.title) item.appendChild(document.createTextNode(" (" + e.title + ")"));
      if (e.summary) {
        var p = document.createElement("div");
        p.className = "muted";
        p.textContent = e.summary.length > 200 ? e.summary.slice(0, 199) + "…" : e.summary;
        item.appendChild(p);
      }
      list.appendChild(item);
    });
  }

  input.addEventListener("input", function () { show(input.value); });
  var form = input.form;
  if (form) form.addEventListener("submit", function (event) {
    event.preventDefault();
    var first = list.querySelector("a");
    if (first) first.focus();
  });
  if (input.value) show(input.value);
})();
