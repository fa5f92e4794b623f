// The relay of an MCP App view (R-MCP-7). Injected at document start into the TOP frame only, in a
// script world of the host's own: the page world of the top document has no script at all, and the
// view, an about:srcdoc child with an opaque origin of its own, can reach neither this world nor
// its message handlers. The handlers it posts to are registered in this world alone, so no page
// world of any frame sees them (WebKitGTK shows page-world handlers to every frame).
//
// It forwards a `message` event to the host only when
//   - its source is the view's own frame (the iframe FRAME_ID below), so neither a frame
//     nested in the view (posting to window.top or window.parent.parent) nor anything else is
//     relayed, and the event is the engine's (isTrusted);
//   - its data is one JSON-RPC 2.0 object: a request or notification (`method` a string, `id` if
//     any a string or a finite number, `params` if any an object or array) or a response (an `id`
//     and exactly one of `result` and `error`, the error an object);
//   - its JSON text is at most MAX_BYTES (below) bytes in UTF-8.
// What passes goes to the handler `mcpMessage` as its JSON text; what does not goes to `mcpDropped`
// as {reason: "wrong_source" | "not_jsonrpc" | "too_large", len: <bytes, for too_large>}.
//
// The host's messages to the view are posted from this same world: the view's frame window's
// postMessage(JSON.parse(text), "*"), so in the view `event.source === window.parent`, which is
// what the SDK's PostMessageTransport accepts.
(function () {
  'use strict';

  // Both replaced by the host before the script is injected.
  var FRAME_ID = '@@LINEUP_MCP_FRAME_ID@@';
  var MAX_BYTES = @@LINEUP_MCP_MAX_BYTES@@;
  var handlers = window.webkit && window.webkit.messageHandlers;
  var message = handlers && handlers.mcpMessage;
  var dropped = handlers && handlers.mcpDropped;
  if (!message || !dropped) {
    return;
  }

  // The view's frame window: the same WindowProxy for every document the frame shows (a reload
  // of the view included), looked up once the host's markup has it.
  var viewWindow = null;
  function view() {
    if (viewWindow === null) {
      var frame = document.getElementById(FRAME_ID);
      if (frame && frame.contentWindow) {
        viewWindow = frame.contentWindow;
      }
    }
    return viewWindow;
  }

  function isObject(value) {
    return value !== null && typeof value === 'object' && !Array.isArray(value);
  }

  function isId(id) {
    return typeof id === 'string' || (typeof id === 'number' && isFinite(id));
  }

  function isJsonRpc(m) {
    if (!isObject(m) || m.jsonrpc !== '2.0') {
      return false;
    }
    var has = function (name) {
      return Object.prototype.hasOwnProperty.call(m, name);
    };
    if (typeof m.method === 'string') {
      var params = !has('params') || (m.params !== null && typeof m.params === 'object');
      return params && (!has('id') || isId(m.id)) && !has('result') && !has('error');
    }
    if (has('method') || !isId(m.id) || has('result') === has('error')) {
      return false;
    }
    return !has('error') || isObject(m.error);
  }

  // The UTF-8 length of JSON text (which has no lone surrogates: JSON.stringify escapes them).
  function utf8Length(text) {
    var bytes = 0;
    for (var i = 0; i < text.length; i += 1) {
      var c = text.charCodeAt(i);
      if (c < 0x80) {
        bytes += 1;
      } else if (c < 0x800) {
        bytes += 2;
      } else if (c >= 0xd800 && c <= 0xdbff) {
        bytes += 4;
        i += 1;
      } else {
        bytes += 3;
      }
    }
    return bytes;
  }

  function drop(reason, len) {
    dropped.postMessage({ reason: reason, len: len });
  }

  window.addEventListener(
    'message',
    function (event) {
      var source = view();
      if (!event.isTrusted || source === null || event.source !== source) {
        drop('wrong_source', 0);
        return;
      }
      var data = event.data;
      if (!isJsonRpc(data)) {
        drop('not_jsonrpc', 0);
        return;
      }
      var text;
      try {
        text = JSON.stringify(data);
      } catch (ignored) {
        // A cycle or a BigInt: no JSON text.
        drop('not_jsonrpc', 0);
        return;
      }
      // Each UTF-16 unit is at most three bytes: only text that might pass the bound is counted.
      if (text.length * 3 > MAX_BYTES) {
        var len = utf8Length(text);
        if (len > MAX_BYTES) {
          drop('too_large', len);
          return;
        }
      }
      message.postMessage(text);
    },
    true
  );
})();
