// One instance of the standard components' board (host-written, one script for every component
// id): its box, a <section> whose element ids all start with its slot. Agent strings arrive as
// JSON data, already validated and cleaned by the host, and reach the page only through
// createElement and textContent (R-STD-9, R-STD-10); Markdown arrives as the host's closed node
// tree, never as markup. Agent values never become a class, a style or an attribute other than
// `value`, `min`, `max`, `step`, `placeholder` and the `aria-value*` numbers: the look is the
// host's (R-STD-9). The board (components.js) adds, updates and removes the boxes.
const lineupInstance = (function () {
  'use strict';
  // One instance: its section, built from `d` (kind, props, state, markdown, locked,
  // draft), its messages sent through `post` with its slot.
  return function (slot, d, post, words) {
    // The host's own words, in the host context's language (R-STD-9).
    var w = function (key, fallback) {
      return typeof words[key] === 'string' ? words[key] : fallback;
    };
    var section = document.createElement('section');
    section.id = slot;
    // The kind is the host's enum (one of the catalog's ids), never agent text.
    section.className = 'instance kind-' + d.kind;
    // Each box is a region named by the host (its component's id), so that a screen reader
    // tells the instances of one view apart (R-STD-12).
    section.setAttribute('role', 'region');
    section.setAttribute('aria-label', d.kind + w('question_marker', ' — LineUp question'));
    var main = document.createElement('div');
    main.className = 'content';
    var actions = document.createElement('div');
    actions.className = 'actions';
    section.appendChild(main);
    section.appendChild(actions);
    var send = function (message) { message.slot = slot; post(message); };
    var props = d.props || {};
    var locked = !!d.locked;
    var controls = [];
    var nextId = 0;
    // What takes the focus once the box is in the document.
    var initialFocus = null;
    // The box's own announcements to a screen reader (R-STD-12): a polite live region the
    // box writes at most once per 2 s, the last change waiting for its turn; none at all with
    // `announce: false`, which turns them down, never up. The rest of the box is not live.
    var announcer = document.createElement('div');
    announcer.className = 'announcer';
    announcer.setAttribute('aria-live', 'polite');
    announcer.dataset.announced = '0';
    var quiet = props.announce === false;
    var announcedAt = 0;
    var waiting = null;
    var announceTimer = null;
    var flushAnnounce = function () {
      announceTimer = null;
      if (waiting === null) { return; }
      announcer.textContent = waiting;
      waiting = null;
      announcedAt = Date.now();
      announcer.dataset.announced = String(Number(announcer.dataset.announced) + 1);
    };
    var announce = function (text) {
      if (quiet || !text) { return; }
      waiting = text;
      var wait = announcedAt + 2000 - Date.now();
      if (wait <= 0) {
        flushAnnounce();
      } else if (announceTimer === null) {
        announceTimer = setTimeout(flushAnnounce, wait);
      }
    };

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
    var uid = function (prefix) { nextId += 1; return slot + '-' + prefix + '-' + nextId; };
    var sid = function (name) { return slot + '-' + name; };
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
        // A link is a host control: its text, then the host it leads to in punycode. Using it
        // asks the host, which opens nothing without a real input event and its link confirm
        // (R-STD-11). The URL goes back as the kernel gave it; the host follows only a link of
        // its own tree. Under the kiosk's policy the tree has no link node at all.
        case 'link': {
          var a = kids('button', n.children);
          a.type = 'button';
          a.id = uid('link');
          a.className = 'link';
          a.setAttribute('role', 'link');
          a.appendChild(el('span', ' (' + n.link.host + ')', 'link-host'));
          var url = n.link.url;
          a.addEventListener('click', function () { send({ type: 'link', url: url }); });
          return a;
        }
        case 'image': return el('span', '\uD83D\uDDBC ' + n.alt, 'image');
        default: return document.createTextNode('');
      }
    };

    var markdown = function (tree) {
      var box = el('div', null, 'markdown');
      if (tree) {
        tree.blocks.forEach(function (b) { box.appendChild(node(b)); });
        if (tree.truncated) { box.appendChild(el('p', w('shortened', 'Shortened by the host.'), 'truncated')); }
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

    // Severity and status show as an icon and a word, never colour alone (R-STD-12); the words
    // and the class names are the host's, picked by the agent's enum.
    var SEVERITY = {
      info: ['\u2139', w('info', 'Info')], success: ['\u2714', w('success', 'Success')],
      warning: ['\u26A0', w('warning', 'Warning')], error: ['\u2716', w('error', 'Error')]
    };
    var STATUS = {
      pending: ['\u25CB', w('pending', 'Pending')],
      in_progress: ['\u25D4', w('in_progress', 'In progress')],
      complete: ['\u2714', w('complete', 'Complete')], error: ['\u2716', w('error', 'Error')],
      cancelled: ['\u2298', w('cancelled', 'Cancelled')]
    };
    var badge = function (table, key) {
      var entry = table[key] || table[Object.keys(table)[0]];
      var b = el('span', null, 'badge tone-' + (table[key] ? key : Object.keys(table)[0]));
      var icon = el('span', entry[0], 'icon');
      icon.setAttribute('aria-hidden', 'true');
      b.appendChild(icon);
      b.appendChild(el('span', entry[1], 'word'));
      return b;
    };

    // The error line of a question: shown with it, announced (R-STD-7 rounds).
    var errorLine = function (text, id) {
      var p = el('p', null, 'error');
      p.id = id;
      p.setAttribute('role', 'alert');
      p.appendChild(el('span', '\u2716 ' + w('error', 'Error') + ': ', 'error-word'));
      p.appendChild(el('span', text));
      return p;
    };

    // --- fields (input, choice, toggle), shared by input, choice and form -------------------
    var INPUT_TYPES = {
      text: 'text', number: 'number', email: 'email', url: 'url', date: 'date',
      time: 'time', datetime: 'datetime-local', secret: 'password'
    };

    // A labelled input control for field props `f`; returns {box, read, errorAt}.
    var inputField = function (f, labelId) {
      var box = el('div', null, 'field');
      var id = uid('input');
      var label = el('label', f.label, 'label');
      label.htmlFor = id;
      if (labelId) { label.id = labelId; }
      box.appendChild(label);
      var kind = f.type || 'text';
      var control;
      if (kind === 'multiline') {
        control = document.createElement('textarea');
        control.rows = 4;
      } else {
        control = document.createElement('input');
        control.type = INPUT_TYPES[kind] || 'text';
      }
      control.id = id;
      control.required = f.required === true;
      if (kind === 'number') {
        if (typeof f.min === 'number') { control.min = String(f.min); }
        if (typeof f.max === 'number') { control.max = String(f.max); }
        control.step = typeof f.step === 'number' ? String(f.step) : (f.integer ? '1' : 'any');
      } else if (INPUT_TYPES[kind] === 'text' || kind === 'multiline' || kind === 'secret'
          || kind === 'email' || kind === 'url') {
        control.maxLength = typeof f.max_length === 'number' ? f.max_length : 1000;
        if (typeof f.min_length === 'number') { control.minLength = f.min_length; }
      }
      if (kind === 'secret') { control.autocomplete = 'off'; }
      if (typeof f.placeholder === 'string') { control.placeholder = f.placeholder; }
      if (f['default'] !== undefined && f['default'] !== null && kind !== 'secret') {
        control.value = String(f['default']);
      }
      control.dir = 'auto';
      var described = [];
      if (f.description) {
        var d = el('p', f.description, 'description');
        d.id = uid('description');
        described.push(d.id);
        box.appendChild(d);
      }
      box.appendChild(control);
      controls.push(control);
      var errId = uid('error');
      control.setAttribute('aria-describedby', described.concat([errId]).join(' '));
      return {
        box: box,
        control: control,
        errorId: errId,
        secret: kind === 'secret',
        read: function () {
          if (kind === 'number') {
            return control.value === '' ? null : Number(control.value);
          }
          if (control.value === '' && f.required !== true) { return null; }
          return control.value;
        },
        write: function (v) {
          if (v !== null && v !== undefined && kind !== 'secret') { control.value = String(v); }
        }
      };
    };

    // A group of radio buttons or checkboxes for choice props `f`.
    var choiceField = function (f, legendId) {
      var set = el('fieldset', null, 'field');
      var legend = el('legend', f.label);
      if (legendId) { legend.id = legendId; }
      set.appendChild(legend);
      if (f.description) { set.appendChild(el('p', f.description, 'description')); }
      var multiple = f.multiple === true;
      var defaults = [].concat(f['default'] === undefined ? [] : f['default']);
      var group = uid('choice');
      var boxes = [];
      (f.options || []).forEach(function (option) {
        var label = el('label', null, 'option');
        var box = document.createElement('input');
        box.type = multiple ? 'checkbox' : 'radio';
        box.name = group;
        box.value = option.value;
        box.id = uid('option');
        box.checked = defaults.indexOf(option.value) >= 0;
        boxes.push(box);
        controls.push(box);
        label.appendChild(box);
        label.appendChild(el('span', ' ' + option.label));
        set.appendChild(label);
        // The option's description describes it; it is not part of its name (R-STD-12).
        if (option.description) {
          var d = el('span', option.description, 'option-description');
          d.id = uid('description');
          box.setAttribute('aria-describedby', d.id);
          set.appendChild(d);
        }
      });
      var errId = uid('error');
      set.setAttribute('aria-describedby', errId);
      return {
        box: set,
        boxes: boxes,
        errorId: errId,
        read: function () {
          var picked = boxes.filter(function (b) { return b.checked; })
            .map(function (b) { return b.value; });
          if (multiple) { return picked; }
          return picked.length === 1 ? picked[0] : null;
        },
        write: function (v) {
          var values = [].concat(v === null || v === undefined ? [] : v);
          boxes.forEach(function (b) { b.checked = values.indexOf(b.value) >= 0; });
        }
      };
    };

    var toggleField = function (f) {
      var box = el('div', null, 'field');
      var label = el('label', null, 'option');
      var control = document.createElement('input');
      control.type = 'checkbox';
      control.id = uid('toggle');
      control.setAttribute('role', 'switch');
      control.checked = f['default'] === true;
      controls.push(control);
      label.appendChild(control);
      label.appendChild(el('span', ' ' + f.label));
      box.appendChild(label);
      if (f.description) { box.appendChild(el('p', f.description, 'description')); }
      var errId = uid('error');
      control.setAttribute('aria-describedby', errId);
      return {
        box: box,
        control: control,
        errorId: errId,
        read: function () { return control.checked; },
        write: function (v) { control.checked = v === true; }
      };
    };

    // Shows `text` (or nothing) as the error of field `field`.
    var fieldError = function (field, text) {
      var old = document.getElementById(field.errorId);
      if (old) { old.remove(); }
      if (typeof text === 'string' && text !== '') {
        field.box.appendChild(errorLine(text, field.errorId));
      }
    };

    // Whether the page's own checks pass; shows the browser's message on the first that fails.
    var valid = function () {
      for (var i = 0; i < controls.length; i += 1) {
        var c = controls[i];
        if (typeof c.checkValidity === 'function' && !c.checkValidity()) {
          c.reportValidity();
          return false;
        }
      }
      return true;
    };

    var footer = function (submit) {
      actions.appendChild(button(sid('cancel'), props.cancel_label || w('cancel', 'Cancel'), function () {
        send({ type: 'cancel' });
      }));
      if (submit) {
        actions.appendChild(button(sid('submit'), props.submit_label || w('submit', 'Submit'), submit));
      }
    };

    var heading = function (text) {
      var h = el('h1', text);
      h.id = sid('title');
      main.appendChild(h);
      return h;
    };

    // --- the components ----------------------------------------------------------------------
    // Each has `render` (once, from the props) and `show` (the state, again on every patch).
    var fields = [];
    var stateBox = null;
    var replaceState = function () {
      if (stateBox) { stateBox.remove(); }
      stateBox = el('div', null, 'state');
      main.appendChild(stateBox);
      return stateBox;
    };

    var kinds = {
      markdown: {
        show: function (state, tree) {
          replaceState().appendChild(markdown(tree));
        }
      },
      text: {
        show: function (state) {
          var variant = { caption: 'caption', heading: 'heading' }[state.variant] || 'body';
          var p = el(variant === 'heading' ? 'h1' : 'p', state.text, 'text-' + variant);
          replaceState().appendChild(p);
        }
      },
      status: {
        render: function () {
          main.setAttribute('role', 'status');
          // Its changes are announced through the box's announcer, throttled.
          main.setAttribute('aria-live', 'off');
        },
        show: function (state) {
          var said = (STATUS[state.status] || STATUS.pending)[1] + ': ' + (state.title || '');
          if (said !== kinds.status.said) {
            kinds.status.said = said;
            announce(said);
          }
          var box = replaceState();
          var line = el('div', null, 'status-line');
          line.appendChild(badge(STATUS, state.status));
          var title = el('span', state.title, 'status-title');
          title.id = sid('title');
          line.appendChild(title);
          box.appendChild(line);
          main.setAttribute('aria-labelledby', sid('title'));
          if (state.detail) { box.appendChild(el('p', state.detail, 'description')); }
          if (Array.isArray(state.steps) && state.steps.length > 0) {
            var list = el('ol', null, 'steps');
            state.steps.forEach(function (step) {
              var li = el('li');
              li.appendChild(badge(STATUS, step.status));
              li.appendChild(el('span', ' ' + step.title));
              list.appendChild(li);
            });
            box.appendChild(list);
          }
        }
      },
      progress: {
        render: function () {
          var label = el('label', props.label, 'label');
          label.id = sid('title');
          main.appendChild(label);
          if (props.description) { main.appendChild(el('p', props.description, 'description')); }
          var bar = document.createElement('progress');
          bar.id = sid('bar');
          bar.setAttribute('aria-labelledby', sid('title'));
          bar.max = typeof props.max === 'number' ? props.max : 100;
          main.appendChild(bar);
          kinds.progress.bar = bar;
          actions.appendChild(button(sid('cancel'), props.cancel_label || w('cancel', 'Cancel'), function () {
            send({ type: 'cancel' });
          }));
        },
        show: function (state) {
          var bar = kinds.progress.bar;
          var box = replaceState();
          if (typeof state.value === 'number') {
            bar.value = Math.min(state.value, bar.max);
            bar.setAttribute('aria-valuenow', String(bar.value));
            // Announced at each quarter reached, not at every value (R-STD-12).
            var quarter = Math.floor((bar.value / bar.max) * 4);
            if (quarter !== kinds.progress.quarter) {
              kinds.progress.quarter = quarter;
              announce(props.label + ': ' + Math.round((bar.value / bar.max) * 100) + '%');
            }
          } else {
            bar.removeAttribute('value');
            bar.removeAttribute('aria-valuenow');
          }
          bar.setAttribute('aria-valuemin', '0');
          bar.setAttribute('aria-valuemax', String(bar.max));
          if (typeof state.text === 'string' && state.text !== '') {
            bar.setAttribute('aria-valuetext', state.text);
            box.appendChild(el('p', state.text, 'description'));
          } else {
            bar.removeAttribute('aria-valuetext');
          }
        }
      },
      alert: {
        render: function () {
          if (props.dismissible === true) {
            actions.appendChild(button(sid('dismiss'), w('dismiss', 'Dismiss'), function () {
              send({ type: 'dismiss' });
            }));
          }
        },
        show: function (state, tree) {
          var severity = SEVERITY[state.severity] ? state.severity : 'info';
          // Announced as an alert only when it is an error or a warning, only at open or when
          // its severity changes (R-STD-12): a patch with the same severity refills the same
          // box, whose own changes are not live; `announce: false` makes it a plain note.
          var box;
          if (stateBox && kinds.alert.severity === severity) {
            box = stateBox;
            while (box.firstChild) { box.removeChild(box.firstChild); }
          } else {
            box = replaceState();
            var loud = severity === 'error' || severity === 'warning';
            box.setAttribute('role', quiet ? 'note' : (loud ? 'alert' : 'status'));
            box.setAttribute('aria-live', 'off');
          }
          kinds.alert.severity = severity;
          box.className = 'state alert tone-' + severity;
          var line = el('div', null, 'status-line');
          line.appendChild(badge(SEVERITY, severity));
          var title = el('span', state.title, 'status-title');
          title.id = sid('title');
          line.appendChild(title);
          box.appendChild(line);
          box.setAttribute('aria-labelledby', sid('title'));
          if (tree) { box.appendChild(markdown(tree)); }
        }
      },
      confirm: {
        render: function () {
          heading(props.title);
          if (props.description) { main.appendChild(el('p', props.description, 'description')); }
          if (d.markdown) { main.appendChild(markdown(d.markdown)); }
          var danger = props.tone === 'danger';
          var deny = button(sid('deny'), props.deny_label || w('cancel', 'Cancel'), function () {
            send({ type: 'submit', answer: false });
          });
          var confirm = button(sid('confirm'), props.confirm_label || w('confirm', 'Confirm'), function () {
            send({ type: 'submit', answer: true });
          });
          confirm.className = danger ? 'danger' : 'primary';
          confirm.setAttribute('aria-describedby', sid('title'));
          actions.appendChild(deny);
          actions.appendChild(confirm);
          // No autofocus on the positive action; a danger confirm focuses deny (R-STD-12).
          if (danger) { initialFocus = deny; }
        }
      },
      choice: {
        render: function () {
          var field = choiceField(props, sid('title'));
          fields.push(field);
          main.appendChild(field.box);
          var immediate = props.immediate === true && props.multiple !== true;
          if (immediate) {
            field.boxes.forEach(function (box) {
              box.addEventListener('change', function () {
                if (!locked && box.checked) { send({ type: 'submit', answer: box.value }); }
              });
            });
          }
          footer(immediate ? null : function () {
            var answer = field.read();
            if (answer !== null) { send({ type: 'submit', answer: answer }); }
          });
        },
        show: function (state) { fieldError(fields[0], state.error); }
      },
      input: {
        render: function () {
          var field = inputField(props, sid('title'));
          fields.push(field);
          main.appendChild(field.box);
          footer(function () {
            if (valid()) { send({ type: 'submit', answer: field.read() }); }
          });
        },
        show: function (state) { fieldError(fields[0], state.error); }
      },
      form: {
        render: function () {
          if (props.title) { heading(props.title); }
          if (props.label) { main.setAttribute('aria-label', props.label); }
          if (d.markdown) { main.appendChild(markdown(d.markdown)); }
          (props.fields || []).forEach(function (f) {
            var field = f.kind === 'choice' ? choiceField(f) :
              (f.kind === 'toggle' ? toggleField(f) : inputField(f));
            field.name = f.name;
            fields.push(field);
            main.appendChild(field.box);
          });
          footer(function () {
            if (!valid()) { return; }
            var answer = {};
            fields.forEach(function (field) { answer[field.name] = field.read(); });
            send({ type: 'submit', answer: answer });
          });
        },
        show: function (state) {
          var errors = state.errors || {};
          fields.forEach(function (field) { fieldError(field, errors[field.name]); });
        }
      }
    };

    // A locked control loses the focus; a reopened round gives it back to the control that
    // had it, so the user types on where they were (R-STD-7).
    var hadFocus = null;
    var lock = function () {
      locked = true;
      hadFocus = section.contains(document.activeElement) ? document.activeElement : null;
      controls.forEach(function (c) { c.disabled = true; });
    };
    var unlock = function () {
      locked = false;
      controls.forEach(function (c) { c.disabled = false; });
      var active = document.activeElement;
      if (hadFocus && (!active || active === document.body || active === section)) {
        hadFocus.focus({ preventScroll: true });
      }
      hadFocus = null;
    };

    var kind = kinds[d.kind] || {};
    if (kind.render) { kind.render(); }
    if (kind.show) { kind.show(d.state || {}, d.markdown); }

    // The user's unsent draft (R-STD-15): put back when the host restores the instance, and
    // reported as the user types, so that it survives a restart; a secret field's never is.
    var readDraft = function () {
      if (d.kind === 'form') {
        var draft = {};
        fields.forEach(function (f) { if (!f.secret) { draft[f.name] = f.read(); } });
        return draft;
      }
      if (fields.length === 1 && !fields[0].secret) { return fields[0].read(); }
      return undefined;
    };
    var writeDraft = function (draft) {
      if (draft === undefined || draft === null) { return; }
      if (d.kind === 'form' && typeof draft === 'object' && !Array.isArray(draft)) {
        fields.forEach(function (f) {
          if (Object.prototype.hasOwnProperty.call(draft, f.name)) { f.write(draft[f.name]); }
        });
      } else if (d.kind !== 'form' && fields.length === 1) {
        fields[0].write(draft);
      }
    };
    writeDraft(d.draft);
    var draftTimer = null;
    var reportDraft = function () {
      if (locked || fields.length === 0) { return; }
      clearTimeout(draftTimer);
      draftTimer = setTimeout(function () {
        var draft = readDraft();
        if (draft !== undefined && !locked) { send({ type: 'draft', draft: draft }); }
      }, 400);
    };
    main.addEventListener('input', reportDraft);
    main.addEventListener('change', reportDraft);
    if (locked) { lock(); }

    section.appendChild(announcer);

    // What the board does with this instance: a new state (reopening a round when asked), the
    // lock after an answer, and Enter's submit in a one-line field.
    return {
      section: section,
      update: function (next) {
        if (kind.show) { kind.show(next.state || {}, next.markdown); }
        if (next.reopened) { unlock(); }
      },
      lock: lock,
      // A new question takes the keyboard: its danger deny, else its box itself, from which Tab
      // reaches its first control (no autofocus on a positive action, R-STD-12).
      focusFirst: function () {
        if (initialFocus) {
          initialFocus.focus();
        } else if (controls.length > 0) {
          section.tabIndex = -1;
          section.focus({ preventScroll: true });
        }
      },
      submitsOnEnter: d.kind === 'input' || d.kind === 'form',
      isLocked: function () { return locked; }
    };
  };
})();
