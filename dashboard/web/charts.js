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
  const longest = Math.max(0, ...curves.trials.map((t) => t.iteration[t.iteration.length - 1] || 0));
  const datasets = curves.trials.map((t) => {
    const best = t.trial_id === opts.best;
    const xs = opts.x === 'time' ? t.time : t.iteration;
    const n = t.value.length;
    const cut = (t.stopped || t.status === 'ERROR') && t.iteration[n - 1] < longest;
    return {
      label: t.trial_id,
      data: t.value.map((v, i) => ({x: xs[i], y: v})),
      borderColor: best ? 'rgb(220,40,40)' : TR.colour(rank(t.value[n - 1]), 0.75),
      borderWidth: best ? 3 : 1.2,
      order: best ? 0 : 1,
      pointRadius: t.value.map((_, i) => (i === n - 1 && cut ? 5 : 0)),
      pointStyle: 'crossRot',
      pointBorderWidth: 2,
    };
  });
  return TR.chart(canvas, {
    type: 'line',
    data: {datasets},
    options: {
      parsing: false,
      normalized: true,
      interaction: {mode: 'nearest', intersect: false},
      plugins: {legend: {display: false}, tooltip: {callbacks: {label: (c) => `${c.dataset.label}: ${TR.num(c.parsed.y)}`}}},
      scales: {
        x: {type: 'linear', title: {display: true, text: opts.x === 'time' ? 'time_total_s' : 'training_iteration'}},
        y: {type: opts.logY ? 'logarithmic' : 'linear', title: {display: true, text: curves.metric}},
      },
      onClick: (e, items) => items.length && opts.onTrial(datasets[items[0].datasetIndex].label),
    },
  });
};

// Parallel coordinates: one axis per parameter and one for the metric, each
// scaled to [0, 1] (log10 for log domains, category index for choices); one
// line per trial, coloured by its metric.
TR.parallelChart = function (canvas, trials, params, metric, mode, onTrial) {
  const axes = params.map((p) => ({name: p.name, log: p.log, get: (t) => t.config[p.name]}));
  axes.push({name: metric, log: false, get: (t) => (t.metrics ? t.metrics[metric] : undefined)});
  const scales = axes.map((a) => {
    const raw = trials.map(a.get).filter((v) => v !== undefined && v !== null);
    if (raw.every((v) => typeof v === 'number')) {
      const f = (v) => (a.log && v > 0 ? Math.log10(v) : v);
      const lo = Math.min(...raw.map(f)), hi = Math.max(...raw.map(f));
      const label = `${a.name}${a.log ? ' (log)' : ''} [${TR.num(Math.min(...raw))}, ${TR.num(Math.max(...raw))}]`;
      return {label, at: (v) => (typeof v === 'number' ? (hi > lo ? (f(v) - lo) / (hi - lo) : 0.5) : null)};
    }
    const cats = [...new Set(raw.map((v) => JSON.stringify(v)))].sort();
    return {label: `${a.name} {${cats.join(', ')}}`, at: (v) => (v === undefined ? null : (cats.indexOf(JSON.stringify(v)) + 0.5) / cats.length)};
  });
  const rank = TR.ranker(trials.map((t) => (t.metrics ? t.metrics[metric] : null)), mode);
  const datasets = trials.map((t) => ({
    label: t.trial_id,
    data: axes.map((a, i) => scales[i].at(a.get(t))),
    borderColor: TR.colour(rank(t.metrics ? t.metrics[metric] : null), 0.7),
    borderWidth: 1.2,
    pointRadius: 0,
    spanGaps: false,
  }));
  return TR.chart(canvas, {
    type: 'line',
    data: {labels: scales.map((s) => s.label), datasets},
    options: {
      plugins: {legend: {display: false}, tooltip: {enabled: trials.length <= 500, callbacks: {label: (c) => c.dataset.label}}},
      interaction: {mode: 'nearest', intersect: false},
      scales: {y: {min: 0, max: 1, ticks: {display: false}}, x: {grid: {color: '#888'}}},
      onClick: (e, items) => items.length && onTrial(datasets[items[0].datasetIndex].label),
    },
  });
};

// Slice plot: the metric against one parameter, one point per trial.
TR.sliceChart = function (canvas, trials, param, metric) {
  const points = trials
    .filter((t) => t.metrics && typeof t.metrics[metric] === 'number' && typeof t.config[param.name] === 'number')
    .map((t) => ({x: t.config[param.name], y: t.metrics[metric], id: t.trial_id}));
  return TR.chart(canvas, {
    type: 'scatter',
    data: {datasets: [{data: points, pointRadius: 3, backgroundColor: 'rgba(40,90,200,0.6)'}]},
    options: {
      plugins: {legend: {display: false}, title: {display: true, text: param.name + (param.log ? ' (log axis)' : '')},
                tooltip: {callbacks: {label: (c) => `${points[c.dataIndex].id}: ${TR.num(c.parsed.y)}`}}},
      scales: {x: {type: param.log ? 'logarithmic' : 'linear'}, y: {title: {display: true, text: metric}}},
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
      {label: 'best so far', data: best, type: 'line', stepped: true, borderColor: 'rgb(220,40,40)', pointRadius: 0},
    ]},
    options: {scales: {x: {title: {display: true, text: 'trial index'}}, y: {title: {display: true, text: metric}}}},
  });
};

TR.importanceChart = function (canvas, importance) {
  return TR.chart(canvas, {
    type: 'bar',
    data: {labels: importance.params.map((p) => p.name),
           datasets: [{data: importance.params.map((p) => p.importance), backgroundColor: 'rgba(40,90,200,0.7)'}]},
    options: {indexAxis: 'y', plugins: {legend: {display: false}}, scales: {x: {min: 0, max: 1}}},
  });
};
