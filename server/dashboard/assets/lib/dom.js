// dom.js: build DOM without HTML strings, so data is always text.
//
//   h('button', {class: 'primary', onclick: fn, disabled: true}, 'Send')
//
// attrs: "class", "on<event>" (a function), true/false for boolean
// attributes, null/undefined to leave one out, anything else as a string.
// children: strings (as text), nodes, arrays of either, null (skipped).
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  if (attrs) {
    for (const [k, v] of Object.entries(attrs)) {
      if (v == null || v === false) continue;
      if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
      else if (v === true) el.setAttribute(k, '');
      else el.setAttribute(k, String(v));
    }
  }
  append(el, children);
  return el;
}

export function append(el, children) {
  for (const c of children) {
    if (c == null || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else if (c instanceof Node) el.appendChild(c);
    else el.appendChild(document.createTextNode(String(c)));
  }
  return el;
}

export function clear(el) {
  while (el.firstChild) el.removeChild(el.firstChild);
  return el;
}

// when formats a time (an ISO string, a Date or seconds) briefly.
export function when(t) {
  if (t == null || t === '') return '';
  const d = typeof t === 'number' ? new Date(t * 1000) : new Date(t);
  if (isNaN(d)) return String(t);
  const now = new Date();
  return d.toDateString() === now.toDateString() ? d.toLocaleTimeString() : d.toLocaleString();
}
