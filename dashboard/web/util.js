// Shared helpers: data access (live API or the report's inlined answers),
// DOM building, number and time formatting, the error banner.
'use strict';
const TR = (window.TR = {});

TR.report = window.TUNERUN_REPORT || null;

// The answer for an API path: fetched from the server, or read from the
// report. Rejects with the server's error message (a broken database...).
TR.api = async function (path) {
  if (TR.report) {
    if (!(path in TR.report)) {
      const note = TR.report.report && TR.report.report.note;
      throw new Error(`this report does not hold ${path}` + (note ? ` (${note})` : ''));
    }
    return TR.report[path];
  }
  // no-cache: always asked again, with the answer's tag; an answer that did
  // not change comes back as 304 and is read from the browser's cache.
  const res = await fetch('api/' + path, {cache: 'no-cache'});
  let body = null;
  try {
    body = await res.json();
  } catch (e) {
    throw new Error(`${res.status} ${res.statusText} from api/${path}`);
  }
  if (!res.ok) throw new Error(body && body.error ? body.error : `${res.status} from api/${path}`);
  return body;
};

// el('td', {class: 'x', onclick: f}, 'text', child...)
TR.el = function (tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
    else if (key === 'dataset') Object.assign(node.dataset, value);
    else node.setAttribute(key, value === true ? '' : value);
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
};

TR.num = function (v) {
  if (v === null || v === undefined) return '';
  if (typeof v !== 'number') return typeof v === 'object' ? JSON.stringify(v) : String(v);
  if (Number.isInteger(v)) return String(v);
  const a = Math.abs(v);
  return a !== 0 && (a < 1e-3 || a >= 1e5) ? v.toExponential(3) : String(Number(v.toPrecision(5)));
};

// Nested objects as dotted keys, as the server flattens configs.
TR.flatten = function (value, prefix = '', out = {}) {
  if (value && typeof value === 'object' && !Array.isArray(value) && Object.keys(value).length) {
    for (const [k, v] of Object.entries(value)) TR.flatten(v, prefix ? prefix + '.' + k : k, out);
  } else {
    out[prefix] = value;
  }
  return out;
};

// 2 -> "2nd", 11 -> "11th".
TR.ordinal = function (n) {
  const tens = n % 100, ones = n % 10;
  const suffix = tens >= 11 && tens <= 13 ? 'th' : ['th', 'st', 'nd', 'rd'][ones] || 'th';
  return n + suffix;
};

// "1 trial", "3 trials".
TR.plural = (n, noun) => `${n} ${noun}${n === 1 ? '' : 's'}`;

TR.when = (t) => (t ? new Date(t * 1000).toLocaleString() : '');

TR.duration = function (s) {
  if (s === null || s === undefined || !isFinite(s)) return '';
  if (s < 60) return s.toFixed(1) + ' s';
  if (s < 3600) return Math.floor(s / 60) + ' min ' + Math.round(s % 60) + ' s';
  return Math.floor(s / 3600) + ' h ' + Math.round((s % 3600) / 60) + ' min';
};

TR.showError = function (message) {
  const box = document.getElementById('error');
  box.textContent = message;
  box.hidden = false;
};
TR.clearError = function () {
  document.getElementById('error').hidden = true;
};

TR.section = (title, ...children) => TR.el('section', {}, TR.el('h2', {}, title), ...children);
// A table's head: one row of `names`.
TR.head = (names) => TR.el('thead', {}, TR.el('tr', {}, names.map((h) => TR.el('th', {}, h))));

// A status as a coloured word.
TR.status = (s) => TR.el('span', {class: 'status ' + String(s).toLowerCase()}, s);

TR.href = {
  experiments: () => '#/',
  experiment: (name) => '#/exp/' + encodeURIComponent(name),
  trial: (name, id) => '#/exp/' + encodeURIComponent(name) + '/trial/' + encodeURIComponent(id),
  compare: (name, ids) =>
    '#/exp/' + encodeURIComponent(name) + '/compare/' + ids.map(encodeURIComponent).join(','),
};
// API path parts: URL-encoded for the server, raw for the report's keys.
TR.enc = (s) => (TR.report ? String(s) : encodeURIComponent(s));
TR.path = (name) => 'exp/' + TR.enc(name) + '/';

// The searcher and scheduler as the summary names them ("tpe",
// "async_hyperband"), in the words their papers and Ray use.
TR.SEARCHERS = {random: 'random search', tpe: 'TPE', gp: 'GP-BO', bohb: 'BOHB',
                nsga2: 'NSGA-II', motpe: 'MOTPE', grid: 'grid search',
                custom: 'a searcher of the user\'s own'};
TR.SCHEDULERS = {fifo: 'FIFO', asha: 'ASHA', async_hyperband: 'async HyperBand (ASHA)',
                 hyperband: 'HyperBand', hyperband_for_bohb: 'HyperBand for BOHB',
                 median_stopping_rule: 'median stopping', pbt: 'PBT', pb2: 'PB2',
                 mo_asha: 'multi-objective ASHA', custom: 'a scheduler object'};
TR.searchName = (k) => TR.SEARCHERS[k] || k;
TR.schedulerName = (k) => TR.SCHEDULERS[k] || k;

// A failed trial's last value is where it broke: never a result.
TR.failed = (t) => t.status === 'ERROR';

// A result's constraint values (Optuna's constraints_func: each <= 0 when
// satisfied) as a list; null when it reports none.
TR.constraints = function (metrics) {
  if (!metrics || !('constraints' in metrics)) return null;
  const c = metrics.constraints;
  return Array.isArray(c) ? c : [c];
};
// Feasible unless a constraint is above 0 or not a number (storage/schema.sql).
TR.feasible = function (metrics) {
  const c = TR.constraints(metrics);
  return !c || c.every((v) => typeof v === 'number' && v <= 0);
};

// A report's summary of every trial (dashboard/report_summaries.h) as the
// rows the table reads; the trials the charts draw keep their whole rows.
TR.reportTrials = function (name) {
  const s = TR.report['summaries/' + name];
  if (!s) return null;
  if (s.expanded) return s.expanded;
  const whole = new Map((TR.report[`exp/${name}/sample`] || {trials: []}).trials
    .map((t) => [t.trial_id, t]));
  const byKeys = (keys, values) => {
    const out = {};
    values.forEach((v, i) => (out[keys[i]] = v));
    return out;
  };
  s.expanded = s.rows.map(([id, index, status, iteration, error, reason, config, metrics]) =>
    whole.get(id) || {trial_id: id, index, status, iteration, error, reason,
                      config: byKeys(s.config_keys, config),
                      metrics: metrics.length ? byKeys(s.metric_keys, metrics) : null});
  return s.expanded;
};
