// The contour plot: the metric over two parameters, interpolated between the
// trials (inverse-distance weighting on a grid, in each axis' sampling scale:
// log10 for log domains, category index for choices) and coloured as every
// chart colours the metric, with each trial a dot on top. Drawn on the
// canvas with a colour scale of the metric's values at its right; failed
// trials are left out; canvas.dataset.points says how many trials it shows.
'use strict';

TR.contourChart = function (canvas, trials, px, py, metric, mode) {
  const axis = (p) => {
    const scale = TR.parallelScale({name: p.name, log: p.log},
                                   trials.map((t) => t.config[p.name]));
    return {...scale, get: (t) => scale.at(t.config[p.name])};
  };
  const ax = axis(px), ay = axis(py);
  const value = (t) => (t.metrics && !TR.failed(t) ? t.metrics[metric] : null);
  const rank = TR.ranker(trials.map(value), mode);
  const points = trials
    .map((t) => ({x: ax.get(t), y: ay.get(t), r: rank(value(t)), v: value(t), id: t.trial_id}))
    .filter((p) => p.x !== null && p.y !== null && p.r !== null);
  canvas.dataset.points = String(points.length);
  const pad = {left: 60, right: 90, top: 10, bottom: 34};
  const {ctx, w, h} = TR.fitCanvas(canvas, pad);
  const X = (v) => pad.left + v * w, Y = (v) => pad.top + (1 - v) * h;
  const cells = 40;
  if (points.length >= 2) {
    for (let i = 0; i < cells; i++) {
      for (let j = 0; j < cells; j++) {
        const cx = (i + 0.5) / cells, cy = (j + 0.5) / cells;
        let sum = 0, weight = 0;
        for (const p of points) {
          const d2 = (p.x - cx) ** 2 + (p.y - cy) ** 2;
          const k = 1 / (d2 * d2 + 1e-9);
          sum += k * p.r;
          weight += k;
        }
        ctx.fillStyle = TR.colour(sum / weight, 0.55);
        ctx.fillRect(X(i / cells), Y((j + 1) / cells), w / cells + 0.5, h / cells + 0.5);
      }
    }
  }
  for (const p of points) {
    ctx.fillStyle = TR.colour(p.r, 1);
    ctx.strokeStyle = '#222';
    ctx.beginPath();
    ctx.arc(X(p.x), Y(p.y), 3.5, 0, 2 * Math.PI);
    ctx.fill();
    ctx.stroke();
  }
  ctx.fillStyle = '#333';
  ctx.font = '10px system-ui, sans-serif';
  ctx.textAlign = 'center';
  for (const tick of ax.ticks) ctx.fillText(tick.text, X(tick.at), Y(0) + 12);
  ctx.textAlign = 'right';
  for (const tick of ay.ticks) ctx.fillText(tick.text, X(0) - 4, Y(tick.at) + 3);
  ctx.font = '11px system-ui, sans-serif';
  ctx.textAlign = 'center';
  ctx.fillText(ax.name, X(0.5), Y(0) + 28);
  ctx.save();
  ctx.translate(12, Y(0.5));
  ctx.rotate(-Math.PI / 2);
  ctx.fillText(ay.name, 0, 0);
  ctx.restore();
  // The colour scale: best at the top, its values at either end and between.
  if (points.length) {
    const lo = Math.min(...points.map((p) => p.v)), hi = Math.max(...points.map((p) => p.v));
    const bx = X(1) + 14, bw = 12, steps = 50;
    for (let k = 0; k < steps; k++) {
      ctx.fillStyle = TR.colour(1 - k / steps, 1);
      ctx.fillRect(bx, Y(1) + (k * h) / steps, bw, h / steps + 0.5);
    }
    ctx.strokeStyle = '#555';
    ctx.strokeRect(bx, Y(1), bw, h);
    ctx.fillStyle = '#333';
    ctx.font = '10px system-ui, sans-serif';
    ctx.textAlign = 'left';
    const best = mode === 'max' ? hi : lo, worst = mode === 'max' ? lo : hi;
    [0, 0.25, 0.5, 0.75, 1].forEach((q) => {
      const v = worst + q * (best - worst);
      ctx.fillText(TR.num(Number(v.toPrecision(3))), bx + bw + 4, Y(q) + 3);
    });
    ctx.save();
    ctx.translate(bx + bw + 66, Y(0.5));
    ctx.rotate(-Math.PI / 2);
    ctx.textAlign = 'center';
    ctx.fillText(`${metric} (${mode})`, 0, 0);
    ctx.restore();
  }
  canvas.dataset.scale = points.length ? 'drawn' : '';
};

// The contour section: two parameter choosers and the plot;
// redraw(trials, metric, mode) draws it again (a new poll, a brush, another metric).
TR.contourSection = function (params) {
  const canvas = TR.el('canvas', {id: 'contour', 'aria-label': 'contour'});
  const holder = TR.el('div', {class: 'chart'}, canvas);
  const choose = (id, at) => TR.el('select', {id, onchange: () => section.redraw()},
    params.map((p, i) => TR.el('option', {value: p.name, selected: i === at}, p.name)));
  const sx = choose('contour-x', 0), sy = choose('contour-y', 1);
  const section = TR.section('Contour of two parameters',
                             TR.el('div', {class: 'controls'}, 'x ', sx, ' y ', sy), holder);
  let last = [], lastMetric = '', lastMode = 'min';
  section.redraw = (trials, metric, mode) => {
    last = trials || last;
    lastMetric = metric || lastMetric;
    lastMode = mode || lastMode;
    const px = params.find((p) => p.name === sx.value);
    const py = params.find((p) => p.name === sy.value);
    TR.contourChart(canvas, last, px, py, lastMetric, lastMode);
  };
  return section;
};
