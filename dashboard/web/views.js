// The experiments list and the experiment page. Each view has a version
// path (polled by app.js) and refresh(), which redraws in place.
'use strict';

TR.experimentsView = function (main) {
  const table = TR.el('table', {id: 'experiments'});
  main.replaceChildren(TR.section('Experiments', table));
  return {
    version: 'version',
    async refresh() {
      const list = await TR.api('experiments');
      const head = ['experiment', 'status', 'trials', 'by state', 'results',
                    'best of each objective', 'search', 'scheduler', 'started', 'elapsed'];
      table.replaceChildren(
        TR.head(head),
        TR.el('tbody', {}, list.map((e) => {
          const link = TR.el('a', {href: TR.href.experiment(e.name)}, e.name);
          if (e.error) {
            return TR.el('tr', {class: 'broken'}, TR.el('td', {}, link),
                         TR.el('td', {colspan: head.length - 1, class: 'error-cell'}, e.error));
          }
          const counts = Object.entries(e.counts).map(([s, n]) => `${n} ${s}`).join(', ');
          const end = e.status === 'RUNNING' ? Date.now() / 1000 : e.last_result_at || e.updated_at;
          const open = () => (location.hash = TR.href.experiment(e.name));
          return TR.el('tr', {dataset: {experiment: e.name}, onclick: open},
            TR.el('td', {}, link), TR.el('td', {}, TR.status(e.status)),
            TR.el('td', {}, e.num_trials), TR.el('td', {}, counts), TR.el('td', {}, e.num_results),
            TR.el('td', {class: 'objectives'}, TR.objectiveBests(e.objectives || [])),
            TR.el('td', {}, TR.searchName(e.search)),
            TR.el('td', {}, TR.schedulerName(e.scheduler)), TR.el('td', {}, TR.when(e.created_at)),
            TR.el('td', {}, TR.duration(end - e.created_at)));
        })));
    },
  };
};

// "error (min) 0.079, cost (min) 0.01": each objective and its best value.
TR.objectiveBests = (objectives) => (objectives.length ? objectives.map(
  (o) => `${o.metric} (${o.mode}) ${o.best ? TR.num(o.best.value) : '–'}`).join(', ')
  : 'no metric');

TR.experimentView = function (main, name) {
  const PER_PAGE = 100;  // rows of the trial table a page
  const state = {metric: null, dir: 'min', x: 'iteration', logY: false, filter: '',
                 sort: 'index', desc: false, page: 0, importance: '', brushed: null,
                 compare: new Set()};
  // Which way the metric the charts show is better: an objective's own mode,
  // else what the min/max switch says.
  const dirOf = (metric) => {
    const o = data && data.summary.objectives.find((x) => x.metric === metric);
    return o ? o.mode : state.dir;
  };
  const goTrial = (id) => (location.hash = TR.href.trial(name, id));
  // A control's handler: state[key] takes what read() says, and the view redraws.
  const setting = (key, read) => () => {
    state[key] = read();
    view.refresh();
  };
  // A brush on the parallel coordinates: the trials inside it (null: all).
  const onBrush = (ids) => {
    state.brushed = ids ? new Set(ids) : null;
    state.page = 0;
    view.drawTable();
    view.drawCharts();
  };
  const metricSelect =
    TR.el('select', {id: 'metric', onchange: setting('metric', () => metricSelect.value)});
  const dirSelect = TR.el('select', {id: 'direction', onchange: setting('dir', () => dirSelect.value)},
                          TR.el('option', {value: 'min'}, 'lower is better'),
                          TR.el('option', {value: 'max'}, 'higher is better'));
  const dirNote = TR.el('span', {id: 'direction-note', class: 'muted'});
  const sampleNote = TR.el('span', {id: 'sample-note', class: 'muted'});
  const xSelect = TR.el('select', {id: 'xaxis', onchange: setting('x', () => xSelect.value)},
                        TR.el('option', {value: 'iteration'}, 'training_iteration'),
                        TR.el('option', {value: 'time'}, 'time_total_s'));
  const logBox =
    TR.el('input', {type: 'checkbox', id: 'logy', onchange: setting('logY', () => logBox.checked)});
  const filter = TR.el('input', {
    type: 'search',
    id: 'filter',
    placeholder: 'filter: any text in a row',
    oninput: () => {
      // After a pause in typing: past the charts' trials each filter is a query of every trial.
      clearTimeout(state.typing);
      state.typing = setTimeout(() => {
        state.filter = filter.value.toLowerCase();
        state.page = 0;
        view.drawTable();
      }, 200);
    },
  });
  const overview = TR.el('div', {id: 'overview'});
  const curvesNote = TR.el('p', {class: 'muted', id: 'curves-note'});
  const importanceNote = TR.el('p', {class: 'muted', id: 'importance-note'});
  const slices = TR.el('div', {id: 'slices', class: 'grid'});
  const scheduler = TR.el('div', {id: 'scheduler'});
  const front = TR.frontSection(goTrial);
  const edf = TR.canvas('edf', 'chart small');
  const contour = TR.el('div', {id: 'contour-holder'});
  const compareLink = TR.el('span', {id: 'compare'});
  const table = TR.el('table', {id: 'trials', class: 'sortable'});
  const pager = TR.el('div', {class: 'pager'});
  // One metric for every chart below (curves, history, slices, contour,
  // distribution, importance, rank), chosen here.
  const chartControls = TR.el('div', {class: 'controls sticky', id: 'chart-controls'},
                              'charts show ', metricSelect, ' ', dirSelect, dirNote, sampleNote);
  const timeline = TR.el('div', {id: 'timeline-holder'});
  const rank = TR.el('div', {id: 'rank-holder'});
  main.replaceChildren(
    overview,
    chartControls,
    TR.section('Learning curves',
               TR.el('div', {class: 'controls'}, ' x ', xSelect,
                     TR.el('label', {}, logBox, ' log y')),
               curvesNote, TR.canvas('curves')),
    front,
    TR.el('div', {class: 'pair'},
          TR.section('Parallel coordinates', TR.canvas('parallel')),
          TR.section('Optimisation history', TR.canvas('history'))),
    TR.section('Metric against each parameter', slices),
    contour,
    TR.el('div', {class: 'pair'},
          TR.section('Hyperparameter importance', importanceNote,
                     TR.canvas('importance', 'chart small')),
          TR.section('Empirical distribution of the metric', edf)),
    rank,
    timeline,
    scheduler,
    TR.section('Trials', TR.el('div', {class: 'controls'}, filter, compareLink), table, pager));

  let data = null;
  let sample = null;  // the charts' trials: {fingerprint, stride, total, rows: id -> row}
  let generation = 0;  // of refresh() calls
  const view = {
    version: TR.path(name) + 'version',
    async refresh() {
      const mine = ++generation;  // a newer refresh makes this one's late answers moot
      const curvesOf = (m) => (m ? TR.api(TR.path(name) + 'curves?metric=' + TR.enc(m) +
                                          '&mode=' + dirOf(m)) : null);
      // All at once: the curves of the metric shown so far (the first time,
      // of the experiment's), and the trials the charts draw: all of them up
      // to the server's sample size, past it an even sample and each
      // objective's best (the table then pages through the server). After
      // the first time only the rows that changed come.
      let [summary, changes, tradeoffs, curves] = await Promise.all([
        TR.api(TR.path(name) + 'summary'),
        TR.api(TR.path(name) + (sample ? `sample?since=${TR.enc(sample.fingerprint)}` +
                                         `&stride=${sample.stride}` : 'sample')),
        TR.api(TR.path(name) + 'front'),
        curvesOf(state.metric)]);
      if (changes.full || !sample) sample = {rows: new Map()};
      for (const t of changes.trials) sample.rows.set(t.trial_id, t);
      Object.assign(sample, {fingerprint: changes.fingerprint, stride: changes.stride,
                             total: changes.total});
      const trials = [...sample.rows.values()].sort((a, b) => a.index - b.index);
      if (!state.metric || !summary.metrics.includes(state.metric) || !curves) {
        state.metric = summary.metrics[0] || summary.metric;
        data = {summary};
        curves = (await curvesOf(state.metric)) || {trials: [], total: 0, metric: ''};
      }
      data = {summary, trials, total: sample.total, curves};
      sampleNote.textContent = sample.total > trials.length
        ? `; the charts but the curves draw ${trials.length} of the ${sample.total} trials: ` +
          `every ${TR.ordinal(sample.stride)} by creation order and each objective's best` : '';
      // A report holds every trial's summary: its table shows them all.
      if (TR.report) data.all = TR.reportTrials(name);
      const isObjective = summary.objectives.some((o) => o.metric === state.metric);
      dirSelect.hidden = isObjective;
      dirSelect.value = state.dir;
      dirNote.textContent = isObjective
        ? ` (an objective: ${dirOf(state.metric) === 'max' ? 'higher' : 'lower'} is better)` : '';
      view.drawOverview();
      view.drawTable();
      front.redraw(tradeoffs);
      metricSelect.replaceChildren(...summary.metrics.map(
        (m) => TR.el('option', {value: m, selected: m === state.metric}, m)));
      const metric = state.metric, mode = dirOf(metric);
      TR.parallelChart(document.getElementById('parallel'), trials, summary.params, metric, mode,
                       goTrial, onBrush);
      const ids = document.getElementById('parallel').brushed();
      state.brushed = ids ? new Set(ids) : null;
      // The table, the curves and the parallel coordinates first; the other
      // charts after a frame, then the scheduler's view (its state is
      // megabytes at 100,000 trials: asked for only now, it does not hold up
      // the answers above).
      view.drawCharts('main');
      await new Promise((resolve) => setTimeout(resolve, 0));
      if (mine !== generation) return;
      view.drawCharts('rest');
      await new Promise((resolve) => setTimeout(resolve, 0));
      const sched = await TR.api(TR.path(name) + 'scheduler');
      if (mine !== generation) return;
      scheduler.replaceChildren(TR.schedulerSection(sched, trials, goTrial) || '');
      const finished = (summary.counts.TERMINATED || 0) + (summary.counts.ERROR || 0);
      const importanceKey = `${finished}|${metric}`;
      if (importanceKey !== state.importance) {
        state.importance = importanceKey;
        const imp = await TR.api(TR.path(name) + 'importance?metric=' + TR.enc(metric));
        importanceNote.textContent = imp.params.length
          ? `${metric}: ${imp.method}; the ${imp.num_trials} trials that reached ` +
            `training_iteration ${imp.budget} compared there (the highest iteration that ` +
            'enough trials reached; failed trials left out)'
          : imp.reason;
        const canvas = document.getElementById('importance');
        canvas.parentNode.hidden = !imp.params.length;
        TR.importanceChart(canvas, imp);
      }
    },
    // The charts of the trials shown: all, or those inside the brush; `part`
    // 'main' draws the curves alone, 'rest' the others, else every one.
    drawCharts(part) {
      if (!data) return;
      const {summary, curves} = data;
      const shown = (id) => !state.brushed || state.brushed.has(id);
      const trials = data.trials.filter((t) => shown(t.trial_id));
      const metric = state.metric, mode = dirOf(metric);
      const drawn = {...curves, trials: curves.trials.filter((t) => shown(t.trial_id))};
      const brushNote = state.brushed ? ` (${trials.length} inside the brush)` : '';
      const failedShown = curves.trials.filter(TR.failed).length;
      if (part !== 'rest') {
      curvesNote.textContent = (curves.total > curves.trials.length
        ? `the ${curves.trials.length} best of ${curves.total} trials by their last ` +
          `${curves.metric} (${curves.mode === 'max' ? 'highest' : 'lowest'} first; failed ` +
          'trials last); each curve thinned to at most 200 points'
        : `${TR.plural(curves.trials.length, 'trial')}; a red cross marks where a scheduler ` +
          `stopped a trial; colour: each trial's last ${metric} (${mode}), yellow best`) +
        (failedShown ? `; ${failedShown} failed: grey, dashed, a black cross where each broke`
                     : '') + brushNote;
      TR.curvesChart(document.getElementById('curves'), drawn, {
        x: state.x,
        logY: state.logY,
        rankOf: TR.objectiveRank(data.trials, metric, mode),
        best: view.bestOf(metric, mode),
        onTrial: goTrial,
      });
      }
      if (part === 'main') return;
      TR.historyChart(document.getElementById('history'), trials, metric, mode);
      view.drawSlices(summary.params, trials, metric);
      TR.edfChart(document.getElementById('edf'), trials, metric);
      const names = summary.params.map((p) => p.name).join('|');
      if (summary.params.length >= 2 && contour.dataset.params !== names) {
        contour.dataset.params = names;
        contour.replaceChildren(TR.contourSection(summary.params));
      }
      if (contour.firstChild) contour.firstChild.redraw(trials, metric, mode);
      if (TR.rankSection) {
        if (!rank.firstChild) rank.replaceChildren(TR.rankSection(goTrial));
        rank.firstChild.redraw(trials, summary.params, metric, mode);
      }
      if (TR.timelineSection) {
        if (!timeline.firstChild) timeline.replaceChildren(TR.timelineSection(goTrial));
        timeline.firstChild.redraw(trials);
      }
    },
    // The trial drawn as the best curve: an objective's best (feasible, not
    // failed) from the summary; for another metric, the best last value of a
    // curve that did not fail.
    bestOf(metric, mode) {
      const o = data.summary.objectives.find((x) => x.metric === metric);
      if (o) return o.best && o.best.trial_id;
      let best = null, value = null;
      for (const t of data.curves.trials) {
        const v = t.value[t.value.length - 1];
        if (TR.failed(t) || typeof v !== 'number') continue;
        if (value === null || (mode === 'max' ? v > value : v < value)) best = t.trial_id, value = v;
      }
      return best;
    },
    drawOverview() {
      const s = data.summary;
      const end = s.status === 'RUNNING' ? Date.now() / 1000 : s.last_result_at || s.updated_at;
      const counts = Object.entries(s.counts).map(
        ([k, n]) => TR.el('span', {class: 'count'}, TR.status(k), ' ', n));
      const none = s.status_note
        ? 'no best trial: a failed trial\'s last value is where it broke'
        : 'no trial has reported the metric yet';
      const link = (id, attrs = {}) =>
        TR.el('a', {href: TR.href.trial(name, id), ...attrs}, id);
      // One objective: its best trial and config. Several: each one's best
      // (the trade-offs between them are the Pareto front below).
      const best = s.objectives.length > 1
        ? TR.el('div', {class: 'best', id: 'objective-bests'},
                TR.el('h3', {}, `Best trial of each of the ${s.objectives.length} objectives ` +
                                '(their trade-offs: the Pareto front below)'),
                TR.el('ul', {}, s.objectives.map((o) => TR.el('li', {dataset: {metric: o.metric}},
                  `${o.metric} (${o.mode}): `, o.best
                    ? [TR.num(o.best.value), ' — ', link(o.best.trial_id)] : none))))
        : s.best
          ? TR.el('div', {class: 'best'},
                  TR.el('h3', {}, 'Best trial ', link(s.best.trial_id, {id: 'best-trial'}),
                        `: ${s.metric} = ${TR.num(s.best.value)}`),
                  TR.el('pre', {}, JSON.stringify(s.best.config, null, 1)))
          : TR.el('p', {class: 'muted'}, none);
      const note = s.status_note ? ` (${s.status_note})` : '';
      const goal = s.objectives.length
        ? s.objectives.map((o) => `${o.metric} (${o.mode})`).join(', ') : 'no metric';
      const line = TR.el('p', {}, TR.status(s.status), note,
                         ` optimising `, TR.el('span', {id: 'objectives'}, goal),
                         '; search ', TR.el('span', {id: 'searcher'}, TR.searchName(s.search)),
                         ', scheduler ',
                         TR.el('span', {id: 'scheduler-name'}, TR.schedulerName(s.scheduler)),
                         '; ',
                         TR.el('span', {id: 'num-trials'}, s.num_trials),
                         s.num_trials === 1 ? ' trial, ' : ' trials, ',
                         TR.el('span', {id: 'num-results'}, s.num_results),
                         s.num_results === 1 ? ' result, elapsed ' : ' results, elapsed ',
                         TR.duration(end - s.created_at));
      const left = TR.report && TR.report.report && TR.report.report.note;
      overview.replaceChildren(TR.section(`${s.name} `, line, TR.el('p', {}, counts), best,
                                          left ? TR.el('p', {class: 'muted', id: 'report-note'},
                                                       left) : ''));
    },
    drawCompareLink() {
      const n = state.compare.size;
      compareLink.replaceChildren(n < 2 ? (n ? 'tick one more trial to compare' : '')
        : n > 5 ? `${n} ticked: compare at most 5`
          : TR.el('a', {href: TR.href.compare(name, [...state.compare])},
                  `compare the ${n} ticked trials`));
    },
    drawSlices(params, trials, metric) {
      if (slices.childElementCount !== params.length) {
        slices.replaceChildren(...params.map((p, i) => TR.canvas('slice-' + i, 'chart small')));
      }
      params.forEach(
        (p, i) => TR.sliceChart(document.getElementById('slice-' + i), trials, p, metric));
    },
    drawTable() {
      if (!data) return;
      const keys = [...new Set(data.trials.flatMap((t) => Object.keys(t.config)))].sort();
      // Every objective, the metric the charts show, and with constraints
      // their values and whether the trial is feasible.
      const shownMetrics = [...new Set([...data.summary.objectives.map((o) => o.metric),
                                        state.metric].filter((m) => m))];
      const value = (m) => (t) => (t.metrics ? t.metrics[m] : null);
      const constrained = data.trials.some((t) => TR.constraints(t.metrics));
      const cols = [
        ['compare', '', () => null],
        ['index', '#', (t) => t.index],
        ['trial_id', 'trial', (t) => t.trial_id],
        ['status', 'status', (t) => t.status],
        ['iteration', 'iter', (t) => t.iteration],
        ...shownMetrics.map((m) => ['metric.' + m, m, value(m)]),
        ...(constrained ? [
          ['constraints', 'constraints', (t) => TR.constraints(t.metrics)],
          ['feasible', 'feasible', (t) => (t.metrics ? (TR.feasible(t.metrics) ? 'yes' : 'no')
                                                     : null)]] : []),
        ...keys.map((k) => ['config.' + k, k, (t) => t.config[k]]),
        ['reason', 'reason', (t) => (t.status === 'ERROR' ? t.error : t.reason)],
      ];
      // More trials than the charts draw: the table pages through the
      // server's answers, which sort and filter every trial.
      const all = data.all || data.trials;
      if (data.total > all.length) {
        const pages = Math.max(1, Math.ceil(data.total / PER_PAGE));
        state.page = Math.min(state.page, pages - 1);
        // The columns the server sorts by (the ticks, constraints and
        // feasibility are the page's own).
        const sort = /^(index|trial_id|status|iteration|reason|metric\..*|config\..*)$/
          .test(state.sort) ? state.sort : 'index';
        const asked = `${TR.path(name)}trials?offset=${state.page * PER_PAGE}&limit=${PER_PAGE}` +
          `&sort=${TR.enc(sort)}&desc=${state.desc ? 1 : 0}&filter=${TR.enc(state.filter)}`;
        state.asked = asked;
        TR.api(asked).then((answer) => {
          if (asked !== state.asked) return;  // turned, sorted or filtered again meanwhile
          const shownPages = Math.max(1, Math.ceil(answer.total / PER_PAGE));
          view.fillTable(cols, answer.trials, shownPages, true,
                         `${answer.total} of ${data.total} trials (sorted and filtered by the ` +
                         `server; the charts draw ${data.trials.length} of them) `);
        }, (e) => TR.showError(e.message));
        return;
      }
      const col = cols.find((c) => c[0] === state.sort) || cols[0];
      const matches = (t) =>
        cols.some((c) => String(TR.num(c[2](t))).toLowerCase().includes(state.filter));
      const rows = all.filter((t) => (!state.filter || matches(t)) &&
                                     (!state.brushed || state.brushed.has(t.trial_id)));
      const missing = (v) => v === null || v === undefined;
      rows.sort((a, b) => {
        const x = col[2](a), y = col[2](b);
        const c = x === y ? 0 : missing(x) ? 1 : missing(y) ? -1 : x < y ? -1 : 1;
        return state.desc ? -c : c;
      });
      const pages = Math.max(1, Math.ceil(rows.length / PER_PAGE));
      state.page = Math.min(state.page, pages - 1);
      view.fillTable(cols, rows.slice(state.page * PER_PAGE, (state.page + 1) * PER_PAGE), pages,
                     true, `${rows.length} of ${all.length} trials ` +
                     (all.length > data.trials.length
                       ? `(the charts draw ${data.trials.length} of them) ` : ''));
    },
    // The table of the rows `shown` (page state.page of `pages`) and its pager.
    fillTable(cols, shown, pages, sortable, note) {
      const sortBy = (c) => () => {
        state.desc = state.sort === c[0] ? !state.desc : false;
        state.sort = c[0];
        view.drawTable();
      };
      const header = (c) =>
        TR.el('th', {class: sortable && c[0] === state.sort ? (state.desc ? 'desc' : 'asc') : '',
                     onclick: sortable ? sortBy(c) : null}, c[1]);
      const pick = (t) => (e) => {
        e.stopPropagation();  // a tick selects; it does not open the trial
        if (e.target.checked) state.compare.add(t.trial_id);
        else state.compare.delete(t.trial_id);
        view.drawCompareLink();
      };
      const tick = (t) => TR.el('input', {type: 'checkbox', title: 'compare',
                                          checked: state.compare.has(t.trial_id),
                                          onclick: pick(t)});
      const cell = (t, c) => TR.el('td', {}, c[0] === 'compare' ? tick(t)
        : c[0] === 'status' ? TR.status(t.status) : TR.num(c[2](t)));
      view.drawCompareLink();
      table.replaceChildren(
        TR.el('thead', {}, TR.el('tr', {}, cols.map(header))),
        TR.el('tbody', {}, shown.map((t) => TR.el(
          'tr', {dataset: {trial: t.trial_id}, onclick: () => goTrial(t.trial_id)},
          cols.map((c) => cell(t, c))))));
      const turn = (by) => () => {
        state.page += by;
        view.drawTable();
      };
      pager.replaceChildren(note,
        pages > 1 ? TR.el('button', {disabled: state.page === 0, onclick: turn(-1)}, '‹') : '',
        pages > 1 ? ` page ${state.page + 1} of ${pages} ` : '',
        pages > 1 ? TR.el('button', {disabled: state.page >= pages - 1, onclick: turn(1)}, '›')
                  : '');
    },
  };
  return view;
};
