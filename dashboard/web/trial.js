// One trial: its config and state, curves of every metric it reports, its
// results, status events, checkpoints and the tail of each rank's log.
'use strict';

TR.trialView = function (main, name, id) {
  const table = (head, rows, attrs = {}) => TR.el('table', attrs, TR.head(head),
    TR.el('tbody', {}, rows.map((r) => TR.el('tr', {}, r.map((v) => TR.el('td', {}, v))))));
  const view = {
    version: TR.path(name) + 'version',
    async refresh() {
      const t = await TR.api(TR.path(name) + 'trial/' + TR.enc(id));
      const metrics = [...new Set(t.results.flatMap((r) => Object.keys(r.metrics || {})
        .filter((k) => typeof r.metrics[k] === 'number')))].sort();
      const info = [
        ['status', TR.status(t.status)], ['reason', t.status === 'ERROR' ? t.error : t.reason],
        ['iterations', t.last_iteration], ['failures', t.num_failures],
        ['created', TR.when(t.created_at)], ['started', TR.when(t.started_at)],
        ['finished', TR.when(t.finished_at)], ['directory', t.trial_dir],
        ['suggestion ms (model fit)', t.suggest_s == null ? '-'
          : `${TR.num(1e3 * t.suggest_s)} (${t.model_fit_s == null ? '-' : TR.num(1e3 * t.model_fit_s)})`]];
      const shown = t.results.length < t.num_results
        ? ` (${t.results.length} of ${t.num_results}, evenly thinned)` : '';
      const infoRows =
        info.map(([k, v]) => TR.el('tr', {}, TR.el('th', {}, k), TR.el('td', {}, v)));
      const curves = metrics.map((m, i) => TR.canvas('trial-metric-' + i, 'chart small'));
      const results = t.results.map(
        (r) => [r.iteration, TR.num(r.time_total_s), ...metrics.map((m) => TR.num(r.metrics[m]))]);
      const events = t.events.map((e) => [TR.when(e.at), e.from, e.to, e.reason]);
      const checkpoints = t.checkpoints.length
        ? table(['iteration', 'created', 'source', 'path'],
                t.checkpoints.map((c) => [c.iteration, TR.when(c.created_at), c.source, c.path]),
                {id: 'trial-checkpoints'})
        : TR.el('p', {class: 'muted'}, 'no checkpoints');
      const logs = t.logs.length
        ? t.logs.map((l) => TR.el('div', {}, TR.el('h3', {}, `rank_${l.rank}.log (tail)`),
                                  TR.el('pre', {class: 'log'}, l.tail || '(empty)')))
        : TR.el('p', {class: 'muted'},
                TR.report ? 'logs are not part of the report' : 'no log files');
      main.replaceChildren(
        TR.section(`Trial ${t.trial_id}`,
          TR.el('div', {class: 'pair'},
            TR.el('table', {id: 'trial-info'}, TR.el('tbody', {}, infoRows)),
            TR.el('pre', {id: 'trial-config'}, JSON.stringify(t.config, null, 1)))),
        TR.section('Curves', TR.el('div', {class: 'grid', id: 'trial-curves'}, curves)),
        TR.section('Results' + shown, TR.el('div', {class: 'scroll'},
          table(['iter', 'time_total_s', ...metrics], results, {id: 'trial-results'}))),
        TR.section('Status events',
                   table(['when', 'from', 'to', 'reason'], events, {id: 'trial-events'})),
        TR.section('Checkpoints', checkpoints),
        TR.section('Logs', logs));
      // A single result is a point: a line through one point draws nothing.
      metrics.forEach((m, i) => {
        const data = t.results.filter((r) => typeof r.metrics[m] === 'number')
          .map((r) => ({x: r.iteration, y: r.metrics[m]}));
        TR.chart(document.getElementById('trial-metric-' + i), {
          type: 'line',
          data: {datasets: [{label: m, data, borderColor: 'rgb(40,90,200)',
                             backgroundColor: 'rgb(40,90,200)',
                             pointRadius: data.length === 1 ? 4 : 0}]},
          options: {
            parsing: false,
            plugins: {title: {display: true, text: m}, legend: {display: false}},
            scales: {x: {type: 'linear', ticks: {precision: 0},
                         title: {display: true, text: 'training_iteration'}}},
          },
        });
      });
    },
  };
  return view;
};
