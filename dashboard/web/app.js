// The router (#/, #/exp/NAME, #/exp/NAME/trial/ID, #/exp/NAME/compare/ID,ID)
// and the live loop: the current view's version path is polled and the view
// redrawn when it changes.
'use strict';

(function () {
  const POLL_MS = 500;  // a new result shows within ~1 s: under the 2 s the page promises
  let current = null, lastVersion = null, generation = 0;
  let busy = false, drawing = false;  // a poll's refresh, a new view's first one

  function route() {
    const parts = location.hash.replace(/^#\/?/, '').split('/').map(decodeURIComponent);
    const main = document.getElementById('main');
    const crumbs = document.getElementById('crumbs');
    const names = TR.report ? TR.report.experiments.map((e) => e.name) : null;
    if (parts[0] === 'exp' && parts[1]) {
      crumbs.replaceChildren(' / ', TR.el('a', {href: TR.href.experiment(parts[1])}, parts[1]),
                             parts[3] ? ` / ${parts[3]}` : '');
      if (parts[2] === 'compare' && parts[3]) {
        return TR.compareView(main, parts[1], parts[3].split(','));
      }
      return parts[2] === 'trial' && parts[3] ? TR.trialView(main, parts[1], parts[3])
                                              : TR.experimentView(main, parts[1]);
    }
    if (names && names.length === 1) {  // a report holds one experiment: open it
      location.replace(TR.href.experiment(names[0]));
      return null;
    }
    crumbs.replaceChildren();
    return TR.experimentsView(main);
  }

  async function refresh(force) {
    const view = current, mine = generation;
    if (!view) return;
    try {
      const version = TR.report ? 'report' : (await TR.api(view.version)).fingerprint;
      if (mine !== generation || (!force && version === lastVersion)) return;
      await view.refresh();
      if (mine !== generation) return;
      lastVersion = version;
      TR.clearError();
      document.getElementById('live').textContent =
        TR.report ? 'static report' : 'live · updated ' + new Date().toLocaleTimeString();
    } catch (e) {
      TR.showError(e.message);
      lastVersion = null;  // try again on the next tick
    }
  }

  function navigate() {
    generation++;
    lastVersion = null;
    current = route();
    window.scrollTo(0, 0);
    const mine = generation;
    drawing = true;
    refresh(true).finally(() => {
      if (mine === generation) drawing = false;
    });
  }

  window.addEventListener('hashchange', navigate);
  navigate();
  if (!TR.report) {
    // One poll at a time, and none while the view's first drawing is on
    // (its version is not known until then: a poll would draw it twice).
    setInterval(async () => {
      if (busy || drawing) return;
      busy = true;
      await refresh(false);
      busy = false;
    }, POLL_MS);
  }
})();
