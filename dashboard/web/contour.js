// The contour plot: the metric over two parameters, interpolated between the
// trials (inverse-distance weighting on a grid, in each axis' sampling scale:
// log10 for log domains, category index for choices) and coloured as every
// chart colours the metric, with each trial a dot on top. Drawn on the
// canvas; canvas.dataset.points says how many trials it shows.
'use strict';

TR.contourChart = function (canvas, trials, px, py, metric, mode) {
  const axis = (p) => {
    const scale = TR.parallelScale({name: p.name, log: p.log},
                                   trials.map((t) => t.config[p.name]));
    return {...scale, get: (t) => scale.at(t.config[p.name])};
  };
  const ax = axis(px), ay = axis(py);
  const rank = TR.ranker(trials.map((t) => (t.metrics ? t.metrics[metric] : null)), mode);
  const points = trials
    .map((t) => ({x: ax.get(t), y: ay.get(t), r: rank(t.metrics ? t.metrics[metric] : null),
                  id: t.trial_id}))
    .filter((p) => p.x !== null && p.y !== null && p.r !== null);
  canvas.dataset.points = String(points.length);
  const pad = {left: 60, right: 10, top: 10, bottom: 34};
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
};

// The contour section: two parameter choosers and the plot; redraw(trials)
// draws it again (a new poll, a brush).
TR.contourSection = function (params, summary) {
  const canvas = TR.el('canvas', {id: 'contour', 'aria-label': 'contour'});
  const holder = TR.el('div', {class: 'chart'}, canvas);
  const choose = (id, at) => TR.el('select', {id, onchange: () => section.redraw()},
    params.map((p, i) => TR.el('option', {value: p.name, selected: i === at}, p.name)));
  const sx = choose('contour-x', 0), sy = choose('contour-y', 1);
  const section = TR.section('Contour of two parameters',
                             TR.el('div', {class: 'controls'}, 'x ', sx, ' y ', sy), holder);
  let last = [];
  section.redraw = (trials) => {
    last = trials || last;
    const px = params.find((p) => p.name === sx.value);
    const py = params.find((p) => p.name === sy.value);
    TR.contourChart(canvas, last, px, py, summary.metric, summary.mode);
  };
  return section;
};
