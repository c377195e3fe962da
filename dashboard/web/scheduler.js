// Schedulers made visible: ASHA rungs with their cut-offs, HyperBand's
// brackets, and the PBT lineage (who cloned whom, when, with what mutation).
'use strict';

TR.schedulerSection = function (sched, trials, onTrial) {
  const parts = [];
  if (sched.asha) parts.push(TR.ashaView(sched.asha, onTrial));
  if (sched.hyperband) parts.push(TR.hyperbandView(sched.hyperband));
  if (sched.exploits && sched.exploits.length) {
    parts.push(TR.lineageView(sched.exploits, trials, onTrial));
  }
  if (!parts.length) return null;
  return TR.section(`Scheduler: ${sched.type}`, ...parts);
};

TR.ashaView = function (brackets, onTrial) {
  const rows = [], datasets = [];
  const cutoffs = [];
  brackets.forEach((b, bi) => {
    const points = [];
    b.rungs.forEach((r, ri) => {
      rows.push(TR.el('tr', {}, TR.el('td', {}, bi), TR.el('td', {}, ri + 1),
                      TR.el('td', {}, TR.num(r.milestone)), TR.el('td', {}, r.recorded.length),
                      TR.el('td', {}, TR.num(r.cutoff))));
      for (const [id, v] of r.recorded) if (v !== null) points.push({x: r.milestone, y: v, id});
      if (r.cutoff !== null) cutoffs.push({x: r.milestone, y: r.cutoff});
    });
    datasets.push({label: `bracket ${bi}`, data: points, pointRadius: 4,
                   backgroundColor: `hsla(${210 + bi * 50},60%,45%,0.6)`});
  });
  cutoffs.sort((a, b) => a.x - b.x);
  datasets.push({label: 'cut-off', data: cutoffs, type: 'line', borderColor: 'rgb(220,40,40)',
                 borderDash: [6, 4], pointStyle: 'line', pointRadius: 10, pointBorderWidth: 3,
                 showLine: false});
  const label = (c) =>
    (c.raw.id ? `${c.raw.id}: ${TR.num(c.parsed.y)}` : `cut-off ${TR.num(c.parsed.y)}`);
  const trialOf = (items) => items.length && items[0].element.$context.raw.id;
  const box = TR.canvas('asha-rungs', 'chart small');
  setTimeout(() => TR.chart(box.firstChild, {
    type: 'scatter',
    data: {datasets},
    options: {
      plugins: {tooltip: {callbacks: {label}}},
      scales: {x: {type: 'logarithmic',
                   title: {display: true, text: 'rung milestone (training_iteration)'}}},
      onClick: (e, items) => trialOf(items) && onTrial(trialOf(items)),
    },
  }));
  return TR.el('div', {class: 'pair'},
    TR.el('div', {},
          TR.el('h3', {}, 'ASHA rungs: values recorded at each milestone; ' +
                          'a trial below the cut-off stops'),
          TR.el('table', {id: 'asha-table'},
                TR.head(['bracket', 'rung', 'milestone', 'recorded', 'cut-off']),
                TR.el('tbody', {}, rows))),
    box);
};

TR.hyperbandView = function (brackets) {
  const live = (b) => b.live.map((l) => `${l.trial_id} (${TR.num(l.value)})`).join(', ');
  const cells = (b) => [b.band, b.s, b.n, TR.num(b.milestone), b.halvings, live(b)];
  return TR.el('div', {}, TR.el('h3', {}, 'HyperBand brackets'),
    TR.el('table', {}, TR.head(['band', 's', 'n', 'milestone', 'halvings', 'live trials']),
      TR.el('tbody', {}, brackets.map(
        (b) => TR.el('tr', {}, cells(b).map((v) => TR.el('td', {}, v)))))));
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
               y: {reverse: true, ticks: {stepSize: 1},
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
