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

// Sizes a canvas drawn by hand to its box at the screen's pixel ratio;
// returns its context (in CSS pixels) and the plot's width and height
// inside `pad`.
TR.fitCanvas = function (canvas, pad) {
  const box = canvas.parentNode.getBoundingClientRect(), dpr = window.devicePixelRatio || 1;
  canvas.width = box.width * dpr;
  canvas.height = box.height * dpr;
  canvas.style.width = box.width + 'px';
  canvas.style.height = box.height + 'px';
  const ctx = canvas.getContext('2d');
  ctx.scale(dpr, dpr);
  return {ctx, w: box.width - pad.left - pad.right, h: box.height - pad.top - pad.bottom};
};

TR.canvas = (id, cls = 'chart') =>
  TR.el('div', {class: cls}, TR.el('canvas', {id: id, 'aria-label': id}));

// Each trial's place, 0 (worst) .. 1 (best), by its last value of the
// metric the charts show under its direction; null (grey) for a failed trial.
TR.objectiveRank = function (trials, metric, mode) {
  const value = (t) => (t.metrics && !TR.failed(t) ? t.metrics[metric] : null);
  const rank = TR.ranker(trials.map(value), mode);
  const byId = new Map(trials.map((t) => [t.trial_id, rank(value(t))]));
  return (id) => (byId.has(id) ? byId.get(id) : null);
};

// Learning curves: one line per trial, coloured by TR.objectiveRank; the
// best one thick and red; a trial with one result is a point; a stopped
// trial ends in a cross where the scheduler cut it; a failed trial is grey
// and dashed, ends in a cross of its own and is never the best.
TR.curvesChart = function (canvas, curves, opts) {
  // Cut short: stopped (or failed) before the longest trial's last iteration.
  const longest =
    Math.max(0, ...curves.trials.map((t) => t.iteration[t.iteration.length - 1] || 0));
  // Per-point options are slow in Chart.js: the lines share theirs, and the
  // cuts are one extra scatter series (no `trial`: not a trial's curve).
  const cuts = [], breaks = [];
  const datasets = curves.trials.map((t) => {
    const failed = TR.failed(t);
    const best = !failed && t.trial_id === opts.best;
    const xs = opts.x === 'time' ? t.time : t.iteration;
    const n = t.value.length;
    if (failed && n) breaks.push({x: xs[n - 1], y: t.value[n - 1], id: t.trial_id});
    else if (t.stopped && t.iteration[n - 1] < longest) {
      cuts.push({x: xs[n - 1], y: t.value[n - 1], id: t.trial_id});
    }
    const colour = best ? 'rgb(220,40,40)'
      : failed ? 'rgba(120,120,120,0.7)' : TR.colour(opts.rankOf(t.trial_id), 0.75);
    return {
      label: t.trial_id,
      trial: t.trial_id,
      failed,
      data: t.value.map((v, i) => ({x: xs[i], y: v})),
      borderColor: colour,
      backgroundColor: colour,
      borderWidth: best ? 3 : 1.2,
      borderDash: failed ? [4, 3] : [],
      order: best ? 0 : 1,
      pointRadius: n === 1 ? 3.5 : 0,
      spanGaps: true,
    };
  });
  datasets.push({label: 'stopped', type: 'scatter', data: cuts, pointStyle: 'crossRot',
                 pointRadius: 5, pointBorderWidth: 2, borderColor: 'rgba(200,30,30,0.9)',
                 order: -1});
  datasets.push({label: 'failed', type: 'scatter', data: breaks, pointStyle: 'cross',
                 pointRadius: 6, pointBorderWidth: 2, borderColor: 'rgba(60,60,60,0.9)',
                 order: -1});
  const tooltip = (c) => (c.raw.id
    ? `${c.raw.id} ${c.dataset.label === 'failed' ? 'failed' : 'stopped'}: ${TR.num(c.parsed.y)}`
    : `${c.dataset.label}${c.dataset.failed ? ' (failed)' : ''}: ${TR.num(c.parsed.y)}`);
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
        x: {type: 'linear', title: {display: true, text: xTitle},
            ticks: opts.x === 'time' ? {} : {precision: 0}},
        y: {type: opts.logY ? 'logarithmic' : 'linear',
            title: {display: true, text: curves.metric}},
      },
      onClick: (e, items) => trialOf(items) && opts.onTrial(trialOf(items)),
    },
  });
};

// Parallel coordinates: one axis per parameter and one for the metric, each
// scaled to [0, 1] (log10 for log domains, category index for choices) with
// its ticks or category names; one line per trial, coloured by its metric.
// Drawn straight on the canvas, not with Chart.js, whose cost per dataset
// makes 10,000 trials take seconds; canvas.dataset.lines says how many lines
// it drew. Dragging along an axis brushes a range of it (a click on the axis
// clears it): lines outside every brush turn grey and onBrush hears the ids
// inside (null: no brush); a click elsewhere opens the nearest line's trial.
TR.parallelChart = function (canvas, trials, params, metric, mode, onTrial, onBrush) {
  const axes = params.map((p) => ({name: p.name, log: p.log, get: (t) => t.config[p.name]}));
  axes.push({name: metric, log: false, get: (t) => (t.metrics ? t.metrics[metric] : undefined)});
  const scales = axes.map((a) => TR.parallelScale(a, trials.map(a.get)));
  const value = (t) => (t.metrics && !TR.failed(t) ? t.metrics[metric] : null);
  const rank = TR.ranker(trials.map(value), mode);
  const lines = trials.map((t) => {
    const r = rank(value(t));
    const ys = axes.map((a, i) => scales[i].at(a.get(t)));
    return {id: t.trial_id, r, ys, colour: TR.colour(r, 0.65)};
  });
  lines.sort((a, b) => (a.r ?? -1) - (b.r ?? -1));  // the best drawn last, on top
  // Brushes survive a redraw with new data when the axes are the same.
  const key = scales.map((s) => s.name).join('|');
  if (canvas.brushKey !== key) canvas.brushes = {};
  canvas.brushKey = key;
  const inside = (line) => Object.entries(canvas.brushes).every(
    ([i, [lo, hi]]) => line.ys[i] !== null && line.ys[i] >= lo && line.ys[i] <= hi);
  const pad = {left: 30, right: 60, top: 10, bottom: 24};
  let X, Y;
  const strokeLine = (ctx, line) => {
    ctx.beginPath();
    let pen = false;
    line.ys.forEach((v, i) => {
      if (v === null) return void (pen = false);
      pen ? ctx.lineTo(X(i), Y(v)) : ctx.moveTo(X(i), Y(v));
      pen = true;
    });
    ctx.stroke();
  };
  canvas.draw = function () {
    const {ctx, w, h} = TR.fitCanvas(canvas, pad);
    X = (i) => pad.left + (axes.length > 1 ? (i * w) / (axes.length - 1) : w / 2);
    Y = (v) => pad.top + (1 - v) * h;
    ctx.lineWidth = 1;
    const brushing = Object.keys(canvas.brushes).length > 0;
    for (const line of lines) {
      if (!brushing || inside(line)) continue;
      ctx.strokeStyle = 'rgba(190,190,190,0.35)';
      strokeLine(ctx, line);
    }
    for (const line of lines) {
      if (brushing && !inside(line)) continue;
      ctx.strokeStyle = line.colour;
      strokeLine(ctx, line);
    }
    ctx.font = '10px system-ui, sans-serif';
    scales.forEach((s, i) => {
      ctx.strokeStyle = '#555';
      ctx.beginPath();
      ctx.moveTo(X(i), Y(1));
      ctx.lineTo(X(i), Y(0));
      ctx.stroke();
      ctx.fillStyle = '#333';
      ctx.textAlign = 'left';
      for (const tick of s.ticks) {
        ctx.beginPath();
        ctx.moveTo(X(i) - 3, Y(tick.at));
        ctx.lineTo(X(i) + 3, Y(tick.at));
        ctx.stroke();
        ctx.fillText(tick.text, X(i) + 5, Y(tick.at) + 3);
      }
      const brush = canvas.brushes[i];
      if (brush) {
        ctx.fillStyle = 'rgba(40,90,200,0.18)';
        ctx.fillRect(X(i) - 6, Y(brush[1]), 12, Y(brush[0]) - Y(brush[1]));
      }
      ctx.fillStyle = '#222';
      ctx.font = '11px system-ui, sans-serif';
      ctx.textAlign = i === 0 ? 'left' : i === scales.length - 1 ? 'right' : 'center';
      const x = X(i) + (i === 0 ? -pad.left + 2 : i === scales.length - 1 ? pad.right - 2 : 0);
      ctx.fillText(s.name, x, Y(0) + 16);
      ctx.font = '10px system-ui, sans-serif';
    });
  };
  const brushed = () => {
    if (!Object.keys(canvas.brushes).length) return null;
    return canvas.lines.filter(inside).map((l) => l.id);
  };
  canvas.dataset.lines = String(lines.length);
  canvas.lines = lines;
  canvas.onTrial = onTrial;
  canvas.onBrush = onBrush || (() => {});
  canvas.brushed = brushed;
  canvas.draw();
  if (!canvas.observer) {
    // Redraw on a change of width only: drawing must not feed back into layout.
    const width = () =>
      Math.round(canvas.parentNode.getBoundingClientRect().width * (window.devicePixelRatio || 1));
    canvas.observer = new ResizeObserver(() => canvas.width !== width() && canvas.draw());
    canvas.observer.observe(canvas.parentNode);
    const at = (e) => {
      const rect = canvas.getBoundingClientRect();
      return {x: e.clientX - rect.left, y: e.clientY - rect.top};
    };
    const axisNear = (x) => {
      for (let i = 0; i < canvas.lines[0]?.ys.length; i++) if (Math.abs(X(i) - x) < 10) return i;
      return -1;
    };
    const level = (y) => {
      const box = canvas.parentNode.getBoundingClientRect();
      const h = box.height - pad.top - pad.bottom;
      return Math.min(1, Math.max(0, 1 - (y - pad.top) / h));
    };
    let drag = null;
    canvas.addEventListener('mousedown', (e) => {
      const p = at(e), axis = axisNear(p.x);
      if (axis >= 0) drag = {axis, from: level(p.y), moved: false};
    });
    canvas.addEventListener('mousemove', (e) => {
      if (!drag) return;
      const v = level(at(e).y);
      drag.moved = drag.moved || Math.abs(v - drag.from) > 0.01;
      if (drag.moved) canvas.brushes[drag.axis] = [Math.min(v, drag.from), Math.max(v, drag.from)];
      canvas.draw();
    });
    window.addEventListener('mouseup', () => {
      if (!drag) return;
      if (!drag.moved) delete canvas.brushes[drag.axis];
      drag = null;
      canvas.justBrushed = true;
      canvas.draw();
      canvas.onBrush(canvas.brushed());
    });
    // A click opens the trial whose line passes nearest, within 6 pixels.
    canvas.addEventListener('click', (e) => {
      if (canvas.justBrushed) return void (canvas.justBrushed = false);
      const {x, y} = at(e);
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
};

// One parallel-coordinates axis: at(v) in [0, 1] (null: no value), and its
// ticks [{at, text}]: five evenly spaced numbers (powers of ten apart on a
// log axis), or each category's name.
TR.parallelScale = function (axis, values) {
  const raw = values.filter((v) => v !== undefined && v !== null);
  if (raw.every((v) => typeof v === 'number')) {
    const f = (v) => (axis.log && v > 0 ? Math.log10(v) : v);
    let lo = Infinity, hi = -Infinity;
    for (const v of raw) {
      lo = Math.min(lo, f(v));
      hi = Math.max(hi, f(v));
    }
    const at = (v) => (typeof v === 'number' ? (hi > lo ? (f(v) - lo) / (hi - lo) : 0.5) : null);
    const ticks = !raw.length ? [] : hi > lo ? [0, 0.25, 0.5, 0.75, 1].map((q) => {
      const x = lo + q * (hi - lo);
      return {at: q, text: TR.num(Number((axis.log ? 10 ** x : x).toPrecision(3)))};
    }) : [{at: 0.5, text: TR.num(raw[0])}];
    return {name: axis.name + (axis.log ? ' (log)' : ''), at, ticks};
  }
  const name = (v) => (typeof v === 'string' ? v : JSON.stringify(v));
  const cats = [...new Set(raw.map(name))].sort();
  const at = (v) =>
    (v === undefined || v === null ? null : (cats.indexOf(name(v)) + 0.5) / cats.length);
  const every = Math.max(1, Math.ceil(cats.length / 12));  // at most ~12 names on an axis
  const ticks = cats.filter((c, k) => k % every === 0)
    .map((c) => ({at: (cats.indexOf(c) + 0.5) / cats.length, text: c}));
  return {name: axis.name, at, ticks};
};

// Slice plot: the metric against one parameter, one point per trial that
// has both, a failed trial's (where it broke) a grey cross; a choice's values
// on a category axis. Points sorted along x: Chart.js takes unparsed data as
// sorted when it sizes the axis. canvas.dataset.points counts every point,
// data-failed the crosses.
TR.sliceChart = function (canvas, trials, param, metric) {
  const label = (v) => (typeof v === 'string' ? v : JSON.stringify(v));
  const points = trials
    .filter((t) => t.metrics && typeof t.metrics[metric] === 'number' &&
                   t.config[param.name] !== undefined &&
                   (!param.numeric || typeof t.config[param.name] === 'number'))
    .map((t) => ({x: param.numeric ? t.config[param.name] : label(t.config[param.name]),
                  y: t.metrics[metric], id: t.trial_id, failed: TR.failed(t)}));
  const labels = param.numeric ? null : [...new Set(points.map((p) => p.x))].sort();
  if (param.numeric) points.sort((a, b) => a.x - b.x);
  else points.sort((a, b) => labels.indexOf(a.x) - labels.indexOf(b.x));
  const xScale = param.numeric ? {type: param.log ? 'logarithmic' : 'linear'}
                               : {type: 'category', labels, offset: true};
  const ok = points.filter((p) => !p.failed), failed = points.filter((p) => p.failed);
  canvas.dataset.points = String(points.length);
  canvas.dataset.failed = String(failed.length);
  return TR.chart(canvas, {
    type: 'scatter',
    data: {datasets: [
      {label: 'trial', data: ok, pointRadius: 3, backgroundColor: 'rgba(40,90,200,0.6)'},
      {label: 'failed', data: failed, pointStyle: 'cross', pointRadius: 5, pointBorderWidth: 2,
       borderColor: 'rgba(90,90,90,0.8)'},
    ]},
    options: {
      parsing: param.numeric ? false : {xAxisKey: 'x', yAxisKey: 'y'},
      plugins: {
        legend: {display: false},
        title: {display: true, text: param.name + (param.log ? ' (log axis)' : '')},
        tooltip: {callbacks: {label: (c) =>
          `${c.raw.id}${c.raw.failed ? ' (failed)' : ''}: ${TR.num(c.raw.y)}`}},
      },
      scales: {x: xScale, y: {title: {display: true, text: metric}}},
    },
  });
};

// Optimisation history: each trial's value by trial index, the best so far
// among the trials that did not fail and are feasible, and each failed
// trial's value (where it broke) as a grey cross. canvas.dataset.failed
// counts the crosses.
TR.historyChart = function (canvas, trials, metric, mode) {
  const points = [], best = [], failed = [];
  let so_far = null;
  for (const t of trials) {
    const v = t.metrics ? t.metrics[metric] : null;
    if (typeof v !== 'number' || !isFinite(v)) continue;
    if (TR.failed(t)) {
      failed.push({x: t.index, y: v, id: t.trial_id});
      continue;
    }
    points.push({x: t.index, y: v, id: t.trial_id});
    if (!TR.feasible(t.metrics)) continue;
    if (so_far === null || (mode === 'max' ? v > so_far : v < so_far)) so_far = v;
    best.push({x: t.index, y: so_far});
  }
  canvas.dataset.failed = String(failed.length);
  canvas.dataset.best = best.length ? String(best[best.length - 1].y) : '';
  return TR.chart(canvas, {
    type: 'scatter',
    data: {datasets: [
      {label: 'trial', data: points, pointRadius: 3, backgroundColor: 'rgba(40,90,200,0.6)'},
      {label: 'failed', data: failed, pointStyle: 'cross', pointRadius: 5, pointBorderWidth: 2,
       borderColor: 'rgba(90,90,90,0.8)'},
      {label: `best so far (${mode})`, data: best, type: 'line', stepped: true,
       borderColor: 'rgb(220,40,40)', pointRadius: 0},
    ]},
    options: {parsing: false, normalized: true,
              plugins: {tooltip: {callbacks: {label: (c) => (c.raw.id
                ? `${c.raw.id}${c.dataset.label === 'failed' ? ' (failed)' : ''}: ` +
                  TR.num(c.raw.y) : `best so far: ${TR.num(c.raw.y)}`)}}},
              scales: {x: {title: {display: true, text: 'trial index'}, ticks: {precision: 0}},
                       y: {title: {display: true, text: metric}}}},
  });
};

// Each parameter's importance by the random forest's mean decrease in
// impurity and, beside it, by fANOVA over the same forest.
TR.importanceChart = function (canvas, importance) {
  const names = importance.params.map((p) => p.name);
  const fanova = Object.fromEntries((importance.fanova || []).map((p) => [p.name, p.importance]));
  return TR.chart(canvas, {
    type: 'bar',
    data: {labels: names,
           datasets: [{label: 'mean decrease in impurity',
                       data: importance.params.map((p) => p.importance),
                       backgroundColor: 'rgba(40,90,200,0.7)'},
                      {label: 'fANOVA', data: names.map((n) => fanova[n] ?? null),
                       backgroundColor: 'rgba(230,120,20,0.7)'}]},
    options: {indexAxis: 'y', plugins: {legend: {display: true}}, scales: {x: {min: 0, max: 1}}},
  });
};

// Empirical distribution function: the share of trials whose last value of
// the metric is at most x, one step per trial that did not fail.
TR.edfChart = function (canvas, trials, metric) {
  const values = trials.map((t) => (t.metrics && !TR.failed(t) ? t.metrics[metric] : null))
    .filter((v) => typeof v === 'number' && isFinite(v)).sort((a, b) => a - b);
  const points = values.map((v, i) => ({x: v, y: (i + 1) / values.length}));
  canvas.dataset.points = String(points.length);
  return TR.chart(canvas, {
    type: 'line',
    data: {datasets: [{label: metric, data: points, stepped: 'after', pointRadius: 2,
                       borderColor: 'rgb(40,90,200)', backgroundColor: 'rgb(40,90,200)'}]},
    options: {
      parsing: false,
      plugins: {legend: {display: false}},
      scales: {x: {type: 'linear', title: {display: true, text: metric}},
               y: {min: 0, max: 1, title: {display: true, text: 'share of trials at most x'}}},
    },
  });
};

// Rank plot (optuna-dashboard's): for each pair of the first four
// parameters, every trial that did not fail a dot at its two values,
// coloured by the rank of its metric value (yellow best): where the good
// trials lie, whatever the scale of the metric. redraw(trials, params,
// metric, mode); the section's data-points counts the trials ranked.
TR.rankSection = function (onTrial) {
  const grid = TR.el('div', {class: 'grid', id: 'rank'});
  const note = TR.el('p', {class: 'muted', id: 'rank-note'});
  const section = TR.section('Rank plot', note, grid);
  section.redraw = function (trials, params, metric, mode) {
    const shown = params.slice(0, 4);
    const pairs = [];
    for (let a = 0; a < shown.length; a++) {
      for (let b = a + 1; b < shown.length; b++) pairs.push([shown[a], shown[b]]);
    }
    const ranked = trials.filter((t) => !TR.failed(t) && t.metrics &&
                                        typeof t.metrics[metric] === 'number' &&
                                        isFinite(t.metrics[metric]));
    const sign = mode === 'max' ? -1 : 1;
    const order = [...ranked].sort((x, y) => sign * (x.metrics[metric] - y.metrics[metric]));
    const rankOf = new Map(order.map((t, i) => [t.trial_id, i]));
    const share = (t) => (order.length > 1 ? 1 - rankOf.get(t.trial_id) / (order.length - 1) : 1);
    section.dataset.points = String(ranked.length);
    note.textContent = pairs.length
      ? `${TR.plural(ranked.length, 'trial')} coloured by the rank of their last ${metric} ` +
        `(${mode}; yellow best, failed trials left out)`
      : 'needs two parameters that vary';
    if (grid.childElementCount !== pairs.length) {
      grid.replaceChildren(...pairs.map((p, i) => TR.canvas('rank-' + i, 'chart small')));
    }
    const axis = (p, values) => (p.numeric ? {type: p.log ? 'logarithmic' : 'linear'}
      : {type: 'category', labels: [...new Set(values.map(String))].sort(), offset: true});
    const at = (p, v) => (p.numeric ? v : String(v));
    pairs.forEach(([px, py], i) => {
      const points = ranked
        .filter((t) => t.config[px.name] !== undefined && t.config[py.name] !== undefined)
        .map((t) => ({x: at(px, t.config[px.name]), y: at(py, t.config[py.name]),
                      id: t.trial_id, r: share(t)}))
        .sort((a, b) => a.r - b.r);  // the best drawn last, on top
      TR.chart(document.getElementById('rank-' + i), {
        type: 'scatter',
        data: {datasets: [{data: points, pointRadius: 4,
                           backgroundColor: points.map((p) => TR.colour(p.r, 0.9))}]},
        options: {
          parsing: px.numeric && py.numeric ? false : {xAxisKey: 'x', yAxisKey: 'y'},
          plugins: {legend: {display: false},
                    tooltip: {callbacks: {label: (c) =>
                      `${c.raw.id}: rank ${rankOf.get(c.raw.id) + 1} of ${order.length}`}}},
          scales: {x: {...axis(px, points.map((p) => p.x)), title: {display: true, text: px.name}},
                   y: {...axis(py, points.map((p) => p.y)), title: {display: true, text: py.name}}},
          onClick: (e, items) => items.length && onTrial(points[items[0].index].id),
        },
      });
    });
  };
  return section;
};

// Timeline (optuna-dashboard's): one bar per trial from its start to its end
// (or now, while it runs), coloured by its status, by trial index; a trial
// that never started is a dot where it was created. The canvas's
// data-bars counts the bars by status, as JSON.
TR.TIMELINE_COLOURS = {TERMINATED: 'rgba(40,90,200,0.75)', ERROR: 'rgba(200,30,30,0.85)',
                       RUNNING: 'rgba(30,150,70,0.85)', PAUSED: 'rgba(200,130,0,0.8)',
                       PENDING: 'rgba(150,150,150,0.6)'};
TR.timelineSection = function (onTrial) {
  const note = TR.el('p', {class: 'muted', id: 'timeline-note'});
  const section = TR.section('Timeline of trials', note, TR.canvas('timeline'));
  section.redraw = function (trials) {
    const now = Date.now() / 1000;
    const t0 = Math.min(...trials.map((t) => t.created_at));
    const byStatus = {};
    for (const t of trials) {
      const start = (t.started_at ?? t.created_at) - t0;
      const end = (t.finished_at ?? (t.status === 'RUNNING' || t.status === 'PAUSED'
        ? now : t.started_at ?? t.created_at)) - t0;
      (byStatus[t.status] = byStatus[t.status] || []).push(
        {x: [start, Math.max(end, start + 1e-3)], y: t.index, id: t.trial_id});
    }
    // Each pause, drawn over its trial's bar.
    const pauses = [];
    for (const t of trials) {
      for (const [from, to] of t.pauses || []) {
        pauses.push({x: [from - t0, (to ?? now) - t0], y: t.index, id: t.trial_id});
      }
    }
    const canvas = document.getElementById('timeline');
    canvas.dataset.bars = JSON.stringify(Object.fromEntries(
      Object.entries(byStatus).map(([k, v]) => [k, v.length])));
    canvas.dataset.pauses = pauses.length;
    note.textContent = 'each trial from its start to its end, its pauses drawn over it (light), ' +
      'by trial index; seconds since the first trial';
    const datasets = [
      {label: 'paused', data: pauses, backgroundColor: 'rgba(255, 255, 255, 0.75)',
       borderColor: TR.TIMELINE_COLOURS.PAUSED || 'grey', borderWidth: 1,
       barPercentage: 0.6, categoryPercentage: 1, minBarLength: 2},
      ...Object.entries(byStatus).map(([status, data]) => ({
        label: status, data, backgroundColor: TR.TIMELINE_COLOURS[status] || 'grey',
        barPercentage: 1, categoryPercentage: 1, minBarLength: 2}))];
    TR.chart(canvas, {
      type: 'bar',
      data: {datasets},
      options: {
        indexAxis: 'y',
        parsing: {xAxisKey: 'x', yAxisKey: 'y'},
        grouped: false,
        plugins: {tooltip: {callbacks: {label: (c) =>
          `${c.raw.id} ${c.dataset.label}: ${TR.num(c.raw.x[0])} – ${TR.num(c.raw.x[1])} s`}}},
        scales: {x: {type: 'linear', title: {display: true, text: 'seconds since the first trial'}},
                 y: {type: 'linear', reverse: true, ticks: {precision: 0},
                     title: {display: true, text: 'trial index'}}},
        onClick: (e, items) => items.length &&
          onTrial(datasets[items[0].datasetIndex].data[items[0].index].id),
      },
    });
  };
  return section;
};
