/* Filters for the reproducibility report's claims table (notebooks/90_report.ipynb).
 *
 * helpers.core.report.claims_table_html renders table#claims-table:
 * one <tbody class="claims-group" data-source="..."> per source, whose first row names the source,
 * then one <tr class="claim-row" data-source="..." data-verdict="..."> per claim; the table's
 * data-verdicts attribute lists the verdict vocabulary in report order ("|"-separated).
 * This script puts two <select>s (source, verdict) and a row count above the table and shows only
 * the rows that match. Self-contained: no library, no network. It does nothing on other pages.
 */
(function () {
  "use strict";

  function option(value, label) {
    var o = document.createElement("option");
    o.value = value;
    o.textContent = label;
    return o;
  }

  function select(id, label, values, counts) {
    var wrap = document.createElement("label");
    wrap.className = "claims-filter-label";
    wrap.appendChild(document.createTextNode(label + " "));
    var s = document.createElement("select");
    s.id = id;
    s.appendChild(option("", "all"));
    values.forEach(function (v) { s.appendChild(option(v, v + " (" + (counts[v] || 0) + ")")); });
    wrap.appendChild(s);
    return { label: wrap, select: s };
  }

  function init() {
    var table = document.getElementById("claims-table");
    if (!table || table.getAttribute("data-filter-ready")) {
      return;
    }
    table.setAttribute("data-filter-ready", "1");
    var rows = Array.prototype.slice.call(table.querySelectorAll("tbody tr[data-verdict]"));
    var sourceOf = function (row) { return row.getAttribute("data-source") || ""; };
    var sources = [], sourceCounts = {}, verdictCounts = {};
    rows.forEach(function (row) {
      var s = sourceOf(row), v = row.getAttribute("data-verdict");
      if (sources.indexOf(s) < 0) { sources.push(s); }
      sourceCounts[s] = (sourceCounts[s] || 0) + 1;
      verdictCounts[v] = (verdictCounts[v] || 0) + 1;
    });
    var vocabulary = (table.getAttribute("data-verdicts") || "").split("|").filter(Boolean);
    Object.keys(verdictCounts).forEach(function (v) { if (vocabulary.indexOf(v) < 0) { vocabulary.push(v); } });

    var bar = document.createElement("div");
    bar.className = "claims-filter";
    bar.id = "claims-filter";
    var bySource = select("claims-filter-source", "source", sources, sourceCounts);
    var byVerdict = select("claims-filter-verdict", "verdict", vocabulary, verdictCounts);
    var count = document.createElement("span");
    count.id = "claims-filter-count";
    count.setAttribute("aria-live", "polite");
    bar.appendChild(bySource.label);
    bar.appendChild(byVerdict.label);
    bar.appendChild(count);
    var anchor = table.closest(".claims-table-wrapper") || table;
    anchor.parentNode.insertBefore(bar, anchor);

    function apply() {
      var s = bySource.select.value, v = byVerdict.select.value, shown = 0;
      rows.forEach(function (row) {
        var ok = (!s || sourceOf(row) === s) && (!v || row.getAttribute("data-verdict") === v);
        row.style.display = ok ? "" : "none";
        if (ok) { shown += 1; }
      });
      Array.prototype.forEach.call(table.querySelectorAll("tbody.claims-group"), function (group) {
        var visible = group.querySelector("tr[data-verdict]:not([style*='none'])");
        group.style.display = visible ? "" : "none";
      });
      count.textContent = shown + " of " + rows.length + " claims shown";
      table.setAttribute("data-shown", String(shown));
    }
    bySource.select.addEventListener("change", apply);
    byVerdict.select.addEventListener("change", apply);
    apply();
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
})();
