// iobm's HTML report: draws the charts described in #iobm-charts with uPlot, then records on
// <body> whether every chart drew its data (data-state="drawn") and any error (data-errors),
// and on each chart what a headless browser checks: the pixels of its series' own colours
// (data-series-pixels: axes and grid alone have none), its phase labels' boxes (data-labels)
// and their ink inside and outside them (data-label-ink), a bar chart's tick labels' boxes
// (data-ticks), and any axis whose tick labels do not fit (data-clipped); on <body>, what does
// not fit the page's width (data-overflow).
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

  // The phase labels' own ink: no series, axis or grid is drawn in it, so the page's checks can
  // tell where the labels were drawn from the pixels.
  const INK = "#00524a";

  // The rows of phase labels at `lefts` (their left edges) and `widths`: each in the first
  // row where it is 4 px clear of every other label.
  function rowsOf(lefts, widths, gap) {
    const rows = [];
    return lefts.map((left, i) => {
      const w = widths[i];
      const clear = (b) => left + w + gap <= b[0] || b[1] + gap <= left;
      let row = rows.findIndex((taken) => taken.every(clear));
      if (row < 0) { row = rows.length; rows.push([]); }
      rows[row].push([left, left + w]);
      return row;
    });
  }

  // The rows of phase labels a chart `width` wide will need, estimated before it is drawn so
  // that the band above the plot holds them and no label covers the data.
  function bandRows(spec, width) {
    if (!spec.marks || !spec.marks.length) return 0;
    const ctx = document.createElement("canvas").getContext("2d");
    ctx.font = "11px sans-serif";
    const xs = spec.x.filter((v) => v != null);
    const end = Math.max(1, ...xs);
    const [first, plot] = [70, width - 90];
    const widths = spec.marks.map((m) => Math.ceil(ctx.measureText(m.label).width));
    const lefts = spec.marks.map((m, i) => Math.max(first, Math.min(first + (m.at / end) * plot + 3, first + plot - widths[i])));
    return Math.max(...rowsOf(lefts, widths, 12)) + 1;
  }

  // Vertical lines at spec.marks (phase boundaries), each label right of its line (or as far
  // right as the plot allows), within the plot's width, in the band above the plot (`band`
  // rows; more go into the plot), in the first row where it overlaps no other label; the
  // labels' boxes (CSS pixels of the canvas) are kept on the chart for the checks.
  function marks(spec, el, band) {
    return (u) => {
      const ctx = u.ctx;
      const px = devicePixelRatio;
      ctx.save();
      ctx.strokeStyle = "#888";
      ctx.fillStyle = INK;
      ctx.setLineDash([4, 4]);
      ctx.font = 11 * px + "px sans-serif";
      // uPlot leaves the state of its last axis (right-aligned text) on the context.
      ctx.textAlign = "left";
      ctx.textBaseline = "alphabetic";
      const first = u.bbox.left + 4 * px;
      const last = u.bbox.left + u.bbox.width - 2 * px;
      const list = spec.marks || [];
      const xs = list.map((m) => u.valToPos(m.at, "x", true));
      const widths = list.map((m) => Math.ceil(ctx.measureText(m.label).width));
      const lefts = xs.map((x, i) => Math.max(first, Math.min(x + 3 * px, last - widths[i])));
      const rows = rowsOf(lefts, widths, 4 * px);
      const boxes = [];
      list.forEach((m, i) => {
        ctx.beginPath();
        ctx.moveTo(xs[i], u.bbox.top - band * 13 * px);
        ctx.lineTo(xs[i], u.bbox.top + u.bbox.height);
        ctx.stroke();
        const top = u.bbox.top + ((rows[i] - band) * 13 + 1) * px;
        ctx.fillText(m.label, lefts[i], top + 10 * px);
        boxes.push([lefts[i] / px, top / px, widths[i] / px, 13].map((v) => Math.round(v * 10) / 10));
      });
      ctx.restore();
      if (boxes.length) el.dataset.labels = JSON.stringify(boxes);
      el.dataset.rows = rows.length ? Math.max(...rows) + 1 : 0;
      el.dataset.labelInk = JSON.stringify(inkOf(u, boxes));
    };
  }

  // The pixels in the labels' ink inside each label's box, and outside every box (text drawn
  // where its box does not say).
  function inkOf(u, boxes) {
    const c = u.ctx.canvas;
    const px = devicePixelRatio;
    const d = u.ctx.getImageData(0, 0, c.width, c.height).data;
    const [r, g, b] = rgb(INK);
    const inside = boxes.map(() => 0);
    let outside = 0;
    for (let i = 0; i < d.length; i += 4) {
      if (d[i + 3] < 128 || Math.abs(d[i] - r) > 40 || Math.abs(d[i + 1] - g) > 40 || Math.abs(d[i + 2] - b) > 40) continue;
      const x = ((i / 4) % c.width) / px;
      const y = Math.floor(i / 4 / c.width) / px;
      const k = boxes.findIndex((bx) => x >= bx[0] - 1 && x <= bx[0] + bx[2] + 1 && y >= bx[1] - 1 && y <= bx[1] + bx[3] + 1);
      if (k < 0) outside++; else inside[k]++;
    }
    return { inside, outside };
  }

  // The boxes of the x axis's tick labels of a bar chart (CSS pixels of the canvas).
  function tickBoxes(u, spec) {
    if (spec.kind !== "bars") return [];
    const px = devicePixelRatio;
    const axis = u.axes[0];
    u.ctx.font = axis.font[0];
    return spec.labels.map((label, i) => {
      const w = u.ctx.measureText(label).width / px;
      const x = u.valToPos(i, "x");
      return [u.bbox.left / px + x - w / 2, (u.bbox.top + u.bbox.height) / px + axis.ticks.size, w, 12];
    });
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

  function options(spec, width, el, band) {
    const bars = spec.kind === "bars";
    const opts = {
      title: spec.title,
      width: width,
      height: 260 + 13 * band,
      scales: { x: { time: false }, y: {} },
      axes: [{ label: spec.xlabel }, { label: spec.ylabel, size: axisSize }],
      series: [{ label: spec.xlabel, value: (u, v, si, idx) => (idx == null ? "" : spec.xunit === "latency" ? latency(v) : number(v)) }],
      legend: { show: !bars },
      hooks: { draw: [marks(spec, el, band)] },
      // The phase labels' band above the plot.
      padding: [12 + 13 * band, null, null, null],
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
    // Drawn again, once, with a band of as many rows as its labels took, where the estimate
    // fell short.
    const make = (band, again) => {
      const opts = options(spec, width, el, band);
      // uPlot draws after the constructor returns; count what it drew each time it draws.
      opts.hooks.draw.push((u) => {
        el.dataset.seriesPixels = seriesPixels(u, spec.series.length);
        el.dataset.clipped = clipped(u).join(",");
        el.dataset.ticks = JSON.stringify(tickBoxes(u, spec));
        el.dataset.plot = JSON.stringify([[u.bbox.left, u.bbox.top, u.bbox.width, u.bbox.height].map((v) => v / devicePixelRatio)]);
        const rows = Number(el.dataset.rows || 0);
        if (again && rows > band) {
          again = false;
          setTimeout(() => { u.destroy(); make(rows, false); }, 0);
        }
      });
      return new uPlot(opts, data, el);
    };
    make(bandRows(spec, width), true);
  }

  // What does not fit the page: the page wider than the window, or a block whose content is
  // wider than the block (scrolled or cut), each by its id, class or tag.
  function overflowing() {
    const out = [];
    const page = document.documentElement;
    if (page.scrollWidth > page.clientWidth + 1) out.push("page");
    for (const el of document.querySelectorAll("pre, table, .chart, h1, h2, p, ul")) {
      const r = el.getBoundingClientRect();
      if (el.scrollWidth > el.clientWidth + 1 || r.right > page.clientWidth + 1) {
        out.push(el.id || el.className || el.tagName.toLowerCase());
      }
    }
    return out;
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
      document.body.dataset.overflow = overflowing().join(" ");
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
