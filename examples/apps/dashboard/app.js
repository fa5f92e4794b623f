// An installed app's Surface: the same bridge as an inline bundle, plus its own assets.
(function () {
  'use strict';
  var el = function (id) { return document.getElementById(id); };
  var sun = el('sun');
  var imageReady = new Promise(function (resolve) {
    if (sun.complete) { resolve(sun.naturalWidth > 0); return; }
    sun.onload = function () { resolve(true); };
    sun.onerror = function () { resolve(false); };
  });

  LineUpSurface.onState(function (state) {
    el('city').textContent = String(state.city || '');
    el('temperature').textContent =
      typeof state.temperature === 'number'
        ? new Intl.NumberFormat(navigator.language).format(state.temperature) + '°C'
        : '--';
    el('summary').textContent = String(state.summary || '');
    // Tell the agent once the image and the font are in, so it knows what the user sees.
    Promise.all([imageReady, document.fonts.load('3em "Dashboard Display"')]).then(function (r) {
      LineUpSurface.event('drawn', {
        image: r[0],
        font: document.fonts.check('3em "Dashboard Display"')
      });
    });
  });

  el('refresh').addEventListener('click', function () {
    LineUpSurface.event('refresh', { unit: 'c' });
  });
})();
