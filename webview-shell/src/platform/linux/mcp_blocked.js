// Blocked loads of an MCP App view (R-MCP-10). Injected at document start into EVERY frame (the
// host's top document, the view, frames nested in it), in a script world of the host's own whose
// one message handler, `mcpBlocked`, no page world sees. Each `securitypolicyviolation` the engine
// fires goes to the host as {directive: <effective directive>, blocked: <blocked URI, or "eval",
// "inline">}, each cut to 2000 UTF-16 units; events a page made itself (isTrusted false) are not.
(function () {
  'use strict';

  var handlers = window.webkit && window.webkit.messageHandlers;
  var blocked = handlers && handlers.mcpBlocked;
  if (!blocked) {
    return;
  }
  var MAX_TEXT = 2000;

  function cap(value) {
    var text = String(value || '');
    return text.length > MAX_TEXT ? text.slice(0, MAX_TEXT) : text;
  }

  window.addEventListener(
    'securitypolicyviolation',
    function (event) {
      if (!event.isTrusted) {
        return;
      }
      blocked.postMessage({
        directive: cap(event.effectiveDirective || event.violatedDirective),
        blocked: cap(event.blockedURI),
      });
    },
    true
  );
})();
