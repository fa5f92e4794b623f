// The standard components' board (host-written, one document for every component id): every
// instance of one placement target (a conversation's window, a kiosk region, an embedder's
// area) is a box in it, built by instance.js, named by a slot the host chose (§4 of
// standard-components.md). The host's calls come as JSON strings, parsed here, never as code.
// Answers go to the host's message handler as JSON naming their slot; the host takes one only
// with a real input event in that box after its guard delay (R-STD-8), which is why the page
// reports where each box is drawn and which holds the focus.
(function () {
  'use strict';
  var data = JSON.parse(document.getElementById('data').textContent);
  // In the web process the boards share, the host tells this view's messages apart by the
  // token in its data.
  var post = function (message) {
    if (data.token) { message.token = data.token; }
    window.webkit.messageHandlers.lineupHost.postMessage(JSON.stringify(message));
  };
  var board = document.getElementById('board');
  var instances = Object.create(null);
  // The board is as wide as the host draws its view, also before the view is first shown (when
  // the page has no width yet): its boxes are laid out once, at the width the user will see.
  var setWidth = function (width) {
    if (typeof width === 'number' && width > 0) { board.style.width = width + 'px'; }
  };
  setWidth(data.width);
  // The document's name: the host's own words, never agent text (R-STD-12, R-SEC-5).
  document.title = data.title;
  if (typeof data.lang === 'string') { document.documentElement.lang = data.lang; }
  if (data.contrast === 'more') { document.documentElement.dataset.lineupContrast = 'more'; }

  // The instance that holds `node`, with its slot.
  var owner = function (node) {
    var section = node && node.closest ? node.closest('section.instance') : null;
    return section ? { slot: section.id, instance: instances[section.id] } : null;
  };

  // Enter never activates a button here (R-STD-8); the host drops it before the page on
  // confirm and choice. In a one-line field of an input or a form, Enter's release submits.
  document.addEventListener('keydown', function (e) {
    if (e.key === 'Enter' && !(e.target && e.target.localName === 'textarea')) {
      e.preventDefault();
      e.stopPropagation();
    }
  }, true);
  document.addEventListener('keyup', function (e) {
    var t = e.target;
    if (e.key !== 'Enter' || !t || t.localName !== 'input') { return; }
    var o = owner(t);
    if (!o || !o.instance || o.instance.isLocked() || !o.instance.submitsOnEnter) { return; }
    var submit = document.getElementById(o.slot + '-submit');
    if (submit) { submit.click(); }
  }, true);
  // The box that holds the keyboard focus, for the host's key credits (R-STD-8 (a)).
  var focusedSlot = null;
  var reportFocus = function () {
    var o = owner(document.activeElement);
    var slot = o ? o.slot : null;
    if (slot !== focusedSlot) {
      focusedSlot = slot;
      post({ type: 'focus', focused: slot });
    }
  };
  document.addEventListener('focusin', reportFocus, true);
  document.addEventListener('focusout', function () { setTimeout(reportFocus, 0); }, true);

  // Where each box is drawn, in CSS pixels of the view, and the board's whole height: sent
  // whenever it changes (an instance added, removed or grown, a resize, a scroll), so that the
  // host credits an input event to the box under it in the layout it last drew and restarts
  // the guard of each box that moved (R-STD-8 (a), (b)).
  var lastLayout = '';
  var layoutQueued = false;
  var reportLayout = function () {
    layoutQueued = false;
    var boxes = [];
    Array.prototype.forEach.call(board.children, function (section) {
      var r = section.getBoundingClientRect();
      boxes.push([section.id, r.left, r.top, r.width, r.height]);
    });
    var height = Math.ceil(board.getBoundingClientRect().height);
    var layout = JSON.stringify([height, boxes]);
    if (layout !== lastLayout) {
      lastLayout = layout;
      post({ type: 'layout', height: height, boxes: boxes });
    }
  };
  var queueLayout = function () {
    if (!layoutQueued) {
      layoutQueued = true;
      requestAnimationFrame(reportLayout);
    }
  };
  var observer = new ResizeObserver(queueLayout);
  observer.observe(board);
  observer.observe(document.documentElement);
  window.addEventListener('scroll', queueLayout, true);
  window.addEventListener('resize', queueLayout);
  new MutationObserver(queueLayout).observe(board, { childList: true, subtree: true, attributes: true });

  // The host's own calls, each with its data as one JSON string parsed here, never as code.
  var parse = function (json) { return JSON.parse(json); };
  window.lineupBoard = Object.freeze({
    // Adds instance `slot` at the bottom and scrolls it into view; reports `rendered`.
    add: function (slot, json) {
      if (instances[slot]) { return 'exists'; }
      var instance = lineupInstance(slot, parse(json), post, data.words || {});
      instances[slot] = instance;
      // The new box takes the keyboard only when no control of another box holds it: what the
      // user is typing never goes astray into a question that just appeared.
      var active = document.activeElement;
      var typing = active && active !== document.body && board.contains(active)
        && active.localName !== 'section' && !active.disabled;
      board.appendChild(instance.section);
      if (!typing) { instance.focusFirst(); }
      instance.section.scrollIntoView({ block: 'nearest' });
      reportLayout();
      post({ type: 'rendered', slot: slot });
      return 'ok';
    },
    // The new layout goes to the host before any later input event's answer can, so that a
    // box this moved restarts its guard first (R-STD-8 (b)).
    update: function (slot, json) {
      if (instances[slot]) {
        instances[slot].update(parse(json));
        reportLayout();
      }
      return 'ok';
    },
    width: function (width) {
      setWidth(width);
      reportLayout();
      return 'ok';
    },
    lock: function (slot) {
      if (instances[slot]) { instances[slot].lock(); }
      return 'ok';
    },
    remove: function (slot) {
      var instance = instances[slot];
      if (instance) {
        delete instances[slot];
        instance.section.remove();
        reportLayout();
      }
      return 'ok';
    }
  });
  post({ type: 'ready' });
})();
