// The charts, all drawn with Chart.js: one dataset per trial wherever a
// chart shows trials, so a reader (and the browser tests) can count them.
'use strict';

Chart.defaults.animation = false;
Chart.defaults.font.size = 11;
Chart.defaults.maintainAspectRatio = false;

// Viridis, sampled: a metric's colour from worst (dark) to best (yellow).
const VIRIDIS = [[68, 1, 84], [59, 82, 139], [33, 145, 140], [94, 201, 98], [253, 231, 37]];
TR.colour = function (t, alpha = 1) {
  if (t === null || !isFinite(t)) return `rgba(160,160,160,${alpha})`;
  const x = Math.min(1, Math.max(0, t)) * (VIRIDIS.length - 1);
  const i = Math.min(VIRIDIS.length - 2, Math.floor(x));
  const f = x - i;
  const c = VIRIDIS[i].map((v, k) => Math.round(v + f * (VIRIDIS[i + 1][k] - v)));
  return `rgba(${c[0]},${c[1]},${c[2]},${alpha})`;
};

// 0 (worst) .. 1 (best) for a value, given the values seen and the mode.
TR.ranker = function (values, mode) {
  const finite = values.filter((v) => typeof v === 'number' && isFinite(v));
  const lo = Math.min(...finite), hi = Math.max(...finite);
  return (v) => {
    if (typeof v !== 'number' || !isFinite(v) || finite.length === 0) return null;
    const t = hi > lo ? (v - lo) / (hi - lo) : 1;
    return mode === 'max' ? t : 1 - t;
  };
};

// Creates the chart on `canvas`, or updates the one already there in place
// (no flicker when the page refreshes live).
TR.chart = function (canvas, config) {
  const existing = Chart.getChart(canvas);
  if (existing && existing.config.type === config.type) {
    existing.data = config.data;
    existing.options = config.options || {};
    existing.update('none');
    return existing;
  }
  if (existing) existing.destroy();
  return new Chart(canvas, config);
};

TR.canvas = (id, cls = 'chart') =>
  TR.el('div', {class: cls}, TR.el('canvas', {id: id, 'aria-label': id}));

// Learning curves: one line per trial; the best one thick and red; a
// stopped trial ends in a cross where the scheduler cut it.
TR.curvesChart = function (canvas, curves, opts) {
  const rank = TR.ranker(curves.trials.map((t) => t.value[t.value.length - 1]), opts.mode);
  // Cut short: stopped (or failed) before the longest trial's last iteration.
  const longest =
    Math.max(0, ...curves.trials.map((t) => t.iteration[t.iteration.length - 1] || 0));
  // Per-point options are slow in Chart.js: the lines share theirs, and the
  // cuts are one extra scatter series (no `trial`: not a trial's curve).
  const cuts = [];
  const datasets = curves.trials.map((t) => {
    const best = t.trial_id === opts.best;
    const xs = opts.x === 'time' ? t.time : t.iteration;
    const n = t.value.length;
    if ((t.stopped || t.status === 'ERROR') && t.iteration[n - 1] < longest) {
      cuts.push({x: xs[n - 1], y: t.value[n - 1], id: t.trial_id});
    }
    return {
      label: t.trial_id,
      trial: t.trial_id,
      data: t.value.map((v, i) => ({x: xs[i], y: v})),
      borderColor: best ? 'rgb(220,40,40)' : TR.colour(rank(t.value[n - 1]), 0.75),
      borderWidth: best ? 3 : 1.2,
      order: best ? 0 : 1,
      pointRadius: 0,
      spanGaps: true,
    };
  });
  datasets.push({label: 'stopped', type: 'scatter', data: cuts, pointStyle: 'crossRot',
                 pointRadius: 5, pointBorderWidth: 2, borderColor: 'rgba(200,30,30,0.9)',
                 order: -1});
  const tooltip = (c) =>
    `${c.raw.id ? c.raw.id + " stopped" : c.dataset.label}: ${TR.num(c.parsed.y)}`;
  const trialOf = (items) => items.length && datasets[items[0].datasetIndex].trial;
  const xTitle = opts.x === 'time' ? 'time_total_s' : 'training_iteration';
  return TR.chart(canvas, {
    type: 'line',
    data: {datasets},
    options: {
      parsing: false,
      normalized: true,
      interaction: {mode: 'nearest', intersect: false},
      plugins: {legend: {display: false}, tooltip: {callbacks: {label: tooltip}}},
      scales: {
        x: {type: 'linear', title: {display: true, text: xTitle}},
        y: {type: opts.logY ? 'logarithmic' : 'linear',
            title: {display: true, text: curves.metric}},
      },
      onClick: (e, items) => trialOf(items) && opts.onTrial(trialOf(items)),
    },
  });
};

// Parallel coordinates: one axis per parameter and one for the metric, each
// scaled to [0, 1] (log10 for log domains, category index for choices); one
// line per trial, coloured by its metric. Drawn straight on the canvas, not
// with Chart.js, whose cost per dataset makes 10,000 trials take seconds;
// canvas.dataset.lines says how many lines it drew.
TR.parallelChart = function (canvas, trials, params, metric, mode, onTrial) {
  const axes = params.map((p) => ({name: p.name, log: p.log, get: (t) => t.config[p.name]}));
  axes.push({name: metric, log: false, get: (t) => (t.metrics ? t.metrics[metric] : undefined)});
  const scales = axes.map((a) => {
    const raw = trials.map(a.get).filter((v) => v !== undefined && v !== null);
    if (raw.every((v) => typeof v === 'number')) {
      const f = (v) => (a.log && v > 0 ? Math.log10(v) : v);
      let lo = Infinity, hi = -Infinity, min = Infinity, max = -Infinity;
      for (const v of raw) {
        lo = Math.min(lo, f(v));
        hi = Math.max(hi, f(v));
        min = Math.min(min, v);
        max = Math.max(max, v);
      }
      const at = (v) => (typeof v === 'number' ? (hi > lo ? (f(v) - lo) / (hi - lo) : 0.5) : null);
      return {name: a.name + (a.log ? ' (log)' : ''),
              range: raw.length ? `${TR.num(min)} … ${TR.num(max)}` : '', at};
    }
    const cats = [...new Set(raw.map((v) => JSON.stringify(v)))].sort();
    const at = (v) =>
      (v === undefined ? null : (cats.indexOf(JSON.stringify(v)) + 0.5) / cats.length);
    return {name: a.name, range: cats.join(' · '), at};
  });
  const rank = TR.ranker(trials.map((t) => (t.metrics ? t.metrics[metric] : null)), mode);
  const lines = trials.map((t) => {
    const r = rank(t.metrics ? t.metrics[metric] : null);
    const ys = axes.map((a, i) => scales[i].at(a.get(t)));
    return {id: t.trial_id, r, ys, colour: TR.colour(r, 0.65)};
  });
  lines.sort((a, b) => (a.r ?? -1) - (b.r ?? -1));  // the best drawn last, on top
  const pad = {left: 30, right: 30, top: 10, bottom: 36};
  let X, Y;
  canvas.draw = function () {
    const box = canvas.parentNode.getBoundingClientRect(), dpr = window.devicePixelRatio || 1;
    canvas.width = box.width * dpr;
    canvas.height = box.height * dpr;
    canvas.style.width = box.width + 'px';
    canvas.style.height = box.height + 'px';
    const ctx = canvas.getContext('2d');
    ctx.scale(dpr, dpr);
    const w = box.width - pad.left - pad.right, h = box.height - pad.top - pad.bottom;
    X = (i) => pad.left + (axes.length > 1 ? (i * w) / (axes.length - 1) : w / 2);
    Y = (v) => pad.top + (1 - v) * h;
    ctx.lineWidth = 1;
    for (const line of lines) {
      ctx.strokeStyle = line.colour;
      ctx.beginPath();
      let pen = false;
      line.ys.forEach((v, i) => {
        if (v === null) return void (pen = false);
        pen ? ctx.lineTo(X(i), Y(v)) : ctx.moveTo(X(i), Y(v));
        pen = true;
      });
      ctx.stroke();
    }
    ctx.strokeStyle = '#555';
    ctx.fillStyle = '#333';
    ctx.font = '11px system-ui, sans-serif';
    scales.forEach((s, i) => {
      ctx.beginPath();
      ctx.moveTo(X(i), Y(1));
      ctx.lineTo(X(i), Y(0));
      ctx.stroke();
      ctx.textAlign = i === 0 ? 'left' : i === scales.length - 1 ? 'right' : 'center';
      const x = X(i) + (i === 0 ? -pad.left + 2 : i === scales.length - 1 ? pad.right - 2 : 0);
      ctx.fillText(s.name, x, Y(0) + 14);
      ctx.fillStyle = '#777';
      ctx.fillText(s.range, x, Y(0) + 27);
      ctx.fillStyle = '#333';
    });
  };
  canvas.dataset.lines = String(lines.length);
  canvas.draw();
  if (!canvas.observer) {
    // Redraw on a change of width only: drawing must not feed back into layout.
    const width = () =>
      Math.round(canvas.parentNode.getBoundingClientRect().width * (window.devicePixelRatio || 1));
    canvas.observer = new ResizeObserver(() => canvas.width !== width() && canvas.draw());
    canvas.observer.observe(canvas.parentNode);
    // A click opens the trial whose line passes nearest, within 6 pixels.
    canvas.addEventListener('click', (e) => {
      const rect = canvas.getBoundingClientRect();
      const x = e.clientX - rect.left, y = e.clientY - rect.top;
      let best = null, dist = 6;
      for (const line of canvas.lines) {
        for (let i = 0; i + 1 < line.ys.length; i++) {
          if (x < X(i) || x > X(i + 1) || line.ys[i] === null || line.ys[i + 1] === null) continue;
          const f = (x - X(i)) / (X(i + 1) - X(i));
          const d = Math.abs(Y(line.ys[i] + f * (line.ys[i + 1] - line.ys[i])) - y);
          if (d < dist) dist = d, best = line.id;
        }
      }
      if (best) canvas.onTrial(best);
    });
  }
  canvas.lines = lines;
  canvas.onTrial = onTrial;
};

// Slice plot: the metric against one parameter, one point per trial.
TR.sliceChart = function (canvas, trials, param, metric) {
  const points = trials
    .filter((t) => t.metrics && typeof t.metrics[metric] === 'number' &&
                   typeof t.config[param.name] === 'number')
    .map((t) => ({x: t.config[param.name], y: t.metrics[metric], id: t.trial_id}));
  return TR.chart(canvas, {
    type: 'scatter',
    data: {datasets: [{data: points, pointRadius: 3, backgroundColor: 'rgba(40,90,200,0.6)'}]},
    options: {
      parsing: false,
      plugins: {
        legend: {display: false},
        title: {display: true, text: param.name + (param.log ? ' (log axis)' : '')},
        tooltip: {callbacks: {label: (c) => `${points[c.dataIndex].id}: ${TR.num(c.parsed.y)}`}},
      },
      scales: {x: {type: param.log ? 'logarithmic' : 'linear'},
               y: {title: {display: true, text: metric}}},
    },
  });
};

// Optimisation history: each trial's value by trial index, and the best so far.
TR.historyChart = function (canvas, trials, metric, mode) {
  const points = [], best = [];
  let so_far = null;
  for (const t of trials) {
    const v = t.metrics ? t.metrics[metric] : null;
    if (typeof v !== 'number') continue;
    points.push({x: t.index, y: v});
    if (so_far === null || (mode === 'max' ? v > so_far : v < so_far)) so_far = v;
    best.push({x: t.index, y: so_far});
  }
  return TR.chart(canvas, {
    type: 'scatter',
    data: {datasets: [
      {label: 'trial', data: points, pointRadius: 3, backgroundColor: 'rgba(40,90,200,0.6)'},
      {label: 'best so far', data: best, type: 'line', stepped: true,
       borderColor: 'rgb(220,40,40)', pointRadius: 0},
    ]},
    options: {parsing: false, normalized: true,
              scales: {x: {title: {display: true, text: 'trial index'}},
                       y: {title: {display: true, text: metric}}}},
  });
};

TR.importanceChart = function (canvas, importance) {
  return TR.chart(canvas, {
    type: 'bar',
    data: {labels: importance.params.map((p) => p.name),
           datasets: [{data: importance.params.map((p) => p.importance),
                       backgroundColor: 'rgba(40,90,200,0.7)'}]},
    options: {indexAxis: 'y', plugins: {legend: {display: false}}, scales: {x: {min: 0, max: 1}}},
  });
};
