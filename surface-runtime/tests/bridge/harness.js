// Runs the LineUpSurface bridge (read from stdin) in a fresh JavaScript realm with a fake window,
// then guest scripts that try to subvert it, and prints a transcript of what reached the host.
// The realm has its own built-ins, so what a guest does to them cannot touch this harness.
// Timers and microtasks are queued by hand, which keeps every run identical.
'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const vm = require('node:vm');

const bridge = fs.readFileSync(0, 'utf8');
// The delivery key the host put into this copy of the bridge (R-UI-6).
const KEY = process.argv[2];
assert.match(KEY, /^[0-9a-f]{32}$/);
const out = [];
const line = (text) => out.push(text);

// A fake page: a window with the given channels, a document in the given ready state, and queues
// for listeners, timers and microtasks.
function page({ webkit = true, ipc = true, console = false, readyState = 'loading' } = {}) {
  const listeners = [];
  const timers = [];
  const microtasks = [];
  const sandbox = {
    document: { readyState },
    addEventListener(type, listener, capture) {
      listeners.push({ type, listener, capture });
    },
    setTimeout(task) {
      timers.push(task);
      return timers.length;
    },
    queueMicrotask(task) {
      microtasks.push(task);
    },
    record(text) {
      line(`record ${text}`);
    },
  };
  if (webkit) {
    sandbox.webkit = {
      messageHandlers: {
        ipc: {
          postMessage(message) {
            assert.equal(typeof message, 'string');
            line(`webkit ${message}`);
          },
        },
      },
    };
  }
  if (ipc) {
    sandbox.ipc = {
      postMessage(message) {
        assert.equal(typeof message, 'string');
        line(`ipc ${message}`);
      },
    };
  }
  if (console) {
    // The engine's console, as Servo's: a '%s' format takes the next argument as it is.
    sandbox.console = {
      debug(format, ...args) {
        const text = format === '%s' && args.length === 1 ? String(args[0]) : [format, ...args].join(' ');
        const marker = '\u0001lineup.surface.v1\u0001';
        line(text.startsWith(marker) ? `console ${text.slice(marker.length)}` : `page console ${text}`);
      },
    };
    // Such an engine closes the window when asked, asking no one.
    sandbox.close = () => line('native close');
  }
  const context = vm.createContext(sandbox);
  vm.runInContext('globalThis.window = globalThis;', context);
  const run = (source, filename) => vm.runInContext(source, context, { filename });
  return {
    context,
    listeners,
    run,
    bridge() {
      run(bridge, 'bridge.js');
    },
    guest(source) {
      run(source, 'guest.js');
    },
    domContentLoaded() {
      for (const { type, listener } of listeners.slice()) {
        if (type === 'DOMContentLoaded') Reflect.apply(listener, undefined, [{ type }]);
      }
    },
    flushMicrotasks() {
      while (microtasks.length > 0) microtasks.shift()();
    },
    flushTimers() {
      while (timers.length > 0) {
        try {
          timers.shift()();
        } catch (error) {
          line(`reported ${error.message}`);
        }
      }
    },
    // What the host evaluates: the key, then the state's JSON text as a string (R-UI-3).
    deliver(stateJson) {
      run(
        `window.LineUpSurface.__deliverState(${JSON.stringify(KEY)}, ${JSON.stringify(stateJson)})`,
        'host.js',
      );
    },
  };
}

function assertLocked(p) {
  const d = p.run(`[
    Object.getOwnPropertyDescriptor(window, 'LineUpSurface'),
    Object.getOwnPropertyDescriptor(window.LineUpSurface, '__deliverState'),
  ]`);
  // R-UI-6: no second page global.
  assert.equal(p.run(`Object.getOwnPropertyDescriptor(window, '__lineupSurfaceDeliverState')`), undefined);
  for (const descriptor of d) {
    assert.equal(descriptor.writable, false);
    assert.equal(descriptor.configurable, false);
    assert.equal(descriptor.enumerable, false);
  }
  const api = d[0].value;
  assert.ok(Object.isFrozen(api));
  assert.equal(Object.getPrototypeOf(api), null);
  assert.deepEqual(Object.keys(api), ['event', 'onState', 'resize']);
  assert.deepEqual(Reflect.ownKeys(api), ['event', 'onState', 'resize', '__deliverState']);
  for (const key of ['event', 'onState', 'resize']) {
    assert.equal(typeof api[key], 'function');
    assert.ok(Object.isFrozen(api[key]));
  }
  assert.equal(typeof d[1].value, 'function');
  return { api, deliver: d[1].value };
}

const scenarios = {
  // R-UI-6 / R-SEC-4: a guest that replaces every primitive it can reach still cannot change what
  // the bridge posts, nor replace the bridge.
  'tampering guest'() {
    const p = page();
    p.bridge();
    const before = assertLocked(p);
    line(`listeners ${p.listeners.map((l) => `${l.type}/capture=${l.capture}`).join(',')}`);

    p.guest(`
      function attempt(f) { try { f(); } catch (ignored) {} }
      var fake = { event: function () {}, onState: function () {}, resize: function () {} };
      attempt(function () { LineUpSurface = fake; });
      attempt(function () { window.LineUpSurface = fake; });
      attempt(function () { delete window.LineUpSurface; });
      attempt(function () { Object.defineProperty(window, 'LineUpSurface', { value: fake }); });
      attempt(function () { LineUpSurface.event = fake.event; });
      attempt(function () { LineUpSurface.extra = 1; });
      attempt(function () { Object.setPrototypeOf(LineUpSurface, fake); });
      attempt(function () { LineUpSurface.event.call = fake.event; });
      attempt(function () { LineUpSurface.__deliverState = fake.event; });
      attempt(function () { delete LineUpSurface.__deliverState; });
      window.webkit.messageHandlers.ipc.postMessage = function () { record('forged post'); };
      window.ipc.postMessage = function () { record('forged post'); };
      JSON.stringify = function () { return '"forged"'; };
      Array.prototype.push = function () { throw new Error('push hooked'); };
      Object.defineProperty(Array.prototype, '0', {
        configurable: true,
        set: function () { throw new Error('index setter hooked'); },
      });
      Object.defineProperty(Object.prototype, 'namespace', {
        configurable: true,
        set: function () { throw new Error('namespace setter hooked'); },
      });
      Function.prototype.call = function () { throw new Error('call hooked'); };
      Function.prototype.apply = function () { throw new Error('apply hooked'); };
      Function.prototype.bind = function () { throw new Error('bind hooked'); };
      Reflect.apply = function () { throw new Error('Reflect.apply hooked'); };
      Object.freeze = function (o) { return o; };
      Object.create = function () { return {}; };
      Object.defineProperty = function () { throw new Error('defineProperty hooked'); };
      Number = function () { return 7; };
      Number.isFinite = function () { return true; };
      TypeError = Error;
      window.setTimeout = function () { record('forged timer'); };
      window.queueMicrotask = function () { record('forged microtask'); };

      LineUpSurface.event('refresh', { unit: 'c' });
      try { LineUpSurface.event(42, {}); } catch (e) { record('caught ' + e.name + ': ' + e.message); }
      try { LineUpSurface.onState('nope'); } catch (e) { record('caught ' + e.name); }
      try { LineUpSurface.resize('tall'); } catch (e) { record('caught ' + e.name); }
      LineUpSurface.resize('240');
    `);
    // Object.prototype.toJSON would also rewrite the guest's own data; the bridge's own records
    // (the envelope, the default data, ready) must not pass through it.
    p.guest(`
      Object.prototype.toJSON = function () { return 'forged'; };
      LineUpSurface.event('noData');
      var unsubscribeFirst = LineUpSurface.onState(function (s) { record('first ' + s.temperature); });
      LineUpSurface.onState(function () { throw new Error('subscriber threw'); });
      var once = LineUpSurface.onState(function (s) { record('once ' + s.temperature); once(); });
      LineUpSurface.onState(function (s) { record('last ' + s.temperature); });
    `);

    line('-- DOMContentLoaded, twice');
    p.domContentLoaded();
    p.domContentLoaded();
    p.flushTimers();

    line('-- state 21');
    p.deliver('{"temperature":21}');
    p.flushTimers();

    line('-- late subscriber');
    p.guest(`var unsubscribeLate = LineUpSurface.onState(function (s) { record('late ' + s.temperature); });`);
    line('(not yet)');
    p.flushMicrotasks();

    line('-- unsubscribe first and late, state 22');
    p.guest('unsubscribeFirst(); unsubscribeLate(); unsubscribeLate();');
    p.deliver('{"temperature":22}');
    p.flushTimers();
    p.flushMicrotasks();

    const after = assertLocked(p);
    assert.equal(after.api, before.api);
    assert.equal(after.deliver, before.deliver);
  },

  // With only wry's window.ipc, posts go there; a document past loading gets ready from a timer.
  'ipc channel, document already loaded'() {
    const p = page({ webkit: false, readyState: 'complete' });
    p.bridge();
    assertLocked(p);
    line(`listeners ${p.listeners.length}`);
    p.guest(`LineUpSurface.event('go', { n: 1 });`);
    p.flushTimers();
    p.flushTimers();
  },

  // Without a message handler the bridge posts on the console, behind the marker; the page's own
  // console output still reaches the engine's console, unmarked, and comes back as a diagnostic.
  'console channel'() {
    const p = page({ webkit: false, ipc: false, console: true, readyState: 'complete' });
    p.bridge();
    p.guest(`LineUpSurface.event('go', {p: '100%s'}); console.debug('mine %s', 'x'); window.close();`);
    p.flushMicrotasks();
    p.flushTimers();
  },

  // Without any channel the bridge is still defined and posting does nothing.
  'no channel'() {
    const p = page({ webkit: false, ipc: false });
    p.bridge();
    assertLocked(p);
    p.guest(`LineUpSurface.event('go'); LineUpSurface.resize(1); record('no throw');`);
    p.domContentLoaded();
  },

  // Evaluated twice, the bridge keeps its first copy and says ready once.
  'bridge evaluated twice'() {
    const p = page();
    p.bridge();
    const first = assertLocked(p);
    p.bridge();
    assert.equal(assertLocked(p).api, first.api);
    p.domContentLoaded();
    p.flushTimers();
  },

  // R-UI-6: page code can call the entry point, but without the key nothing is delivered; the
  // key is in no function's source text.
  'forged deliveries'() {
    const p = page();
    p.bridge();
    p.guest(`
      LineUpSurface.onState(function (s) { record('state ' + JSON.stringify(s)); });
      var deliver = LineUpSurface.__deliverState;
      var wrong = ${JSON.stringify('0'.repeat(32))};
      deliver(wrong, '{"forged":1}');
      deliver({ forged: 1 });
      deliver('{"forged":1}');
      deliver(undefined, '{"forged":1}');
      deliver(wrong.slice(1), '{"forged":1}');
      var sources = [deliver, LineUpSurface.event, LineUpSurface.onState, LineUpSurface.resize]
        .map(function (f) { return Function.prototype.toString.call(f); }).join('');
      record('key in sources ' + (sources.indexOf(${JSON.stringify(KEY)}) >= 0));
    `);
    p.flushMicrotasks();
    p.flushTimers();
    p.deliver('{"real":1}');
  },

  // R-UI-3: the state is JSON data: every key is an own data property, in the agent's order
  // (integer-like keys first, as JavaScript orders them), whatever the guest did to JSON.
  'state as sent'() {
    const p = page();
    p.bridge();
    p.guest(`
      JSON.parse = function () { return { forged: true }; };
      LineUpSurface.onState(function (s) {
        record('keys ' + Object.keys(s).join(','));
        record('own __proto__ ' + Object.prototype.hasOwnProperty.call(s, '__proto__'));
        record('prototype is Object.prototype ' + (Object.getPrototypeOf(s) === Object.prototype));
        record('inherited x ' + s.x);
        record('text ' + s.t.length + ' ' + s.t.codePointAt(0) + ' ' + s.t.charCodeAt(2));
      });
    `);
    p.deliver('{"b":1,"__proto__":{"x":1},"constructor":2,"prototype":3,"10":4,"a":5,"t":"\uD834\uDD1E\u2028"}');
  },

  // A subscriber added after a state arrived gets the newest state exactly once.
  'subscribe between two states'() {
    const p = page();
    p.bridge();
    p.deliver('{"n":1}');
    p.guest(`LineUpSurface.onState(function (s) { record('got ' + s.n); });`);
    p.deliver('{"n":2}');
    p.flushMicrotasks();
    p.guest(`LineUpSurface.onState(function (s) { record('next got ' + s.n); });`);
    p.flushMicrotasks();
  },
};

for (const [name, scenario] of Object.entries(scenarios)) {
  line(`== ${name}`);
  scenario();
}
process.stdout.write(`${out.join('\n')}\n`);
