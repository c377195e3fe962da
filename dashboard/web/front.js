// The trade-offs of an experiment with several objectives (api exp/NAME/front).
// Two objectives: a scatter of every trial, the Pareto front's trials joined
// in order, dominated ones grey, infeasible ones (constraints > 0) as red
// crosses. Three or more: parallel coordinates of the objectives, each axis
// scaled so that up is better, one line per trial, the front's in colour.
// The canvas's data-front, data-dominated and data-infeasible count the trials
// drawn of each kind.
'use strict';

TR.frontSection = function (onTrial) {
  const note = TR.el('p', {class: 'muted', id: 'front-note'});
  const hvNote = TR.el('p', {class: 'muted', id: 'hypervolume-note'});
  const section = TR.section('Pareto front', note, TR.canvas('front'),
                             TR.el('h3', {}, 'Hypervolume history'), hvNote,
                             TR.canvas('hypervolume', 'chart small'));
  section.id = 'front-section';
  section.hidden = true;
  section.redraw = function (front) {
    const n = front.objectives.length;
    section.hidden = n < 2;
    if (n < 2) return;
    const kinds = TR.frontKinds(front.points);
    note.textContent = `${TR.plural(kinds.front.length, 'trial')} on the front of ` +
      `${front.points.length} with a value of every objective; ` +
      `${kinds.dominated.length} dominated, ${kinds.infeasible.length} infeasible`;
    const canvas = document.getElementById('front');
    canvas.dataset.front = String(kinds.front.length);
    canvas.dataset.dominated = String(kinds.dominated.length);
    canvas.dataset.infeasible = String(kinds.infeasible.length);
    (n === 2 ? TR.frontScatter : TR.frontParallel)(canvas, front.objectives, kinds, onTrial);
    TR.hypervolumeChart(document.getElementById('hypervolume'), hvNote, front);
  };
  return section;
};

// The hypervolume that the feasible trials dominate, every objective
// turned into one to minimise, up to a reference point: each objective's
// worst feasible value pushed a tenth of its range further (so the
// extremes count). Exact: a sweep in two dimensions, slices in more.
TR.hypervolume = function (points, reference) {
  const d = reference.length;
  const inside = points.filter((p) => p.every((v, k) => v < reference[k]));
  if (!inside.length) return 0;
  if (d === 1) return reference[0] - Math.min(...inside.map((p) => p[0]));
  // Slices along the last objective: between consecutive values, the
  // points at or below the slice, in the other objectives.
  const sorted = inside.slice().sort((a, b) => a[d - 1] - b[d - 1]);
  let volume = 0;
  for (let i = 0; i < sorted.length; i++) {
    const top = i + 1 < sorted.length ? sorted[i + 1][d - 1] : reference[d - 1];
    const depth = top - sorted[i][d - 1];
    if (depth <= 0) continue;
    const below = TR.nondominated(sorted.slice(0, i + 1).map((p) => p.slice(0, d - 1)));
    volume += depth * TR.hypervolume(below, reference.slice(0, d - 1));
  }
  return volume;
};

// The points no other point dominates (all minimised).
TR.nondominated = (points) => points.filter((p, i) => !points.some((q, j) => j !== i &&
  q.every((v, k) => v <= p[k]) && q.some((v, k) => v < p[k])));

// The hypervolume after each trial, by trial index (at most 300 steps).
TR.hypervolumeHistory = function (front) {
  const signs = front.objectives.map((o) => (o.mode === 'max' ? -1 : 1));
  const feasible = front.points.filter((p) => p.feasible)
    .sort((a, b) => a.index - b.index)
    .map((p) => ({index: p.index, v: p.values.map((x, k) => x * signs[k])}));
  if (!feasible.length) return {reference: null, steps: []};
  const reference = signs.map((_, k) => {
    const values = feasible.map((p) => p.v[k]);
    const lo = Math.min(...values), hi = Math.max(...values);
    return hi + 0.1 * (hi - lo || Math.abs(hi) || 1);
  });
  const steps = [];
  let set = [];
  const every = Math.max(1, Math.ceil(feasible.length / 300));
  feasible.forEach((p, i) => {
    set = TR.nondominated([...set, p.v]);
    if ((i + 1) % every === 0 || i === feasible.length - 1) {
      steps.push({x: p.index, y: TR.hypervolume(set, reference)});
    }
  });
  return {reference: reference.map((r, k) => r * signs[k]), steps};
};

TR.hypervolumeChart = function (canvas, note, front) {
  const {reference, steps} = TR.hypervolumeHistory(front);
  canvas.dataset.final = steps.length ? String(steps[steps.length - 1].y) : '';
  note.textContent = reference
    ? `of the feasible trials so far, by trial index; reference point (${
        reference.map(TR.num).join(', ')}): each objective's worst feasible value and a tenth ` +
      'of its range beyond'
    : 'no feasible trial yet';
  return TR.chart(canvas, {
    type: 'line',
    data: {datasets: [{label: 'hypervolume', data: steps, stepped: 'after', pointRadius: 0,
                       borderColor: 'rgb(40,90,200)'}]},
    options: {parsing: false, plugins: {legend: {display: false}},
              scales: {x: {type: 'linear', title: {display: true, text: 'trial index'}},
                       y: {title: {display: true, text: 'hypervolume'}}}},
  });
};

TR.frontKinds = (points) => ({
  front: points.filter((p) => p.feasible && p.rank === 0),
  dominated: points.filter((p) => p.feasible && p.rank !== 0),
  infeasible: points.filter((p) => !p.feasible),
});

TR.objectiveLabel = (o) => `${o.metric} (${o.mode})`;

TR.frontScatter = function (canvas, objectives, kinds, onTrial) {
  const xy = (p) => ({x: p.values[0], y: p.values[1], id: p.trial_id});
  const front = kinds.front.map(xy).sort((a, b) => a.x - b.x);
  const datasets = [
    {label: 'Pareto front', data: front, showLine: true, borderColor: 'rgb(220,40,40)',
     backgroundColor: 'rgb(220,40,40)', pointRadius: 4},
    {label: 'dominated', data: kinds.dominated.map(xy), pointRadius: 3,
     backgroundColor: 'rgba(120,120,120,0.6)'},
    {label: 'infeasible', data: kinds.infeasible.map(xy), pointStyle: 'crossRot',
     pointRadius: 5, borderColor: 'rgb(200,60,160)', borderWidth: 2},
  ];
  return TR.chart(canvas, {
    type: 'scatter',
    data: {datasets},
    options: {
      parsing: false,
      onClick: (e, hit) => hit.length &&
        onTrial(datasets[hit[0].datasetIndex].data[hit[0].index].id),
      plugins: {tooltip: {callbacks: {label: (c) =>
        `${c.raw.id}: ${TR.num(c.raw.x)}, ${TR.num(c.raw.y)}`}}},
      scales: {x: {title: {display: true, text: TR.objectiveLabel(objectives[0])}},
               y: {title: {display: true, text: TR.objectiveLabel(objectives[1])}}},
    },
  });
};

TR.frontParallel = function (canvas, objectives, kinds, onTrial) {
  const all = [...kinds.front, ...kinds.dominated, ...kinds.infeasible];
  // Each objective from its worst (0) to its best (1) value among the trials;
  // each axis is labelled with those two values.
  const scaled = objectives.map((o, k) => TR.ranker(all.map((p) => p.values[k]), o.mode));
  const ends = objectives.map((o, k) => {
    const values = all.map((p) => p.values[k]).filter((v) => isFinite(v));
    const lo = Math.min(...values), hi = Math.max(...values);
    return o.mode === 'max' ? {best: hi, worst: lo} : {best: lo, worst: hi};
  });
  canvas.dataset.axes = JSON.stringify(ends.map((e) => [e.best, e.worst]));
  const line = (p, colour, dash) => ({
    label: p.trial_id, trial: p.trial_id, raw: p.values,
    data: p.values.map((v, k) => scaled[k](v)),
    borderColor: colour, backgroundColor: colour, borderDash: dash, pointRadius: 2,
  });
  const datasets = [
    ...kinds.infeasible.map((p) => line(p, 'rgba(200,60,160,0.5)', [4, 3])),
    ...kinds.dominated.map((p) => line(p, 'rgba(120,120,120,0.35)', [])),
    ...kinds.front.map((p) => line(p, 'rgba(220,40,40,0.9)', [])),  // on top
  ];
  return TR.chart(canvas, {
    type: 'line',
    data: {labels: objectives.map((o, k) => [TR.objectiveLabel(o),
                                             `best ${TR.num(ends[k].best)} (top)`,
                                             `worst ${TR.num(ends[k].worst)} (bottom)`]),
           datasets},
    options: {
      onClick: (e, hit) => hit.length && onTrial(datasets[hit[0].datasetIndex].trial),
      plugins: {
        legend: {display: false},
        tooltip: {callbacks: {label: (c) =>
          `${c.dataset.trial}: ${TR.num(c.dataset.raw[c.dataIndex])}`}},
      },
      scales: {y: {min: 0, max: 1, ticks: {callback: (v) => `${Math.round(v * 100)}%`},
                   title: {display: true, text: 'worst (0%) … best (100%) of each objective'}}},
    },
  });
};
