// The standard components' own script (host-written, one document for every component id).
// Agent strings arrive as JSON data, already validated and cleaned by the host, and reach the
// page only through createElement and textContent (R-STD-9, R-STD-10); Markdown arrives as the
// host's closed node tree, never as markup. Answers go to the host's message handler as JSON,
// which takes them only with a real input event after the guard delay (R-STD-8).
(function () {
  'use strict';
  var post = function (message) {
    window.webkit.messageHandlers.lineupHost.postMessage(JSON.stringify(message));
  };
  var data = JSON.parse(document.getElementById('data').textContent);
  var main = document.getElementById('content');
  var actions = document.getElementById('actions');
  var locked = !!data.locked;
  var controls = [];
  var errorLine = null;

  // An element with agent text: text only, direction from its content (R-STD-12).
  var el = function (tag, text, className) {
    var e = document.createElement(tag);
    if (text !== undefined && text !== null) {
      e.textContent = String(text);
      e.dir = 'auto';
    }
    if (className) { e.className = className; }
    return e;
  };
  var HEADINGS = ['h2', 'h3', 'h4'];

  // One node of the closed Markdown tree; anything unknown renders as nothing.
  var node = function (n) {
    var kids = function (tag, children) {
      var e = el(tag);
      (children || []).forEach(function (c) { e.appendChild(node(c)); });
      return e;
    };
    switch (n.type) {
      case 'paragraph': return kids('p', n.children);
      case 'heading': return kids(HEADINGS[Math.min(Math.max(n.level | 0, 1), 3) - 1], n.children);
      case 'emphasis': return kids('em', n.children);
      case 'strong': return kids('strong', n.children);
      case 'strike': return kids('s', n.children);
      case 'code': return el('code', n.text);
      case 'code_block': {
        var pre = el('pre');
        pre.appendChild(el('code', n.text));
        return pre;
      }
      case 'list': {
        var list = el(n.start === null || n.start === undefined ? 'ul' : 'ol');
        if (list.localName === 'ol') { list.start = n.start; }
        (n.items || []).forEach(function (c) { list.appendChild(node(c)); });
        return list;
      }
      case 'item': {
        var li = el('li');
        if (n.task === true || n.task === false) {
          var box = document.createElement('input');
          box.type = 'checkbox';
          box.disabled = true;
          box.checked = n.task;
          li.appendChild(box);
        }
        (n.children || []).forEach(function (c) { li.appendChild(node(c)); });
        return li;
      }
      case 'blockquote': return kids('blockquote', n.children);
      case 'table': {
        var table = el('table');
        var row = function (cells, tag) {
          var tr = el('tr');
          cells.forEach(function (cell) { tr.appendChild(kids(tag, cell)); });
          return tr;
        };
        var head = el('thead');
        head.appendChild(row(n.header || [], 'th'));
        table.appendChild(head);
        var body = el('tbody');
        (n.rows || []).forEach(function (r) { body.appendChild(row(r, 'td')); });
        table.appendChild(body);
        return table;
      }
      case 'rule': return el('hr');
      case 'break': return el('br');
      case 'text': return document.createTextNode(String(n.text));
      // Links are inert text for now: their text, then the host they lead to.
      case 'link': {
        var span = kids('span', n.children);
        span.className = 'link';
        span.appendChild(el('span', ' (' + n.link.host + ')', 'link-host'));
        return span;
      }
      case 'image': return el('span', '\uD83D\uDDBC ' + n.alt, 'image');
      default: return document.createTextNode('');
    }
  };

  var markdown = function (tree) {
    var box = el('div', null, 'markdown');
    if (tree) {
      tree.blocks.forEach(function (b) { box.appendChild(node(b)); });
      if (tree.truncated) { box.appendChild(el('p', 'Shortened by the host.', 'truncated')); }
    }
    return box;
  };

  var button = function (id, label, onClick) {
    var b = el('button', label);
    b.type = 'button';
    b.id = id;
    b.addEventListener('click', function () { if (!locked) { onClick(); } });
    controls.push(b);
    return b;
  };

  var showError = function (state) {
    if (errorLine) { errorLine.remove(); errorLine = null; }
    if (state && typeof state.error === 'string' && state.error !== '') {
      errorLine = el('p', state.error, 'error');
      errorLine.setAttribute('role', 'alert');
      main.appendChild(errorLine);
    }
  };

  var lock = function () {
    locked = true;
    controls.forEach(function (c) { c.disabled = true; });
  };
  var unlock = function () {
    locked = false;
    controls.forEach(function (c) { c.disabled = false; });
  };

  var props = data.props || {};
  var render = {
    markdown: function () {
      main.appendChild(markdown(data.markdown));
    },
    confirm: function () {
      var title = el('h1', props.title);
      title.id = 'title';
      main.appendChild(title);
      if (props.description) { main.appendChild(el('p', props.description, 'description')); }
      if (data.markdown) { main.appendChild(markdown(data.markdown)); }
      var danger = props.tone === 'danger';
      var deny = button('deny', props.deny_label || 'Cancel', function () {
        post({ type: 'submit', answer: false });
      });
      var confirm = button('confirm', props.confirm_label || 'Confirm', function () {
        post({ type: 'submit', answer: true });
      });
      if (danger) { confirm.className = 'danger'; }
      confirm.setAttribute('aria-describedby', 'title');
      actions.appendChild(deny);
      actions.appendChild(confirm);
      // No autofocus on the positive action; a danger confirm focuses deny (R-STD-12).
      if (danger) { deny.focus(); }
    },
    choice: function () {
      var set = el('fieldset');
      var legend = el('legend', props.label);
      set.appendChild(legend);
      if (props.description) { set.appendChild(el('p', props.description, 'description')); }
      var multiple = props.multiple === true;
      var defaults = [].concat(props['default'] === undefined ? [] : props['default']);
      var boxes = [];
      var pick = function () {
        var picked = boxes.filter(function (b) { return b.checked; }).map(function (b) { return b.value; });
        if (multiple) { return picked; }
        return picked.length === 1 ? picked[0] : null;
      };
      (props.options || []).forEach(function (option, i) {
        var label = el('label', null, 'option');
        var box = document.createElement('input');
        box.type = multiple ? 'checkbox' : 'radio';
        box.name = 'choice';
        box.value = option.value;
        box.id = 'option-' + i;
        box.checked = defaults.indexOf(option.value) >= 0;
        box.addEventListener('change', function () {
          if (!multiple && props.immediate === true && !locked && box.checked) {
            post({ type: 'submit', answer: option.value });
          }
        });
        boxes.push(box);
        controls.push(box);
        label.appendChild(box);
        label.appendChild(el('span', ' ' + option.label));
        if (option.description) {
          label.appendChild(el('span', option.description, 'option-description'));
        }
        set.appendChild(label);
      });
      main.appendChild(set);
      actions.appendChild(button('cancel', props.cancel_label || 'Cancel', function () {
        post({ type: 'cancel' });
      }));
      if (!(props.immediate === true && !multiple)) {
        actions.appendChild(button('submit', props.submit_label || 'Submit', function () {
          var answer = pick();
          if (answer !== null) { post({ type: 'submit', answer: answer }); }
        }));
      }
    }
  };

  (render[data.kind] || function () {})();
  showError(data.state);
  if (locked) { lock(); }

  // The host's own calls: a new state (its data as a JSON string, parsed here), the lock
  // after an answer, and the unlock of a reopened round.
  window.lineupComponent = Object.freeze({
    update: function (json) {
      var next = JSON.parse(json);
      if (data.kind === 'markdown') {
        main.textContent = '';
        main.appendChild(markdown(next.markdown));
      }
      showError(next.state);
      if (next.reopened) { unlock(); }
      return 'ok';
    },
    lock: function () { lock(); return 'ok'; }
  });

  // Enter does nothing anywhere here; the host drops it as well (R-STD-8).
  document.addEventListener('keydown', function (e) {
    if (e.key === 'Enter') { e.preventDefault(); e.stopPropagation(); }
  }, true);
  post({ type: 'rendered' });
})();
