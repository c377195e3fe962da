// Two to five trials side by side: their configs (rows that differ marked)
// and their curves of one metric overlaid.
'use strict';

TR.compareView = function (main, name, ids) {
  const COLOURS = ['rgb(40,90,200)', 'rgb(220,40,40)', 'rgb(30,150,70)', 'rgb(200,130,0)',
                   'rgb(130,50,170)'];
  let metric = null;
  const view = {
    version: TR.path(name) + 'version',
    async refresh() {
      const trials = await Promise.all(ids.map((id) => TR.api(TR.path(name) + 'trial/' +
                                                                TR.enc(id))));
      const flat = trials.map((t) => TR.flatten(t.config));
      const keys = [...new Set(flat.flatMap((c) => Object.keys(c)))].sort();
      const rows = keys.map((k) => {
        const values = flat.map((c) => JSON.stringify(c[k]));
        const differ = new Set(values).size > 1;
        return TR.el('tr', {class: differ ? 'differs' : ''}, TR.el('th', {}, k),
                     flat.map((c) => TR.el('td', {}, TR.num(c[k]))));
      });
      const info = [['status', (t) => TR.status(t.status)], ['iterations', (t) => t.last_iteration],
                    ['reason', (t) => (t.status === 'ERROR' ? t.error : t.reason)]];
      const infoRows = info.map(([k, f]) =>
        TR.el('tr', {}, TR.el('th', {}, k), trials.map((t) => TR.el('td', {}, f(t)))));
      const metrics = [...new Set(trials.flatMap((t) => t.results.flatMap(
        (r) => Object.keys(r.metrics || {}).filter((k) => typeof r.metrics[k] === 'number'))))]
        .sort();
      if (!metrics.includes(metric)) metric = metrics[0] || null;
      // Each metric's last value, side by side; the row of the metric drawn below is marked.
      const last = (t, m) => {
        for (let k = t.results.length - 1; k >= 0; k--) {
          const v = t.results[k].metrics && t.results[k].metrics[m];
          if (typeof v === 'number') return v;
        }
        return null;
      };
      const metricRows = metrics.map((m) => TR.el('tr', {class: 'metric-row', dataset: {metric: m}},
        TR.el('th', {}, `last ${m}`), trials.map((t) => TR.el('td', {}, TR.num(last(t, m))))));
      const select = TR.el('select', {id: 'compare-metric', onchange: () => {
        metric = select.value;
        view.refresh();
      }}, metrics.map((m) => TR.el('option', {value: m, selected: m === metric}, m)));
      const head = TR.el('thead', {}, TR.el('tr', {}, TR.el('th', {}, ''), trials.map(
        (t, i) => TR.el('th', {style: `color:${COLOURS[i]}`},
                        TR.el('a', {href: TR.href.trial(name, t.trial_id)}, t.trial_id)))));
      main.replaceChildren(
        TR.section(`Comparing ${trials.length} trials`,
                   TR.el('table', {id: 'compare-table'}, head,
                         TR.el('tbody', {}, infoRows, metricRows, rows))),
        TR.section('Curves', TR.el('div', {class: 'controls'}, 'metric ', select),
                   TR.canvas('compare-curves')));
      TR.chart(document.getElementById('compare-curves'), {
        type: 'line',
        data: {datasets: trials.map((t, i) => ({
          label: t.trial_id,
          trial: t.trial_id,
          data: t.results.filter((r) => r.metrics && typeof r.metrics[metric] === 'number')
            .map((r) => ({x: r.iteration, y: r.metrics[metric]})),
          borderColor: COLOURS[i],
          backgroundColor: COLOURS[i],
          pointRadius: t.results.length === 1 ? 3.5 : 0,
        }))},
        options: {
          parsing: false,
          scales: {x: {type: 'linear', ticks: {precision: 0},
                       title: {display: true, text: 'training_iteration'}},
                   y: {title: {display: true, text: metric || ''}}},
        },
      });
    },
  };
  return view;
};
