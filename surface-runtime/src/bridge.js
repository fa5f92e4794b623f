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
//   {"namespace":"lineup.surface.v1","type":"ready"}          (once, after the guest script ran)
// Downstream: the host evaluates window.__lineupSurfaceDeliverState(<key>, <state as JSON text>)
// (R-UI-3). The key is drawn at random for each webview and exists only in this script's closure
// and in the host, so page code cannot feed itself states the agent never sent (R-UI-6); the text
// is parsed with the JSON.parse captured here, so every key (__proto__ included) is an own data
// property, in the agent's order.
(function () {
  'use strict';

  var win = window;
  var NAMESPACE = 'lineup.surface.v1';
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

  var readySent = false;
  function sendReady() {
    if (readySent) {
      return;
    }
    readySent = true;
    send(message('ready'));
  }

  var api = record();
  api.event = objectFreeze(event);
  api.onState = objectFreeze(onState);
  api.resize = objectFreeze(resize);
  objectFreeze(api);

  objectDefineProperty(win, 'LineUpSurface', constant(api));
  objectDefineProperty(win, '__lineupSurfaceDeliverState', constant(objectFreeze(deliverJson)));

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
