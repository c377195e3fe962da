// Schedulers made visible: ASHA rungs with their cut-offs, HyperBand's
// brackets, and the PBT lineage (who cloned whom, when, with what mutation).
'use strict';

TR.schedulerSection = function (sched, trials, onTrial) {
  const parts = [];
  if (sched.asha) parts.push(TR.ashaView(sched.asha, onTrial));
  if (sched.median) parts.push(TR.medianView(sched.median, onTrial));
  if (sched.hyperband) parts.push(TR.hyperbandView(sched.hyperband, onTrial));
  if (sched.exploits && sched.exploits.length) {
    parts.push(TR.lineageView(sched.exploits, trials, onTrial));
  }
  if (!parts.length) return null;
  return TR.section(`Scheduler: ${sched.type}`, ...parts);
};

// ASHA's rungs: each value where it was recorded (at most 2,000 a rung,
// evenly chosen; the table counts them all), a red cross where it fell
// below the cut-off of the values recorded before it (the decision taken
// then: ASHA stopped that trial there), and each rung's cut-off now.
TR.ashaView = function (brackets, onTrial) {
  const rows = [], datasets = [], cutoffs = [], milestones = new Set();
  brackets.forEach((b, bi) => {
    const kept = [], cut = [];
    b.rungs.forEach((r, ri) => {
      milestones.add(r.milestone);
      // ASHA records nothing where trials end (max_t): that rung shows who got there.
      const top = ri === b.rungs.length - 1 && r.num_recorded === 0;
      rows.push(TR.el('tr', {}, [bi, ri + 1, TR.num(r.milestone), r.num_reached,
                                 top ? 'none: trials end here' : r.num_recorded, r.num_below,
                                 TR.num(r.cutoff)].map((v) => TR.el('td', {}, v))));
      for (const [id, v, at, stopped] of r.recorded) {
        if (v !== null) (stopped ? cut : kept).push({x: r.milestone, y: v, id, at});
      }
      if (r.cutoff !== null) cutoffs.push({x: r.milestone, y: r.cutoff});
    });
    const colour = `hsla(${210 + bi * 50},60%,45%,0.6)`;
    datasets.push({label: `bracket ${bi}`, data: kept, pointRadius: 4, backgroundColor: colour});
    datasets.push({label: `bracket ${bi}: below the cut-off on arrival (stopped there)`, data: cut,
                   pointStyle: 'crossRot', pointRadius: 6, pointBorderWidth: 2,
                   borderColor: 'rgba(200,30,30,0.9)'});
  });
  cutoffs.sort((a, b) => a.x - b.x);
  datasets.push({label: 'cut-off now', data: cutoffs, type: 'line',
                 borderColor: 'rgb(220,40,40)', borderDash: [6, 4], pointStyle: 'line',
                 pointRadius: 10, pointBorderWidth: 3, showLine: false});
  const label = (c) => (c.raw.id
    ? `${c.raw.id}: ${TR.num(c.parsed.y)} (cut-off on arrival ${TR.num(c.raw.at) || 'none'})`
    : `cut-off now ${TR.num(c.parsed.y)}`);
  const trialOf = (items) => items.length && items[0].element.$context.raw.id;
  const ticks = [...milestones].sort((a, b) => a - b);
  const box = TR.canvas('asha-rungs', 'chart small');
  setTimeout(() => TR.chart(box.firstChild, {
    type: 'scatter',
    data: {datasets},
    options: {
      plugins: {tooltip: {callbacks: {label}},
                legend: {labels: {filter: (item, data) =>
                  data.datasets[item.datasetIndex].data.length > 0}}},
      scales: {x: {type: ticks.length > 1 ? 'logarithmic' : 'linear',
                   afterBuildTicks: (axis) => (axis.ticks = ticks.map((value) => ({value}))),
                   ticks: {callback: (v) => TR.num(v)},
                   title: {display: true, text: 'rung milestone (training_iteration)'}}},
      onClick: (e, items) => trialOf(items) && onTrial(trialOf(items)),
    },
  }));
  return TR.el('div', {class: 'pair'},
    TR.el('div', {},
          TR.el('h3', {}, 'ASHA rungs: the values recorded at each milestone; a trial below ' +
                          'the cut-off of the values before it stops there'),
          TR.el('table', {id: 'asha-table'},
                TR.head(['bracket', 'rung', 'milestone', 'reached', 'recorded', 'stopped there',
                         'cut-off now']),
                TR.el('tbody', {}, rows))),
    box);
};

// Median stopping: each trial the rule stopped (or paused), where, its best
// value and the median of the other trials' running means it fell short of,
// as the rule recorded them.
TR.medianView = function (median, onTrial) {
  const number = '(-?[0-9.]+(?:e[-+]?[0-9]+)?|-?inf|nan)';
  const pattern = new RegExp(`MedianStoppingRule at (\\S+) ${number}: best (.+) ${number} is ` +
                             `worse than the median ${number} of the running means of (.*)$`);
  const rows = median.stopped.map((s) => {
    const m = s.reason.match(pattern);
    return {id: s.trial_id, status: s.status, at: m ? Number(m[2]) : null,
            best: m ? Number(m[4]) : null, median: m ? Number(m[5]) : null,
            others: m ? m[6] : '', reason: s.reason};
  });
  const opts = median.options || {};
  const box = TR.canvas('median-chart', 'chart small');
  const points = (key) => rows.filter((r) => r.at !== null).map((r) => ({x: r.at, y: r[key], id: r.id}));
  setTimeout(() => TR.chart(box.firstChild, {
    type: 'scatter',
    data: {datasets: [
      {label: 'the trial\'s best so far', data: points('best'), pointStyle: 'crossRot',
       pointRadius: 6, pointBorderWidth: 2, borderColor: 'rgba(200,30,30,0.9)'},
      {label: 'median of the others\' running means', data: points('median'),
       pointStyle: 'line', pointRadius: 9, pointBorderWidth: 3, borderColor: 'rgb(40,90,200)'},
    ]},
    options: {parsing: false,
              plugins: {tooltip: {callbacks: {label: (c) => `${c.raw.id}: ${TR.num(c.raw.y)}`}}},
              scales: {x: {ticks: {precision: 0},
                           title: {display: true, text: opts.time_attr || 'training_iteration'}}},
              onClick: (e, items) => items.length && onTrial(items[0].element.$context.raw.id)},
  }));
  const link = (id) => TR.el('a', {href: '#', onclick: (e) => {
    e.preventDefault();
    onTrial(id);
  }}, id);
  return TR.el('div', {id: 'median-view'},
    TR.el('h3', {}, `Median stopping: ${TR.plural(rows.length, 'trial')} stopped, each where ` +
                    'its best was worse than the median of the other trials\' running means' +
                    ` (grace period ${TR.num(opts.grace_period ?? 0)}, at least ` +
                    `${TR.num(opts.min_samples_required ?? 3)} others)`),
    TR.el('div', {class: 'pair'},
      TR.el('table', {id: 'median-table'},
            TR.head(['trial', 'status', 'at', 'its best', 'median', 'of']),
            TR.el('tbody', {}, rows.map((r) => TR.el('tr', {},
              TR.el('td', {}, link(r.id)), TR.el('td', {}, TR.status(r.status)),
              TR.el('td', {}, TR.num(r.at)), TR.el('td', {}, TR.num(r.best)),
              TR.el('td', {}, TR.num(r.median)), TR.el('td', {}, r.others))))),
      box));
};

// HyperBand: every bracket, and what became of its trials at each of its
// milestones (the reasons the scheduler recorded tell cut from finished).
TR.hyperbandView = function (brackets, onTrial) {
  const ids = (list) => {
    const shown = list.slice(0, 12).map((id) => TR.el('a', {
      href: '#', onclick: (e) => {
        e.preventDefault();
        onTrial(id);
      }}, id));
    const parts = shown.flatMap((a, i) => (i ? [', ', a] : [a]));
    return list.length > 12 ? [...parts, ` and ${list.length - 12} more`] : parts;
  };
  const fates = [['went_on', 'went on'], ['cut', 'cut here'], ['finished', 'finished'],
                 ['failed', 'failed'], ['ended', 'ended on their own'], ['waiting', 'waiting']];
  const history = (b) => (b.history || []).map((h) => TR.el('tr', {},
    TR.el('td', {}, `band ${b.band}, s=${b.s}`), TR.el('td', {}, TR.num(h.milestone)),
    TR.el('td', {}, h.reached.length),
    TR.el('td', {}, fates.filter(([k]) => h[k].length).flatMap(([k, words], i) =>
      [i ? '; ' : '', `${h[k].length} ${words}: `, ...ids(h[k])]))));
  const live = (b) => b.live.map((l) => `${l.trial_id} (${TR.num(l.value)})`).join(', ');
  const cells = (b) => [b.band, b.s, b.n0, (b.milestones || []).map(TR.num).join(' → '),
                        TR.num(b.milestone), b.halvings, live(b)];
  return TR.el('div', {}, TR.el('h3', {}, 'HyperBand brackets'),
    TR.el('table', {id: 'hyperband-table'},
      TR.head(['band', 's', 'trials', 'milestones', 'now at', 'halvings left', 'live trials']),
      TR.el('tbody', {}, brackets.map(
        (b) => TR.el('tr', {}, cells(b).map((v) => TR.el('td', {}, v)))))),
    TR.el('h3', {}, 'What became of each bracket\'s trials at each milestone'),
    TR.el('table', {id: 'hyperband-history'},
      TR.head(['bracket', 'milestone', 'reached', 'then']),
      TR.el('tbody', {}, brackets.flatMap(history))));
};

// The lineage graph: each trial a grey line along its iterations at its
// index; each exploit an arrow from the donor's checkpoint to the recipient.
TR.lineageView = function (exploits, trials, onTrial) {
  const datasets = trials.map((t) => ({
    label: t.trial_id, data: [{x: 0, y: t.index}, {x: t.iteration, y: t.index}],
    borderColor: 'rgba(150,150,150,0.6)', borderWidth: 2, pointRadius: 0,
  }));
  const mutation = (m) =>
    Object.entries(m).map(([k, [a, b]]) => `${k} ${TR.num(a)} → ${TR.num(b)}`).join(', ');
  for (const e of exploits) {
    datasets.push({
      label: `${e.trial_id} ← ${e.donor_id}: ${mutation(e.mutation)}`,
      data: [{x: e.donor_iteration, y: e.donor_index}, {x: e.iteration, y: e.trial_index}],
      borderColor: 'rgba(40,90,200,0.8)', borderWidth: 1.5,
      pointStyle: ['circle', 'triangle'], pointRadius: [2, 5],
      backgroundColor: 'rgba(40,90,200,0.8)',
    });
  }
  const box = TR.canvas('pbt-lineage', 'chart');
  setTimeout(() => TR.chart(box.firstChild, {
    type: 'line',
    data: {datasets},
    options: {
      parsing: false,
      plugins: {legend: {display: false}, tooltip: {callbacks: {label: (c) => c.dataset.label}}},
      scales: {x: {type: 'linear', title: {display: true, text: 'training_iteration'}},
               y: {reverse: true, ticks: {stepSize: 1, precision: 0},
                   title: {display: true, text: 'trial index'}}},
      onClick: (e, items) =>
        items.length && onTrial(datasets[items[0].datasetIndex].label.split(' ')[0]),
    },
  }));
  const rows = exploits.slice(-200).reverse().map((e) => TR.el('tr', {},
    TR.el('td', {}, TR.when(e.at)), TR.el('td', {}, e.trial_id), TR.el('td', {}, e.donor_id),
    TR.el('td', {}, `${e.donor_iteration} → ${e.iteration}`),
    TR.el('td', {}, mutation(e.mutation))));
  return TR.el('div', {},
    TR.el('h3', {}, `PBT lineage: ${exploits.length} exploits ` +
                    "(arrow: from the donor's checkpoint to the trial that cloned it)"),
    box,
    TR.el('table', {id: 'exploits'},
          TR.head(['when', 'trial', 'cloned', 'iterations', 'mutation']),
          TR.el('tbody', {}, rows)));
};
