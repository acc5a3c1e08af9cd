// iobm's HTML report: draws the charts described in #iobm-charts with uPlot, then records on
// <body> whether every chart drew its data (data-state="drawn") and any error (data-errors),
// and on each chart what a headless browser checks: the pixels of its series' own colours
// (data-series-pixels: axes and grid alone have none), its phase labels' boxes, and any axis
// whose tick labels do not fit (data-clipped).
"use strict";
(function () {
  const errors = [];
  const note = (what) => errors.push(String(what));
  window.addEventListener("error", (e) => note(e.message));
  window.addEventListener("securitypolicyviolation", (e) => note("blocked: " + e.blockedURI));
  const consoleError = console.error;
  console.error = (...args) => { note(args.join(" ")); consoleError.apply(console, args); };

  const palette = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b",
    "#e377c2", "#7f7f7f", "#bcbd22", "#17becf", "#393b79", "#637939", "#8c6d31", "#843c39",
    "#7b4173", "#3182bd", "#e6550d"];

  const rgb = (hex) => [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16));

  // Pixels of the canvas in the colour of one of the chart's series (strokes, or bars' fills
  // over white): axes, grid and labels are grey or black, so a chart without data has none.
  function seriesPixels(u, n) {
    const colours = palette.slice(0, n).map(rgb);
    const c = u.ctx.canvas;
    const d = u.ctx.getImageData(0, 0, c.width, c.height).data;
    let count = 0;
    for (let i = 0; i < d.length; i += 4) {
      if (d[i + 3] < 128) continue;
      for (const [r, g, b] of colours) {
        if (Math.abs(d[i] - r) < 48 && Math.abs(d[i + 1] - g) < 48 && Math.abs(d[i + 2] - b) < 48) {
          count++;
          break;
        }
      }
    }
    return count;
  }

  // A latency in microseconds in the unit its size reads best in.
  function latency(us) {
    if (us == null || !isFinite(us)) return "";
    const a = Math.abs(us);
    const fixed = (v) => (v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : +v.toFixed(2)) + "";
    if (a < 1) return fixed(us * 1000) + " ns";
    if (a < 1000) return fixed(us) + " µs";
    if (a < 1e6) return fixed(us / 1000) + " ms";
    return fixed(us / 1e6) + " s";
  }
  const number = (v) => (v == null || !isFinite(v) ? "" : Math.abs(v) >= 100 ? v.toFixed(0) : +v.toFixed(2) + "");

  // Vertical lines at spec.marks (phase boundaries), each label in the first row where it does
  // not overlap another; the labels' boxes are kept on the chart for the page's checks.
  function marks(spec, el) {
    return (u) => {
      const ctx = u.ctx;
      const px = devicePixelRatio;
      ctx.save();
      ctx.strokeStyle = "#888";
      ctx.fillStyle = "#444";
      ctx.setLineDash([4, 4]);
      ctx.font = 11 * px + "px sans-serif";
      const rowEnds = [];
      const boxes = [];
      const right = u.bbox.left + u.bbox.width;
      for (const m of spec.marks || []) {
        const x = u.valToPos(m.at, "x", true);
        ctx.beginPath();
        ctx.moveTo(x, u.bbox.top);
        ctx.lineTo(x, u.bbox.top + u.bbox.height);
        ctx.stroke();
        const w = ctx.measureText(m.label).width;
        // Right of its line, or left of it where the plot ends.
        const left = x + 3 * px + w <= right ? x + 3 * px : Math.max(u.bbox.left, x - 3 * px - w);
        let row = rowEnds.findIndex((end) => end + 4 * px <= left);
        if (row < 0) { row = rowEnds.length; rowEnds.push(0); }
        rowEnds[row] = left + w;
        const top = u.bbox.top + (2 + row * 13) * px;
        ctx.fillText(m.label, left, top + 10 * px);
        boxes.push([left / px, top / px, w / px, 11].map((v) => Math.round(v * 10) / 10));
      }
      ctx.restore();
      if (boxes.length) el.dataset.labels = JSON.stringify(boxes);
    };
  }

  // Room for the widest tick label of an axis, and its title: nothing clipped.
  function axisSize(u, values, axisIdx, cycleNum) {
    const axis = u.axes[axisIdx];
    if (cycleNum > 1) return axis._size;
    let size = axis.ticks.size + axis.gap + 14 + 8;
    if (values && values.length) {
      u.ctx.font = axis.font[0];
      const widest = Math.max(...values.map((v) => u.ctx.measureText(String(v)).width));
      size += axisIdx === 0 ? 12 : widest / devicePixelRatio;
    }
    return Math.ceil(size);
  }

  // Axes whose tick labels are wider than the room drawn for them.
  function clipped(u) {
    const out = [];
    u.axes.forEach((axis, i) => {
      if (i === 0 || !axis._values) return;
      u.ctx.font = axis.font[0];
      const widest = Math.max(0, ...axis._values.map((v) => u.ctx.measureText(String(v)).width)) / devicePixelRatio;
      if (widest + axis.ticks.size + axis.gap > axis._size) out.push(axis.label || "y");
    });
    return out;
  }

  function options(spec, width, el) {
    const bars = spec.kind === "bars";
    const opts = {
      title: spec.title,
      width: width,
      height: 260,
      scales: { x: { time: false }, y: {} },
      axes: [{ label: spec.xlabel }, { label: spec.ylabel, size: axisSize }],
      series: [{ label: spec.xlabel, value: (u, v, si, idx) => (idx == null ? "" : spec.xunit === "latency" ? latency(v) : number(v)) }],
      legend: { show: !bars },
      hooks: { draw: [marks(spec, el)] },
    };
    const ticks = (unit) => (u, splits) => splits.map((v) => (unit === "latency" ? latency(v) : number(v)));
    if (spec.yunit === "latency") opts.axes[1].values = ticks("latency");
    if (spec.xunit === "latency") opts.axes[0].values = ticks("latency");
    if (spec.log) opts.scales.y.distr = 3;
    if (spec.kind === "distribution") opts.scales.x.distr = 3;
    if (spec.kind === "lines") opts.scales.x.range = (u, min, max) => [0, max > 0 ? max : 1];
    // Rates from zero, so a dip is not drawn as a collapse.
    if (spec.kind === "lines" && !spec.log) opts.scales.y.range = (u, min, max) => [0, max > 0 ? max * 1.05 : 1];
    if (bars) {
      const n = spec.labels.length;
      opts.scales.x.range = () => [-0.5, n - 0.5];
      opts.axes[0].splits = () => spec.labels.map((_, i) => i);
      opts.axes[0].values = (u, splits) => splits.map((i) => spec.labels[i] || "");
      opts.scales.y.range = (u, min, max) => [0, max > 0 ? max * 1.1 : 1];
    }
    spec.series.forEach((s, i) => {
      const color = palette[i % palette.length];
      const unit = bars ? "" : spec.yunit;
      const line = {
        label: s.label, stroke: color, width: i === 0 && spec.series.length > 1 ? 2.5 : 1.5,
        // No value shown until the cursor is on a point (uPlot would show "--").
        value: (u, v, si, idx) => (idx == null || v == null ? "" : unit === "latency" ? latency(v) : number(v)),
      };
      if (spec.step) {
        line.paths = uPlot.paths.stepped({ align: 1 });
        line.points = { show: false };
      }
      if (bars) {
        line.fill = color + "99";
        line.paths = uPlot.paths.bars({ size: [0.6, 80] });
        line.points = { show: false };
      } else if (spec.kind === "distribution") {
        line.paths = uPlot.paths.stepped({ align: 1 });
        line.fill = color + "33";
      }
      opts.series.push(line);
    });
    return opts;
  }

  function draw(spec) {
    const el = document.getElementById(spec.id);
    if (!el) { note("no element for chart " + spec.id); return; }
    const x = spec.kind === "bars" ? spec.labels.map((_, i) => i) : spec.x;
    const data = [x].concat(spec.series.map((s) => s.values));
    const room = Math.max(420, Math.min(1100, el.parentElement.clientWidth - 8));
    // A phase's charts two a row; bar charts as wide as their bars need.
    const half = spec.id.startsWith("phase-") ? Math.max(420, Math.floor((room - 24) / 2)) : room;
    const width = spec.kind === "bars" ? Math.min(half, 200 + 110 * spec.labels.length) : half;
    const opts = options(spec, width, el);
    // uPlot draws after the constructor returns; count what it drew each time it draws.
    opts.hooks.draw.push((u) => {
      el.dataset.seriesPixels = seriesPixels(u, spec.series.length);
      el.dataset.clipped = clipped(u).join(",");
    });
    new uPlot(opts, data, el);
  }

  function start() {
    let specs = [];
    try {
      specs = JSON.parse(document.getElementById("iobm-charts").textContent);
    } catch (e) { note("chart data: " + e); }
    for (const spec of specs) {
      try { draw(spec); } catch (e) { note(spec.id + ": " + e); }
    }
    // Let the browser settle, then say what drew.
    setTimeout(() => {
      const blank = specs.filter((s) => {
        const el = document.getElementById(s.id);
        return !el || !(Number(el.dataset.seriesPixels) > 0);
      });
      document.body.dataset.height = document.documentElement.scrollHeight;
      document.body.dataset.charts = specs.length;
      document.body.dataset.errors = errors.length;
      if (errors.length) {
        const pre = document.createElement("pre");
        pre.id = "page-errors";
        pre.textContent = errors.join("\n");
        document.body.prepend(pre);
      }
      document.body.dataset.state = blank.length ? "blank: " + blank.map((s) => s.id).join(" ") : "drawn";
    }, 50);
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
