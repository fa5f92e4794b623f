// The LineUpSurface bridge (R-UI-6): the one global a Surface may use to talk to its host.
//
// The host injects it as a WebKit user script into the top frame at document start, so it runs before
// any guest code (R-UI-6a) and its text is not part of the page: neither document.scripts nor any
// function's toString() shows the delivery key below. It captures every primitive it needs at that
// moment, so a guest that later replaces JSON.stringify, JSON.parse, Array.prototype methods,
// Function.prototype.call or Object.prototype.toJSON cannot change what the bridge posts or parses.
// It is a convenience, not a boundary: any frame can post to the host directly, and the host
// validates every message (R-SEC-4).
//
// Upstream messages, as strings:
//   {"namespace":"lineup.surface.v1","type":"event","event":<name>,"data":<object>}
//   {"namespace":"lineup.surface.v1","type":"resize","height":<number>}
//   {"namespace":"lineup.surface.v1","type":"ready","document":<32 hex digits>}
//                                                             (once, after the guest script ran)
//   {"namespace":"lineup.surface.v1","type":"close_attempt"}  (each window.close(), R-UI-5)
//   {"namespace":"lineup.surface.v1","type":"diagnostic","kind":"console"|"error"|"rejection"|"csp",
//    "level":"debug"|"log"|"info"|"warn"|"error","message":<text>,"source"?,"line"?,"column"?,
//    "directive"?,"blocked"?}                                 (R-DIAG-1, for the embedder only)
// Downstream: the host evaluates window.LineUpSurface.__deliverState(<key>, <state as JSON text>)
// (R-UI-3) in the main world (no script world is needed, so a backend without them works too).
// The entry point lives on the frozen LineUpSurface object, not enumerable, and is the only
// global besides it: there is no second page global. The key is drawn at random for each webview and exists only in this script's closure
// and in the host, so page code cannot feed itself states the agent never sent (R-UI-6); the text
// is parsed with the JSON.parse captured here, so every key (__proto__ included) is an own data
// property, in the agent's order.
(function () {
  'use strict';

  var win = window;
  var NAMESPACE = 'lineup.surface.v1';
  // Before each message on the console channel; `CONSOLE_MARKER` in bridge.rs.
  var CONSOLE_MARKER = '\u0001lineup.surface.v1\u0001';
  // Replaced by the host with 32 random hex digits before the script is injected.
  var DELIVERY_KEY = '@@LINEUP_DELIVERY_KEY@@';

  var ObjectRef = Object;
  var objectCreate = ObjectRef.create;
  var objectFreeze = ObjectRef.freeze;
  var objectDefineProperty = ObjectRef.defineProperty;
  var objectHasOwn = ObjectRef.prototype.hasOwnProperty;
  var reflectApply = Reflect.apply;
  var functionBind = Function.prototype.bind;
  var TypeErrorRef = TypeError;
  var NumberRef = Number;
  var isFiniteNumber = NumberRef.isFinite;

  function bindTo(fn, thisArg) {
    return reflectApply(functionBind, fn, [thisArg]);
  }

  function has(object, key) {
    return reflectApply(objectHasOwn, object, [key]);
  }

  var stringify = bindTo(JSON.stringify, JSON);
  var parse = bindTo(JSON.parse, JSON);
  var charCodeAt = String.prototype.charCodeAt;
  var setTimeoutRef = typeof win.setTimeout === 'function' ? bindTo(win.setTimeout, win) : null;
  var queueMicrotaskRef =
    typeof win.queueMicrotask === 'function' ? bindTo(win.queueMicrotask, win) : null;
  var addEventListenerRef =
    typeof win.addEventListener === 'function' ? bindTo(win.addEventListener, win) : null;
  var doc = win.document;

  // Evaluated twice (say, once as a user script and once inline), the second copy leaves the first
  // in place: LineUpSurface is not configurable, so it could not be replaced anyway.
  if (has(win, 'LineUpSurface')) {
    return;
  }

  // Whether the post channel is the console (an engine without a message handler, Servo).
  var consoleChannel = false;

  // The post channel, chosen once, now. On WebKitGTK wry's window.ipc.postMessage forwards to
  // window.webkit.messageHandlers.ipc, so that handler is used directly when it exists.
  var post = (function () {
    try {
      var webkit = win.webkit;
      var handlers = webkit && webkit.messageHandlers;
      var handler = handlers && handlers.ipc;
      if (handler && typeof handler.postMessage === 'function') {
        return bindTo(handler.postMessage, handler);
      }
    } catch (ignored) {
      // fall through to window.ipc
    }
    try {
      var ipc = win.ipc;
      if (ipc && typeof ipc.postMessage === 'function') {
        return bindTo(ipc.postMessage, ipc);
      }
    } catch (ignored) {
      // fall through to the console channel
    }
    // A backend without a message handler (Servo) reads the page's console: the message goes out
    // as the one argument of a '%s' format, so no '%' in it is a format, behind a marker that
    // tells it from the page's own console output. The host still knows the sender only by the
    // webview the console line came from.
    try {
      var consoleObject = win.console;
      var consoleDebug = consoleObject && consoleObject.debug;
      if (typeof consoleDebug === 'function') {
        var debugOut = bindTo(consoleDebug, consoleObject);
        consoleChannel = true;
        return function (text) {
          debugOut('%s', CONSOLE_MARKER + text);
        };
      }
    } catch (ignored) {
      // no channel
    }
    return function () {};
  })();

  // Plain records without a prototype: nothing a guest adds to Object.prototype (toJSON, setters,
  // `get`/`set` keys) reaches them.
  function record() {
    return objectCreate(null);
  }

  function message(type) {
    var m = record();
    m.namespace = NAMESPACE;
    m.type = type;
    return m;
  }

  function send(m) {
    post(stringify(m));
  }

  function later(task) {
    if (queueMicrotaskRef !== null) {
      queueMicrotaskRef(task);
    } else if (setTimeoutRef !== null) {
      setTimeoutRef(task, 0);
    }
  }

  function reportLater(error) {
    if (setTimeoutRef !== null) {
      setTimeoutRef(function () {
        throw error;
      }, 0);
    }
  }

  function constant(value) {
    var d = record();
    d.value = value;
    d.writable = false;
    d.enumerable = false;
    d.configurable = false;
    return d;
  }

  // State (R-UI-3): the latest delivered state and a doubly linked list of subscribers.
  var hasState = false;
  var latestState;
  var head = null;
  var tail = null;

  function call(node, state) {
    node.seen = true;
    try {
      reflectApply(node.callback, undefined, [state]);
    } catch (error) {
      reportThrown('error', error);
      rethrown += 1;
      reportLater(error);
    }
  }

  function unlink(node) {
    if (!node.live) {
      return;
    }
    node.live = false;
    if (node.prev !== null) {
      node.prev.next = node.next;
    } else {
      head = node.next;
    }
    if (node.next !== null) {
      node.next.prev = node.prev;
    } else {
      tail = node.prev;
    }
  }

  // Compares every character, whatever the first difference, so timing says nothing of the key.
  function isDeliveryKey(key) {
    if (typeof key !== 'string' || key.length !== DELIVERY_KEY.length) {
      return false;
    }
    var difference = 0;
    for (var i = 0; i < key.length; i += 1) {
      difference |= reflectApply(charCodeAt, key, [i]) ^ reflectApply(charCodeAt, DELIVERY_KEY, [i]);
    }
    return difference === 0;
  }

  function deliverJson(key, text) {
    if (!isDeliveryKey(key) || typeof text !== 'string') {
      return;
    }
    var state;
    try {
      state = parse(text);
    } catch (ignored) {
      return;
    }
    deliverState(state);
  }

  function deliverState(state) {
    hasState = true;
    latestState = state;
    // Snapshot first: a subscriber added during delivery is not called twice, one removed during
    // delivery is not called at all.
    var snapshot = record();
    var count = 0;
    for (var node = head; node !== null; node = node.next) {
      snapshot[count] = node;
      count += 1;
    }
    for (var i = 0; i < count; i += 1) {
      if (snapshot[i].live) {
        call(snapshot[i], state);
      }
    }
  }

  function event(name, data) {
    if (typeof name !== 'string') {
      throw new TypeErrorRef('LineUpSurface.event: the event name must be a string');
    }
    var m = message('event');
    m.event = name;
    m.data = data === undefined ? record() : data;
    send(m);
  }

  function onState(callback) {
    if (typeof callback !== 'function') {
      throw new TypeErrorRef('LineUpSurface.onState: the subscriber must be a function');
    }
    var node = record();
    node.callback = callback;
    node.live = true;
    node.seen = false;
    node.prev = tail;
    node.next = null;
    if (tail !== null) {
      tail.next = node;
    } else {
      head = node;
    }
    tail = node;
    if (hasState) {
      later(function () {
        if (node.live && !node.seen) {
          call(node, latestState);
        }
      });
    }
    return objectFreeze(function unsubscribe() {
      unlink(node);
    });
  }

  function resize(height) {
    var h = NumberRef(height);
    if (!isFiniteNumber(h)) {
      throw new TypeErrorRef('LineUpSurface.resize: the height must be a finite number');
    }
    var m = message('resize');
    m.height = h;
    send(m);
  }

  // Diagnostics (R-DIAG-1): console calls, uncaught errors, unhandled rejections and CSP
  // violations, posted for the embedder and the Surface's author; the host never forwards them to
  // the agent. Everything is captured here, before guest code runs. WebKit hides the message and
  // position of an error that escapes to the window ("Script error.") in a sandboxed document, so
  // the callbacks the engine calls for the guest (listeners, on* handlers, timers, animation
  // frames, microtasks, onState subscribers) are wrapped: an error they throw is reported with
  // its message and stack first, then thrown on unchanged.
  var StringRef = String;
  var ErrorRef = Error;
  var WeakMapRef = WeakMap;
  var weakGet = WeakMapRef.prototype.get;
  var weakSet = WeakMapRef.prototype.set;
  var stringSlice = String.prototype.slice;
  var stringSplit = String.prototype.split;
  var regexpExec = RegExp.prototype.exec;
  var objectGetOwnPropertyNames = ObjectRef.getOwnPropertyNames;
  var objectGetOwnPropertyDescriptor = ObjectRef.getOwnPropertyDescriptor;
  var MAX_TEXT = 2000;
  var FRAME = /^(?:[^@]*@)?(.*):(\d+):(\d+)$/;
  var documentUrl = '';
  try {
    documentUrl = StringRef(win.location.href);
  } catch (ignored) {
    // no URL: positions stay unknown
  }
  // Set while a diagnostic is being made, so guest code it runs (toJSON, toString, a wrapped
  // console) does not report again.
  var reporting = false;
  // Errors the wrappers reported and threw on: the window's (muted) error event for each is skipped.
  var rethrown = 0;

  function cap(value) {
    return value.length > MAX_TEXT ? reflectApply(stringSlice, value, [0, MAX_TEXT]) : value;
  }

  function text(value) {
    try {
      if (typeof value === 'string') {
        return value;
      }
      if (value instanceof ErrorRef) {
        return StringRef(value);
      }
      var json = stringify(value);
      return typeof json === 'string' ? json : StringRef(value);
    } catch (ignored) {
      try {
        return StringRef(value);
      } catch (ignoredAgain) {
        return '[unprintable]';
      }
    }
  }

  // The first frame of `stack` in the Surface's own document, or in a script of its own host
  // (an installed app's script asset, R-SEC-3a): {source, line, column}.
  function position(stack) {
    if (typeof stack !== 'string' || documentUrl === '') {
      return null;
    }
    var frames = reflectApply(stringSplit, stack, ['\n']);
    for (var i = 0; i < frames.length; i += 1) {
      var match = reflectApply(regexpExec, FRAME, [frames[i]]);
      if (match !== null && reflectApply(stringSlice, match[1], [0, documentUrl.length]) === documentUrl) {
        var at = record();
        at.source = match[1];
        at.line = NumberRef(match[2]);
        at.column = NumberRef(match[3]);
        return at;
      }
    }
    return null;
  }

  function diagnostic(kind, level, messageText, at) {
    var m = message('diagnostic');
    m.kind = kind;
    m.level = level;
    m.message = cap(messageText);
    if (at) {
      m.source = cap(StringRef(at.source));
      if (isFiniteNumber(at.line) && at.line > 0) {
        m.line = at.line;
      }
      if (isFiniteNumber(at.column) && at.column > 0) {
        m.column = at.column;
      }
    }
    return m;
  }

  function report(make) {
    if (reporting) {
      return;
    }
    reporting = true;
    try {
      send(make());
    } catch (ignored) {
      // a diagnostic is never worth breaking the page
    }
    reporting = false;
  }

  function reportThrown(kind, error) {
    report(function () {
      var stack = null;
      try {
        stack = error !== null && typeof error === 'object' ? error.stack : null;
      } catch (ignored) {
        // no stack
      }
      return diagnostic(kind, 'error', text(error), position(stack));
    });
  }

  function guarded(fn) {
    return function () {
      try {
        return reflectApply(fn, this, arguments);
      } catch (error) {
        reportThrown('error', error);
        rethrown += 1;
        throw error;
      }
    };
  }

  var wrappers = new WeakMapRef();
  var originals = new WeakMapRef();
  function wrapperOf(fn) {
    if (typeof fn !== 'function') {
      return fn;
    }
    var wrapper = reflectApply(weakGet, wrappers, [fn]);
    if (wrapper === undefined) {
      wrapper = guarded(fn);
      reflectApply(weakSet, wrappers, [fn, wrapper]);
      reflectApply(weakSet, originals, [wrapper, fn]);
    }
    return wrapper;
  }
  function originalOf(value) {
    var fn = typeof value === 'function' ? reflectApply(weakGet, originals, [value]) : undefined;
    return fn === undefined ? value : fn;
  }

  function wrapArgument(owner, name, index) {
    var original = owner && owner[name];
    if (typeof original !== 'function') {
      return;
    }
    owner[name] = function () {
      var args = [];
      for (var i = 0; i < arguments.length; i += 1) {
        args[i] = i === index ? wrapperOf(arguments[i]) : arguments[i];
      }
      return reflectApply(original, this, args);
    };
  }

  function wrapHandlers(target) {
    if (!target) {
      return;
    }
    var names = objectGetOwnPropertyNames(target);
    for (var i = 0; i < names.length; i += 1) {
      var name = names[i];
      if (reflectApply(stringSlice, name, [0, 2]) !== 'on' || name === 'onerror') {
        continue;
      }
      var d = objectGetOwnPropertyDescriptor(target, name);
      if (!d || typeof d.get !== 'function' || typeof d.set !== 'function' || !d.configurable) {
        continue;
      }
      (function (get, set) {
        var accessor = record();
        accessor.get = function () {
          return originalOf(reflectApply(get, this, []));
        };
        accessor.set = function (value) {
          reflectApply(set, this, [wrapperOf(value)]);
        };
        accessor.enumerable = d.enumerable;
        accessor.configurable = true;
        objectDefineProperty(target, name, accessor);
      })(d.get, d.set);
    }
  }

  try {
    var eventTarget = win.EventTarget && win.EventTarget.prototype;
    wrapArgument(eventTarget, 'addEventListener', 1);
    wrapArgument(eventTarget, 'removeEventListener', 1);
    wrapArgument(win, 'setTimeout', 0);
    wrapArgument(win, 'setInterval', 0);
    wrapArgument(win, 'requestAnimationFrame', 0);
    wrapArgument(win, 'queueMicrotask', 0);
    wrapHandlers(win.HTMLElement && win.HTMLElement.prototype);
    wrapHandlers(win.SVGElement && win.SVGElement.prototype);
    wrapHandlers(win.Document && win.Document.prototype);
    wrapHandlers(win.Window && win.Window.prototype);
    wrapHandlers(win);
  } catch (ignored) {
    // a missing interface leaves its callbacks unwrapped
  }

  var consoleRef = win.console;
  function wrapConsole(name, level) {
    var original = consoleRef && consoleRef[name];
    if (typeof original !== 'function') {
      return;
    }
    consoleRef[name] = function () {
      var args = arguments;
      try {
        reflectApply(original, consoleRef, args);
      } catch (ignored) {
        // the engine's console is not the page's business
      }
      var first = name === 'assert' ? 1 : 0;
      if (name === 'assert' && args[0]) {
        return;
      }
      var caller = null;
      try {
        caller = new ErrorRef().stack;
      } catch (ignored) {
        // no stack
      }
      report(function () {
        var parts = name === 'assert' ? 'Assertion failed' : '';
        for (var i = first; i < args.length && parts.length < MAX_TEXT; i += 1) {
          parts += (parts === '' ? '' : ' ') + text(args[i]);
        }
        return diagnostic('console', level, parts, position(caller));
      });
    };
  }
  wrapConsole('debug', 'debug');
  wrapConsole('trace', 'debug');
  wrapConsole('log', 'log');
  wrapConsole('info', 'info');
  wrapConsole('warn', 'warn');
  wrapConsole('error', 'error');
  wrapConsole('assert', 'error');

  if (addEventListenerRef !== null) {
    addEventListenerRef(
      'error',
      function (e) {
        if (e.target !== win) {
          // A resource that failed to load (an <img> whose file is missing, say).
          report(function () {
            var element = e.target;
            var what = element && element.tagName ? StringRef(element.tagName) : 'resource';
            var url = element && (element.currentSrc || element.src || element.href);
            return diagnostic('error', 'error', what + ' failed to load' + (url ? ': ' + text(url) : ''), null);
          });
          return;
        }
        if (rethrown > 0) {
          rethrown -= 1;
          return;
        }
        if (e.error !== null && e.error !== undefined) {
          reportThrown('error', e.error);
          return;
        }
        report(function () {
          var at = record();
          at.source = e.filename || '';
          at.line = e.lineno;
          at.column = e.colno;
          var muted = e.lineno === 0 && !e.filename;
          return diagnostic(
            'error',
            'error',
            text(e.message) +
              (muted
                ? ' (WebKit hides an uncaught error of top-level script or an inline handler attribute ' +
                  'in a sandboxed document; catch it there and console.error it to see its message and line)'
                : ''),
            muted ? null : at
          );
        });
      },
      true
    );
    addEventListenerRef(
      'unhandledrejection',
      function (e) {
        reportThrown('rejection', e.reason);
      },
      true
    );
    addEventListenerRef(
      'securitypolicyviolation',
      function (e) {
        report(function () {
          var at = record();
          at.source = e.sourceFile || '';
          at.line = e.lineNumber;
          at.column = e.columnNumber;
          var m = diagnostic('csp', 'error', text(e.sample || ''), at);
          m.directive = cap(StringRef(e.effectiveDirective || e.violatedDirective || ''));
          m.blocked = cap(StringRef(e.blockedURI || ''));
          return m;
        });
      },
      true
    );
  }

  // A new id for each document this bridge runs in, drawn before any guest code: with it the
  // host tells a second `ready` of this document (dropped) from a document that replaced this
  // one in place (R-UI-10, R-SEC-2a).
  var documentId = (function () {
    var bytes = new Uint8Array(16);
    var hex = '0123456789abcdef';
    var out = '';
    try {
      win.crypto.getRandomValues(bytes);
    } catch (ignored) {
      for (var j = 0; j < 16; j++) {
        bytes[j] = (Math.random() * 256) | 0;
      }
    }
    for (var i = 0; i < 16; i++) {
      out += hex[bytes[i] >> 4] + hex[bytes[i] & 15];
    }
    return out;
  })();

  var readySent = false;
  function sendReady() {
    if (readySent) {
      return;
    }
    readySent = true;
    var m = message('ready');
    m.document = documentId;
    send(m);
  }

  var api = record();
  api.event = objectFreeze(event);
  api.onState = objectFreeze(onState);
  api.resize = objectFreeze(resize);
  // R-UI-3, R-UI-6: the host's state entry point, inside LineUpSurface and not enumerable; it
  // does nothing without this view's key.
  objectDefineProperty(api, '__deliverState', constant(objectFreeze(deliverJson)));
  objectFreeze(api);

  objectDefineProperty(win, 'LineUpSurface', constant(api));

  // R-UI-5: a page never closes its Surface; each window.close() is reported so the host can
  // count the attempts (Stats::close_attempts).
  var nativeClose = typeof win.close === 'function' ? win.close : null;
  function close() {
    send(message('close_attempt'));
    // The engine's own close request still reaches the host, which refuses it (WebKit); an
    // engine that asks no one before closing (Servo) never gets it.
    if (nativeClose !== null && !consoleChannel) {
      reflectApply(nativeClose, win, []);
    }
  }
  objectDefineProperty(win, 'close', constant(objectFreeze(close)));

  // `ready` goes out once the guest script has run: DOMContentLoaded follows every parser-inserted
  // script. The listener sits on window in the capture phase and is registered before any guest
  // listener, so no guest listener runs before it or can stop it.
  if (doc && doc.readyState === 'loading' && addEventListenerRef !== null) {
    addEventListenerRef('DOMContentLoaded', sendReady, true);
  } else if (setTimeoutRef !== null) {
    setTimeoutRef(sendReady, 0);
  } else {
    sendReady();
  }
})();
