// obsctl dashboard: charts (uPlot) and live updates (Server-Sent Events). Loaded with `defer`
// from the same origin; the pages read without it (CSP: script-src 'self', nothing inline).
(function () {
  "use strict";

  function readJson(id) {
    var node = document.getElementById(id);
    if (!node) return null;
    try { return JSON.parse(node.textContent); } catch (e) { return null; }
  }

  var COLORS = ["#0b5cad", "#b42318", "#1a7f37", "#9a6700", "#6e40c9"];

  function draw(el, xs, series, xRange) {
    if (typeof uPlot === "undefined") return null;
    var width = Math.max(300, el.clientWidth || 420);
    var opts = {
      width: width, height: 200,
      series: [{}].concat(series.map(function (s, i) {
        return { label: s.label, stroke: COLORS[i % COLORS.length], width: 1.5, spanGaps: false,
                 points: { show: xs.length < 40 } };
      })),
      axes: [{}, { size: 60 }],
      scales: { x: xRange ? { time: true, range: function () { return xRange; } } : { time: true } },
      legend: { show: true }
    };
    el.textContent = "";
    el.setAttribute("role", "img");
    el.setAttribute("aria-label", series.map(function (s) { return s.label; }).join(", ") + " over time");
    return new uPlot(opts, [xs].concat(series.map(function (s) { return s.values; })), el);
  }

  var OVERVIEW = {
    events: [["events", "events"], ["errors", "errors"]],
    error_rate: [["error rate %", "error_rate"]],
    tokens: [["tokens", "tokens"]],
    cost: [["cost USD", "cost"]],
    latency: [["p50 ms", "p50_ms"], ["p95 ms", "p95_ms"]],
    sessions: [["sessions", "sessions"]]
  };
  var plots = {};

  function drawOverview(points) {
    var xs = points.map(function (p) { return p.t; });
    document.querySelectorAll(".chart[data-chart]").forEach(function (el) {
      var spec = OVERVIEW[el.getAttribute("data-chart")];
      if (!spec) return;
      var series = spec.map(function (s) {
        return { label: s[0], values: points.map(function (p) { return p[s[1]]; }) };
      });
      var name = el.getAttribute("data-chart");
      if (plots[name]) {
        plots[name].setData([xs].concat(series.map(function (s) { return s.values; })));
      } else {
        plots[name] = draw(el, xs, series);
      }
    });
  }

  function drawDays(days) {
    if (!days || !days.length) return;
    var xs = days.map(function (d) { return Date.parse(d.day + "T00:00:00Z") / 1000; });
    [["days_sessions", "sessions", "session_count"], ["days_tokens", "tokens", "total_tokens"]].forEach(function (c) {
      var el = document.querySelector('.chart[data-chart="' + c[0] + '"]');
      if (el) draw(el, xs, [{ label: c[1], values: days.map(function (d) { return d[c[2]]; }) }]);
    });
  }

  function drawSla(snapshots) {
    var el = document.querySelector('.chart[data-chart="sla"]');
    if (!el || !snapshots) return;
    var byHour = {};
    snapshots.forEach(function (s) {
      if (s.status !== "pass" && s.status !== "fail") return;
      var t = Math.floor(Date.parse(s.checked_at) / 3600000) * 3600;
      var b = byHour[t] || (byHour[t] = { pass: 0, all: 0 });
      b.all += 1;
      if (s.status === "pass") b.pass += 1;
    });
    var xs = Object.keys(byHour).map(Number).sort(function (a, b) { return a - b; });
    if (!xs.length) { el.textContent = "No checks in the window."; return; }
    // The whole week on the axis, however few checks there were (one point would make no scale).
    var now = Date.now() / 1000;
    draw(el, xs, [{ label: "passing %", values: xs.map(function (t) { return 100 * byHour[t].pass / byHour[t].all; }) }],
         [now - 7 * 86400, now]);
  }

  function localTimes() {
    document.querySelectorAll("time[data-epoch]").forEach(function (t) {
      var d = new Date(Number(t.getAttribute("data-epoch")) * 1000);
      t.textContent = d.toISOString().replace("T", " ").slice(0, 16);
    });
  }

  // Live: new events from /ui/live (Server-Sent Events), newest first, at most LIVE_SHOWN.
  var LIVE_SHOWN = 50;

  function describe(item) {
    var e = item.event || {};
    var what = [e.timestamp, item.agent_name, e.session_id, e.event_type];
    var call = e.tool_call && (e.tool_call.name || e.tool_call.tool);
    if (call) what.push(call);
    if (e.model) what.push(e.model);
    if (e.duration_ms != null) what.push(e.duration_ms + " ms");
    return what.filter(function (w) { return w != null && w !== ""; }).join(" · ");
  }

  function live() {
    var box = document.querySelector("[data-live-url]");
    if (!box || typeof EventSource === "undefined") return;
    var list = box.querySelector("[data-live-list]");
    var count = box.querySelector("[data-live-count]");
    var state = box.querySelector("[data-live-state]");
    var seen = 0;
    function onMessage(message) {
      var item;
      try { item = JSON.parse(message.data); } catch (e) { return; }
      seen += 1;
      count.textContent = String(seen);
      var li = document.createElement("li");
      li.textContent = describe(item);  // text, never markup: agent names and prompts stay inert
      if (item.event && item.event.event_type && /error|timeout|rate_limit/.test(item.event.event_type)) {
        li.className = "err";
      }
      list.insertBefore(li, list.firstChild);
      while (list.children.length > LIVE_SHOWN) list.removeChild(list.lastChild);
    }
    var last = null;
    function connect() {
      var url = box.getAttribute("data-live-url");
      // A refused stream (503: the server's stream slots are taken) closes the EventSource for
      // good: open a new one a little later, resuming after the last event received.
      var source = new EventSource(last ? url + (url.indexOf("?") < 0 ? "?" : "&") + "after=" + encodeURIComponent(last) : url);
      source.onopen = function () { state.textContent = " (following)"; };
      source.onmessage = function (message) {
        if (message.lastEventId) last = message.lastEventId;
        onMessage(message);
      };
      source.onerror = function () {
        state.textContent = " (reconnecting)";
        if (source.readyState === EventSource.CLOSED) setTimeout(connect, 3000);
      };
    }
    connect();
  }

  document.addEventListener("DOMContentLoaded", function () {
    localTimes();
    live();
    var series = readJson("overview-series");
    if (series) drawOverview(series);
    drawDays(readJson("overview-days"));
    drawSla(readJson("sla-history"));
  });

  window.obsctlDashboard = { drawOverview: drawOverview };
})();
