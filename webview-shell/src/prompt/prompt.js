// The consent prompt's own script (host-written). Agent strings arrive as JSON data and are put
// into the page with textContent only (R-SEC-6); the buttons report to the host's message
// handler, which takes an answer only after the guard delay.
(function () {
  'use strict';
  var post = function (what) { window.webkit.messageHandlers.lineupHost.postMessage(what); };
  var data = JSON.parse(document.getElementById('data').textContent);
  var text = function (id, value) { document.getElementById(id).textContent = value; };
  // The host's own words, in the host context's language (R-STD-9).
  var words = data.words;
  document.documentElement.lang = data.lang;
  text('link_leads_to', words.link_leads_to);
  text('details', words.details);
  text('reason_heading', words.reason);
  text('deny', words.deny);
  text('always', words.always_allow);
  text('allow', words.allow);
  text('agent', data.agent);
  text('headline', data.headline);
  if (data.conversation === null) {
    document.getElementById('conversation').remove();
  } else {
    text('conversation', data.conversation);
  }
  text('capability', data.capability);
  text('version', words.version + ' ' + data.version);
  text('risk', data.risk);
  text('reason', data.reason);
  if (data.host === null) {
    document.getElementById('link').remove();
  } else {
    text('host', data.host);
  }
  var list = document.getElementById('arguments');
  data.arguments.forEach(function (pair) {
    var dt = document.createElement('dt');
    dt.textContent = pair[0];
    var dd = document.createElement('dd');
    dd.textContent = pair[1];
    list.appendChild(dt);
    list.appendChild(dd);
  });
  text('more', data.more > 0 ? words.more.replace('{n}', String(data.more)) : '');
  if (!data.remember) {
    document.getElementById('always').remove();
  }
  ['deny', 'always', 'allow'].forEach(function (id) {
    var button = document.getElementById(id);
    if (button) {
      button.addEventListener('click', function () { post(id); });
    }
  });
  // Enter does nothing anywhere in the prompt; the host drops it as well.
  document.addEventListener('keydown', function (e) {
    if (e.key === 'Enter') { e.preventDefault(); e.stopPropagation(); }
  }, true);
  document.getElementById('deny').focus();
  post('rendered');
})();
