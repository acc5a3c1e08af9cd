// iobm's HTML report: draws the charts described in #iobm-charts with uPlot, then records on
// <body> whether every chart drew (data-state="drawn") and any error (data-errors), so a
// headless browser can check the page.
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

  // Non-transparent pixels of a chart's canvas: 0 means nothing was drawn.
  function pixels(u) {
    const c = u.ctx.canvas;
    const d = u.ctx.getImageData(0, 0, c.width, c.height).data;
    let n = 0;
    for (let i = 3; i < d.length; i += 4) if (d[i] !== 0) n++;
    return n;
  }

  // Vertical lines with labels at spec.marks (phase boundaries).
  function marks(spec) {
    return (u) => {
      const ctx = u.ctx;
      ctx.save();
      ctx.strokeStyle = "#888";
      ctx.fillStyle = "#444";
      ctx.setLineDash([4, 4]);
      ctx.font = 11 * devicePixelRatio + "px sans-serif";
      for (const m of spec.marks || []) {
        const x = u.valToPos(m.at, "x", true);
        ctx.beginPath();
        ctx.moveTo(x, u.bbox.top);
        ctx.lineTo(x, u.bbox.top + u.bbox.height);
        ctx.stroke();
        ctx.fillText(m.label, x + 3, u.bbox.top + 12 * devicePixelRatio);
      }
      ctx.restore();
    };
  }

  function options(spec, width) {
    const bars = spec.kind === "bars";
    const opts = {
      title: spec.title,
      width: width,
      height: 260,
      scales: { x: { time: false }, y: {} },
      axes: [{ label: spec.xlabel }, { label: spec.ylabel, size: 60 }],
      series: [{ label: spec.xlabel }],
      legend: { show: !bars },
      hooks: { draw: [marks(spec)] },
    };
    if (spec.log) opts.scales.y.distr = 3;
    if (spec.kind === "distribution") opts.scales.x.distr = 3;
    if (spec.kind === "lines") opts.scales.x.range = (u, min, max) => [0, max > 0 ? max : 1];
    if (bars) {
      const n = spec.labels.length;
      opts.scales.x.range = () => [-0.5, n - 0.5];
      opts.axes[0].splits = () => spec.labels.map((_, i) => i);
      opts.axes[0].values = (u, splits) => splits.map((i) => spec.labels[i] || "");
      opts.scales.y.range = (u, min, max) => [0, max > 0 ? max * 1.1 : 1];
    }
    spec.series.forEach((s, i) => {
      const color = palette[i % palette.length];
      const line = { label: s.label, stroke: color, width: i === 0 && spec.series.length > 1 ? 2.5 : 1.5 };
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
    // Bar charts are as wide as their bars need, so several fit side by side.
    const width = spec.kind === "bars" ? Math.min(room, 200 + 110 * spec.labels.length) : room;
    const opts = options(spec, width);
    // uPlot draws after the constructor returns; count what it drew each time it draws.
    opts.hooks.draw.push((u) => { el.dataset.pixels = pixels(u); });
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
        return !el || !(Number(el.dataset.pixels) > 0);
      });
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
