// The leaderboard page's script: draws the ranked table, its filters and the per-router
// drill-down from the embedded leaderboard.json. Text goes in through textContent only, so no
// name or reason from the board is ever read as markup. With #selftest in the address it also
// clicks through the table and writes what it saw into <pre id="selftest"> for the browser test.
"use strict";
(function () {
  var errors = [];
  window.addEventListener("error", function (e) { errors.push(String(e.message)); });

  var board = JSON.parse(document.getElementById("board").textContent);
  var state = { matrix: "ranked", view: "all", key: "rank", dir: 1, selected: null };
  var matrixById = {};
  board.matrices.forEach(function (m) { matrixById[m.id] = m; });
  var cellIndex = {};
  board.cells.forEach(function (c) { cellIndex[c.router + "\u0000" + c.matrix + "\u0000" + c.view] = c; });
  function cellOf(router, matrix, view) { return cellIndex[router + "\u0000" + matrix + "\u0000" + view]; }

  function el(tag, text, cls) {
    var e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = text;
    if (cls) e.className = cls;
    return e;
  }
  function pct(x) { return (x * 100).toFixed(1) + " %"; }
  function pts(x) { return (x >= 0 ? "+" : "\u2212") + Math.abs(x * 100).toFixed(1); }
  function num(x, d) { return x === null || x === undefined ? "\u2014" : Number(x).toFixed(d); }

  // The matrix and view columns the filters select: (matrix, view) pairs in board order.
  function columns() {
    var out = [];
    board.matrices.forEach(function (m) {
      var take = state.matrix === "all" || (state.matrix === "ranked" ? m.ranked : m.id === state.matrix);
      if (!take) return;
      m.views.forEach(function (v) {
        if (state.view === "all" || state.view === v) out.push({ matrix: m, view: v });
      });
    });
    return out;
  }

  // Every column of the table: a key, a header, how to sort (value) and how to show (cell).
  function tableColumns() {
    var cols = [
      { key: "rank", head: "rank", value: function (r) { return r.rank; }, show: function (r) { return r.rank === null ? "\u2014" : String(r.rank); } },
      { key: "router", head: "router", text: true, value: function (r) { return r.name; } },
      { key: "kind", head: "kind", text: true, value: function (r) { return r.kind; }, show: function (r) { return r.kind; } },
      { key: "gap", head: "mean gap share", value: function (r) { return r.mean_gap_share; }, show: function (r) { return r.mean_gap_share === null ? "\u2014" : pct(r.mean_gap_share); } },
      { key: "ran", head: "n of N", value: function (r) { return r.ran; }, show: function (r) { return r.ran + " of " + r.of; } },
      { key: "wins", head: "wins", value: function (r) { return r.wins; }, show: function (r) { return String(r.wins); } },
      { key: "losses", head: "losses", value: function (r) { return r.losses; }, show: function (r) { return String(r.losses); } }
    ];
    columns().forEach(function (c) {
      var id = c.matrix.id + "/" + c.view;
      var label = c.matrix.title + " (" + c.view + ")";
      function meas(r) { var x = cellOf(r.name, c.matrix.id, c.view); return x && x.status === "ok" ? x.measures : null; }
      cols.push({ key: "rate:" + id, head: "correct", group: label, cell: c, value: function (r) { var m = meas(r); return m ? m.correct_rate : null; },
        show: function (r) { var m = meas(r); return m ? pct(m.correct_rate) : null; } });
      cols.push({ key: "delta:" + id, head: "\u0394 [95 % CI]", group: label, cell: c, value: function (r) { var m = meas(r); return m ? m.delta : null; },
        show: function (r) { var m = meas(r); return m ? [pts(m.delta), "[" + pts(m.ci_low) + ", " + pts(m.ci_high) + "]"] : null; } });
    });
    return cols;
  }

  function visibleRouters() {
    if (state.matrix === "all" || state.matrix === "ranked") return board.routers.slice();
    return board.routers.filter(function (r) {
      return board.cells.some(function (c) { return c.router === r.name && c.matrix === state.matrix; });
    });
  }

  // Sorted rows: numbers (or text) in the chosen direction, missing values last either way,
  // ties in the board's order.
  function sorted(rows, col) {
    var order = {};
    board.routers.forEach(function (r, i) { order[r.name] = i; });
    return rows.slice().sort(function (a, b) {
      var x = col.value(a), y = col.value(b);
      var mx = x === null || x === undefined || (typeof x === "number" && !isFinite(x));
      var my = y === null || y === undefined || (typeof y === "number" && !isFinite(y));
      if (mx !== my) return mx ? 1 : -1;
      if (!mx && x !== y) {
        var c = col.text ? String(x).localeCompare(String(y)) : x - y;
        if (c !== 0) return c * state.dir;
      }
      return order[a.name] - order[b.name];
    });
  }

  // A skipped or failed cell: its status and reason, as text.
  function statusCell(td, router, c) {
    var x = cellOf(router.name, c.matrix.id, c.view);
    if (!x) { td.textContent = "\u2014"; return; }
    td.appendChild(document.createTextNode(x.status));
    if (x.reason) { var why = el("small", x.reason); why.title = x.reason; td.appendChild(why); }
    td.className = "status status-" + x.status;
  }

  function renderTable() {
    var cols = tableColumns();
    var col = cols.filter(function (c) { return c.key === state.key; })[0];
    if (!col) { state.key = "rank"; state.dir = 1; col = cols[0]; }
    var thead = document.querySelector("#ranking thead");
    var tbody = document.querySelector("#ranking tbody");
    thead.textContent = "";
    tbody.textContent = "";
    // Two header rows: each (matrix, view) over its two columns; the sortable headers below.
    var groups = el("tr"), hr = el("tr");
    cols.forEach(function (c, i) {
      var th = el("th", c.head, c.text ? "t" : "");
      th.dataset.key = c.key;
      if (c.key === state.key) th.classList.add(state.dir > 0 ? "sorted-asc" : "sorted-desc");
      th.addEventListener("click", function () { sortBy(c); });
      th.tabIndex = 0;
      th.addEventListener("keydown", function (e) { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); sortBy(c); refocus(c.key); } });
      if (!c.group) { th.rowSpan = 2; groups.appendChild(th); return; }
      if (i === 0 || cols[i - 1].group !== c.group) {
        var g = el("th", c.group, "group");
        g.colSpan = 2;
        groups.appendChild(g);
      }
      hr.appendChild(th);
    });
    thead.appendChild(groups);
    thead.appendChild(hr);
    sorted(visibleRouters(), col).forEach(function (r) {
      var tr = el("tr");
      tr.dataset.router = r.name;
      if (r.rank === null && r.kind !== "baseline") tr.classList.add("below");
      if (r.name === state.selected) tr.classList.add("selected");
      var paired = false;
      cols.forEach(function (c) {
        // A cell without measures spans its (matrix, view)'s two columns.
        if (paired) { paired = false; return; }
        var td = el("td", null, c.key === "router" ? "t router" : c.text ? "t" : "");
        if (c.key === "router") {
          var b = el("button", r.name, "router");
          b.type = "button";
          b.addEventListener("click", function () { drill(r.name); });
          td.appendChild(b);
        } else {
          var shown = c.show(r);
          if (shown === null && c.cell) { statusCell(td, r, c.cell); td.colSpan = 2; paired = true; }
          else if (Array.isArray(shown)) { td.textContent = shown[0]; td.appendChild(el("span", shown[1], "ci")); }
          else td.textContent = shown;
        }
        tr.appendChild(td);
      });
      tbody.appendChild(tr);
    });
  }

  // Keeps the keyboard on the header it sorted by (the table was drawn anew).
  function refocus(key) {
    document.querySelectorAll("#ranking thead th").forEach(function (th) { if (th.dataset.key === key) th.focus(); });
  }

  function sortBy(c) {
    if (state.key === c.key) state.dir = -state.dir;
    else { state.key = c.key; state.dir = c.text || c.key === "rank" || c.key === "losses" ? 1 : -1; }
    renderTable();
  }

  function fillFilters() {
    var ms = document.getElementById("filter-matrix");
    [["ranked", "ranked matrices"], ["all", "all matrices"]].forEach(function (o) {
      var opt = el("option", o[1]); opt.value = o[0]; ms.appendChild(opt);
    });
    var views = [];
    board.matrices.forEach(function (m) {
      var opt = el("option", m.title + (m.ranked ? "" : " (not ranked)")); opt.value = m.id; ms.appendChild(opt);
      m.views.forEach(function (v) { if (views.indexOf(v) < 0) views.push(v); });
    });
    var vs = document.getElementById("filter-view");
    var all = el("option", "all views"); all.value = "all"; vs.appendChild(all);
    views.forEach(function (v) { var opt = el("option", v); opt.value = v; vs.appendChild(opt); });
    ms.addEventListener("change", function () { state.matrix = ms.value; renderTable(); });
    vs.addEventListener("change", function () { state.view = vs.value; renderTable(); });
  }

  // A Δ with its interval as a small bar on a scale shared by the router's cells.
  function ciBar(m, scale) {
    var ns = "http://www.w3.org/2000/svg", w = 160, h = 16;
    function x(v) { return w / 2 + v / scale * (w / 2 - 4); }
    var svg = document.createElementNS(ns, "svg");
    svg.setAttribute("width", w); svg.setAttribute("height", h); svg.setAttribute("class", "ci");
    function add(tag, attrs) {
      var e = document.createElementNS(ns, tag);
      Object.keys(attrs).forEach(function (k) { e.setAttribute(k, attrs[k]); });
      svg.appendChild(e);
    }
    add("line", { x1: w / 2, x2: w / 2, y1: 0, y2: h, stroke: "#999" });
    add("line", { x1: x(m.ci_low), x2: x(m.ci_high), y1: h / 2, y2: h / 2, stroke: "#0072b2", "stroke-width": 3 });
    add("circle", { cx: x(m.delta), cy: h / 2, r: 3.5, fill: "#000" });
    return svg;
  }

  function drill(name) {
    state.selected = name;
    var r = board.routers.filter(function (x) { return x.name === name; })[0];
    var box = document.getElementById("drill");
    box.textContent = "";
    box.appendChild(el("h3", r.name + " \u2014 " + r.kind + ", " + r.family));
    var cells = board.cells.filter(function (c) { return c.router === name; });
    var scale = 0.001;
    cells.forEach(function (c) {
      if (c.measures) scale = Math.max(scale, Math.abs(c.measures.ci_low), Math.abs(c.measures.ci_high), Math.abs(c.measures.delta));
    });
    var t = el("table"); t.id = "drill-table";
    var hr = el("tr");
    ["matrix", "view", "status", "correct", "\u0394 [95 % CI]", "\u0394 bar (\u00b1" + (scale * 100).toFixed(1) + " points)",
      "McNemar p", "Holm p", "gap share", "mean cost", "cost saved", "operating point", "predictions"].forEach(function (h) { hr.appendChild(el("th", h)); });
    t.appendChild(hr);
    cells.forEach(function (c) {
      var tr = el("tr"), m = c.measures, mx = matrixById[c.matrix];
      tr.appendChild(el("td", mx ? mx.title : c.matrix, "t"));
      tr.appendChild(el("td", c.view, "t"));
      var st = el("td", c.status, "t");
      if (c.reason) st.appendChild(el("small", c.reason));
      tr.appendChild(st);
      if (m) {
        var unit = mx ? " " + mx.cost_unit : "";
        [pct(m.correct_rate), pts(m.delta) + " [" + pts(m.ci_low) + ", " + pts(m.ci_high) + "]"].forEach(function (s) { tr.appendChild(el("td", s)); });
        var bar = el("td"); bar.appendChild(ciBar(m, scale)); tr.appendChild(bar);
        [num(m.p_mcnemar, 4), num(m.p_holm, 4), m.gap_share === null ? "\u2014" : pct(m.gap_share), num(m.mean_cost, 2) + unit,
          m.cost_saved === null ? "\u2014" : pct(m.cost_saved), m.operating_point.length ? m.operating_point.join(", ") : "\u2014"].forEach(function (s) { tr.appendChild(el("td", s)); });
        tr.appendChild(el("td", m.predictions, "t"));
      } else {
        for (var i = 0; i < 10; i++) tr.appendChild(el("td", "\u2014"));
      }
      t.appendChild(tr);
    });
    box.appendChild(t);
    box.appendChild(el("p", "Configuration:", "meta"));
    box.appendChild(el("pre", JSON.stringify(r.config, null, 2)));
    document.querySelectorAll("svg.pareto g.pt.router").forEach(function (g) {
      var mine = g.getAttribute("data-router") === name;
      g.classList.toggle("hl", mine);
      g.classList.toggle("dim", !mine);
    });
    renderTable();
  }

  function holmNote() {
    var p = board.protocol;
    document.getElementById("holm-note").textContent = "Wins and losses count the ranked cells where a router beats or loses to " +
      p.baseline + " (McNemar, p < " + p.alpha + " after Holm's correction over the " + p.holm_family +
      " routers on this board: adding a router changes the correction). Rows in grey ran on fewer than half of the ranked matrices and are listed below the rest.";
  }

  function names() {
    return Array.prototype.map.call(document.querySelectorAll("#ranking tbody tr"), function (tr) { return tr.dataset.router; });
  }
  function keys() {
    return Array.prototype.map.call(document.querySelectorAll("#ranking thead th[data-key]"), function (th) { return th.dataset.key; });
  }
  function click(key) {
    var th = document.querySelector("#ranking thead th[data-key=\"" + key + "\"]");
    if (th) th.click();
    return names();
  }

  // What the browser test checks: rows, headers, orders after clicks, plots, errors.
  function selftest() {
    var out = { rows: names().length, top: names()[0], initial: names() };
    out.headers = keys();
    out.by_router = click("router");
    out.by_router_again = click("router");
    out.by_wins = click("wins");
    out.plots = Array.prototype.map.call(document.querySelectorAll("svg.pareto"), function (s) {
      return { matrix: s.getAttribute("data-matrix"), points: Array.prototype.map.call(s.querySelectorAll("g.pt"), function (g) { return g.getAttribute("data-router"); }) };
    });
    var ms = document.getElementById("filter-matrix"), vs = document.getElementById("filter-view");
    out.matrix_options = Array.prototype.map.call(ms.options, function (o) { return o.value; });
    function choose(select, value) { select.value = value; select.dispatchEvent(new Event("change")); return keys(); }
    // A matrix not ranked (shown only when chosen), else the last; then its last view.
    var pick = board.matrices.filter(function (m) { return !m.ranked; })[0] || board.matrices[board.matrices.length - 1];
    out.filter_matrix = pick.id;
    out.filtered = choose(ms, pick.id);
    out.filter_view = pick.views[pick.views.length - 1];
    out.filtered_view = choose(vs, out.filter_view);
    out.filtered_rows = names().length;
    choose(ms, "ranked");
    choose(vs, "all");
    drill(board.routers[0].name);
    out.drill_rows = document.querySelectorAll("#drill-table tr").length - 1;
    out.images = document.images.length;
    out.errors = errors;
    var pre = document.getElementById("selftest");
    pre.textContent = JSON.stringify(out);
    pre.hidden = false;
  }

  try {
    fillFilters();
    holmNote();
    renderTable();
  } catch (e) {
    errors.push(String(e));
    throw e;
  }
  if (location.hash === "#selftest") selftest();
})();
