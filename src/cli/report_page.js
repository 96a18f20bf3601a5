// report_page.js — the script of a `tandem report` page (inlined by the
// build; src/cli/report_html.cpp). It draws each chart container from the
// page's JSON with uPlot, and records every script error on the page itself
// (body data-errors, #page-errors) so that a headless browser's DOM dump
// shows whether the page ran clean.
(function () {
  "use strict";
  var errors = [];
  function noteError(msg) {
    errors.push(String(msg));
    document.body.dataset.errors = String(errors.length);
    var p = document.getElementById("page-errors");
    if (p) {
      p.hidden = false;
      p.textContent = "Errors on this page: " + errors.join(" | ");
    }
  }
  window.addEventListener("error", function (e) { noteError(e.message || "script error"); });
  window.addEventListener("unhandledrejection", function (e) { noteError("unhandled rejection: " + e.reason); });
  var consoleError = console.error;
  console.error = function () {
    noteError(Array.prototype.join.call(arguments, " "));
    return consoleError.apply(console, arguments);
  };
  window.tandemNoteError = noteError;
})();

var tandemFormat = {
  num: function (v) {
    if (v == null) return "-";
    var a = Math.abs(v);
    if (a !== 0 && (a >= 1e7 || a < 1e-3)) return v.toExponential(2);
    return String(Number(v.toPrecision(3)));
  },
  bytes: function (v) {
    if (v == null) return "-";
    var units = ["B", "KiB", "MiB", "GiB", "TiB"], i = 0;
    while (Math.abs(v) >= 1024 && i < units.length - 1) { v /= 1024; i++; }
    return (Math.round(v * 10) / 10) + " " + units[i];
  },
  cut: function (s, n) { return s.length > n ? s.slice(0, n - 1) + "…" : s; }
};

function tandemEmpty(el, why) {
  var p = document.createElement("p");
  p.className = "chart-empty";
  p.textContent = why;
  el.appendChild(p);
  return false;
}

function tandemBars(factor) {
  return uPlot.paths.bars({ size: [factor, 80], align: 0 });
}

// An x axis of categories 0..n-1 named by `name(i)`.
function tandemCategoryAxis(name, size, rotate) {
  return {
    incrs: [1, 2, 5, 10, 20, 50],
    size: size,
    rotate: rotate,
    font: "11px sans-serif",
    values: function (u, splits) {
      return splits.map(function (i) { return Number.isInteger(i) ? name(i) : ""; });
    }
  };
}

function tandemIndices(n) {
  var xs = [];
  for (var i = 0; i < n; i++) xs.push(i);
  return xs;
}

function tandemHistogram(c, el, width) {
  var n = c.counts.length;
  if (n === 0) return tandemEmpty(el, "no samples");
  var b = c.bounds, unit = c.unit;
  var opts = {
    width: width, height: 200,
    legend: { show: false },
    scales: { x: { time: false, range: [-0.5, n - 0.5] }, y: { range: function (u, lo, hi) { return [0, hi * 1.1 || 1]; } } },
    series: [
      { label: "bin", value: function (u, i) { return i == null ? "-" : "[" + tandemFormat.num(b[i]) + ", " + tandemFormat.num(b[i + 1]) + ") " + unit; } },
      { label: "samples", stroke: "#3366aa", fill: "rgba(51,102,170,0.45)", paths: tandemBars(0.9), points: { show: false } }
    ],
    axes: [tandemCategoryAxis(function (i) { return i >= 0 && i < n ? tandemFormat.num(b[i]) : ""; }, 40, 0), {}]
  };
  new uPlot(opts, [tandemIndices(n), c.counts], el);
  return true;
}

function tandemTimeline(c, el, width) {
  if (!c.t_s || c.t_s.length === 0) return tandemEmpty(el, "no timeline in this report");
  // Short runs read better in ms.
  var ms = c.t_s[c.t_s.length - 1] < 2;
  var t = c.t_s.map(function (v) { return ms ? v * 1000 : v; });
  var opts = {
    width: width, height: 200,
    legend: { live: false },
    scales: { x: { time: false }, bytes: {}, n: {} },
    series: [
      { label: ms ? "t (ms)" : "t (s)" },
      { label: "live", scale: "bytes", stroke: "#3366aa", width: 2, value: function (u, v) { return tandemFormat.bytes(v); } },
      { label: "in flight", scale: "bytes", stroke: "#dd7722", width: 2, value: function (u, v) { return tandemFormat.bytes(v); } },
      { label: "pending", scale: "n", stroke: "#888888", dash: [4, 4] }
    ],
    axes: [{ label: ms ? "ms" : "s", values: function (u, s) { return s.map(tandemFormat.num); } },
           { scale: "bytes", size: 70, values: function (u, s) { return s.map(tandemFormat.bytes); } },
           { scale: "n", side: 1, grid: { show: false }, label: "pending" }]
  };
  new uPlot(opts, [t, c.live_bytes, c.in_flight_bytes, c.pending_submissions], el);
  return true;
}

// Each judged ratio a bar (green: pass, red: miss), its target a black line across it.
function tandemRatios(c, el, width) {
  var n = c.labels.length;
  if (n === 0) return tandemEmpty(el, "no judged ratios");
  var pass = [], miss = [];
  for (var i = 0; i < n; i++) {
    pass.push(c.status[i] === "pass" ? c.values[i] : null);
    miss.push(c.status[i] === "pass" ? null : c.values[i]);
  }
  var drawTargets = function (u) {
    var ctx = u.ctx;
    ctx.save();
    ctx.strokeStyle = "#111";
    ctx.lineWidth = 2 * devicePixelRatio;
    for (var k = 0; k < n; k++) {
      if (c.targets[k] == null) continue;
      var y = u.valToPos(c.targets[k], "y", true);
      ctx.beginPath();
      ctx.moveTo(u.valToPos(k - 0.45, "x", true), y);
      ctx.lineTo(u.valToPos(k + 0.45, "x", true), y);
      ctx.stroke();
    }
    ctx.restore();
  };
  var opts = {
    width: width, height: 420,
    padding: [10, 70, 0, 10],  // room for the last rotated label
    legend: { live: false },
    scales: { x: { time: false, range: [-0.5, n - 0.5] }, y: { range: function (u, lo, hi) { return [0, hi * 1.1]; } } },
    series: [
      { label: "ratio", value: function (u, i) { return i == null ? "-" : c.labels[i] + " (" + c.goals[i] + ")"; } },
      { label: "pass", stroke: "#2a8a3a", fill: "rgba(42,138,58,0.6)", paths: tandemBars(0.7), points: { show: false } },
      { label: "miss", stroke: "#c0392b", fill: "rgba(192,57,43,0.6)", paths: tandemBars(0.7), points: { show: false } },
      { label: "target", stroke: "#111", paths: function () { return null; }, points: { show: false } }
    ],
    axes: [tandemCategoryAxis(function (i) { return i >= 0 && i < n ? c.labels[i] : ""; }, 200, -60), {}],
    hooks: { draw: [drawTargets] }
  };
  new uPlot(opts, [tandemIndices(n), pass, miss, c.targets], el);
  return true;
}

// tandem's launches and the peers' (Python launchers), each against the raw
// driver launch of its own process.
function tandemPeers(c, el, width) {
  var n = c.labels.length;
  if (n === 0) return tandemEmpty(el, "no launchers");
  var own = [], peers = [];
  for (var i = 0; i < n; i++) {
    own.push(c.tandem[i] ? c.ratios[i] : null);
    peers.push(c.tandem[i] ? null : c.ratios[i]);
  }
  var opts = {
    width: width, height: 380,
    padding: [10, 70, 0, 10],
    legend: { live: false },
    scales: { x: { time: false, range: [-0.5, n - 0.5] }, y: { range: function (u, lo, hi) { return [0, hi * 1.1]; } } },
    series: [
      { label: "launcher", value: function (u, i) { return i == null ? "-" : c.labels[i] + ", " + tandemFormat.num(c.per_launch_us[i]) + " µs"; } },
      { label: "tandem", stroke: "#3366aa", fill: "rgba(51,102,170,0.6)", paths: tandemBars(0.7), points: { show: false } },
      { label: "raw / peers", stroke: "#777", fill: "rgba(120,120,120,0.5)", paths: tandemBars(0.7), points: { show: false } }
    ],
    axes: [tandemCategoryAxis(function (i) { return i >= 0 && i < n ? tandemFormat.cut(c.labels[i], 34) : ""; }, 190, -50), {}]
  };
  new uPlot(opts, [tandemIndices(n), own, peers], el);
  return true;
}

function tandemDrawCharts() {
  var kinds = { histogram: tandemHistogram, timeline: tandemTimeline, ratios: tandemRatios, peers: tandemPeers };
  var data = JSON.parse(document.getElementById("tandem-data").textContent);
  var drawn = 0, empty = 0;
  var wide = Math.max(600, Math.min(1360, document.documentElement.clientWidth - 60));
  data.charts.forEach(function (c) {
    var el = document.getElementById(c.id);
    try {
      var big = c.kind === "ratios" || c.kind === "peers";
      var ok = kinds[c.kind](c, el, big ? wide : 420);
      el.dataset.rendered = ok ? "uplot" : "empty";
      if (ok) drawn++; else empty++;
    } catch (e) {
      el.dataset.rendered = "failed";
      window.tandemNoteError(c.id + " (" + c.kind + "): " + e);
    }
  });
  document.body.dataset.charts = String(data.charts.length);
  document.body.dataset.drawn = String(drawn);
  document.body.dataset.empty = String(empty);
  document.body.dataset.ready = "1";
}
