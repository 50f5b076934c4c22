// app.js: the dashboard's shell. It signs in, draws the navigation, and
// routes #/NAME/ARGS to the view module views/NAME.js, calling its
// render(root, ctx) (the contract is in server/dashboard/doc.go and
// assets/README.md).
import { h, clear } from './lib/dom.js';
import { md } from './lib/md.js';
import { followDeltas } from './lib/deltas.js';

// NAV lists the views in the order the navigation shows them; admin views
// are hidden from an agent key.
const NAV = [
  { name: 'chat', label: 'Chat', key: 'c' },
  { name: 'memory', label: 'Memory', key: 'm' },
  { name: 'saw', label: 'What the model saw', key: 's' },
  { name: 'wiring', label: 'Live wiring', key: 'w' },
  { name: 'plugins', label: 'Plugins', key: 'p', admin: true },
];

let auth = null; // {key, role, csrf, open}
const main = document.getElementById('main');
const nav = document.getElementById('nav');
const who = document.getElementById('who');
const signout = document.getElementById('signout');
let leaving = [];
let routeToken = 0;
let stopDeltas = null; // the badge's stream, while signed in

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
  }
}

function toError(status, data) {
  let code = '', msg = `the server answered ${status}`;
  if (data && typeof data === 'object') {
    const e = data.error;
    if (e && typeof e === 'object') { code = e.code || ''; msg = e.message || msg; }
    else if (typeof e === 'string') msg = e;
  } else if (typeof data === 'string' && data.trim()) msg = data.trim();
  return new ApiError(status, code, msg);
}

async function request(path, opts = {}) {
  const headers = new Headers(opts.headers || {});
  let body = opts.body;
  if (body != null && !(body instanceof FormData) && !(body instanceof Blob) && typeof body !== 'string') {
    body = JSON.stringify(body);
    headers.set('Content-Type', 'application/json');
  }
  const method = (opts.method || (body != null ? 'POST' : 'GET')).toUpperCase();
  if (method !== 'GET' && method !== 'HEAD' && auth?.csrf) headers.set('X-CSRF-Token', auth.csrf);
  const res = await fetch(path, { method, headers, body, credentials: 'same-origin', cache: 'no-store', signal: opts.signal });
  if (res.status === 401 && auth && !opts.quiet) {
    auth = null;
    showSignIn('Your sign-in has ended; sign in again.');
  }
  return res;
}

async function readBody(res) {
  const text = await res.text();
  if (!text) return null;
  try { return JSON.parse(text); } catch { return text; }
}

// api is ctx.api: the JSON answer, or an ApiError with the server's message.
export async function api(path, opts = {}) {
  const res = await request(path, opts);
  const data = await readBody(res);
  if (!res.ok) throw toError(res.status, data);
  return data;
}

// sse is ctx.sse: server-sent events read over fetch.
export function sse(path, onEvent, opts = {}) {
  let closed = false, ctrl = null, lastId = opts.lastEventId || '';
  const method = (opts.method || (opts.body != null ? 'POST' : 'GET')).toUpperCase();
  const reconnect = opts.reconnect ?? method === 'GET';
  const dispatch = (block) => {
    let event = 'message', data = [], id = null;
    for (const line of block.split('\n')) {
      if (!line || line.startsWith(':')) continue;
      const c = line.indexOf(':');
      const field = c < 0 ? line : line.slice(0, c);
      const value = c < 0 ? '' : line.slice(c + 1).replace(/^ /, '');
      if (field === 'event') event = value;
      else if (field === 'data') data.push(value);
      else if (field === 'id') id = value;
    }
    if (id != null) lastId = id;
    if (!data.length && event === 'message') return;
    let d = data.join('\n');
    try { d = JSON.parse(d); } catch { /* text */ }
    onEvent({ event, data: d, id });
  };
  (async () => {
    let wait = 500;
    while (!closed) {
      ctrl = new AbortController();
      try {
        const headers = { ...(opts.headers || {}), Accept: 'text/event-stream' };
        if (lastId) headers['Last-Event-ID'] = lastId;
        const res = await request(path, { ...opts, method, headers, signal: ctrl.signal });
        if (!res.ok) throw toError(res.status, await readBody(res));
        wait = 500;
        opts.onOpen?.();
        const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
        let buf = '';
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buf += value.replace(/\r\n?/g, '\n');
          let i;
          while ((i = buf.indexOf('\n\n')) >= 0) {
            const block = buf.slice(0, i);
            buf = buf.slice(i + 2);
            dispatch(block);
          }
        }
        if (buf.trim()) dispatch(buf);
      } catch (e) {
        if (closed || e.name === 'AbortError') return;
        opts.onError?.(e);
        if (!reconnect || (e instanceof ApiError && e.status < 500 && e.status !== 429)) return;
      }
      if (!reconnect || closed) { if (!closed) opts.onEnd?.(); return; }
      await new Promise((r) => setTimeout(r, wait));
      wait = Math.min(wait * 2, 10000);
    }
  })();
  return { close() { closed = true; ctrl?.abort(); } };
}

export function toast(text, kind = '') {
  const box = document.getElementById('toasts');
  const t = h('div', { class: 'toast ' + kind, role: kind === 'error' ? 'alert' : null }, String(text));
  box.appendChild(t);
  setTimeout(() => t.remove(), kind === 'error' ? 8000 : 4000);
}

const cssLoaded = new Set();
function css(path) {
  if (cssLoaded.has(path)) return;
  cssLoaded.add(path);
  document.head.appendChild(h('link', { rel: 'stylesheet', href: '/assets/' + path.replace(/^\/?(assets\/)?/, '') }));
}

function drawNav(current) {
  clear(nav);
  if (!auth) return;
  for (const v of NAV) {
    if (v.admin && auth.role !== 'admin') continue;
    nav.appendChild(h('a', { href: '#/' + v.name, 'aria-current': v.name === current ? 'page' : null, 'aria-keyshortcuts': 'Alt+' + v.key.toUpperCase(), title: `${v.label} (Alt+${v.key.toUpperCase()})` }, v.label));
  }
  who.textContent = auth.open ? 'local (no key needed)' : `${auth.key} · ${auth.role}`;
  signout.hidden = !!auth.open;
}

function startDeltas() {
  stopDeltas?.();
  stopDeltas = followDeltas({ sse }, document.getElementById('delta-badge'));
}
function endDeltas() {
  stopDeltas?.();
  stopDeltas = null;
  document.getElementById('delta-badge').hidden = true;
}

async function route() {
  const token = ++routeToken;
  for (const fn of leaving.splice(0)) { try { fn(); } catch (e) { console.error(e); } }
  if (!auth) return;
  const parts = location.hash.replace(/^#\/?/, '').split('/').filter(Boolean).map(decodeURIComponent);
  const name = parts[0] || 'chat';
  const entry = NAV.find((v) => v.name === name);
  drawNav(name);
  clear(main);
  const root = h('div', { class: 'view view-' + name });
  main.appendChild(root);
  if (!entry) {
    root.appendChild(h('h1', null, 'No such view'));
    root.appendChild(h('p', null, `There is no view “${name}”. `, h('a', { href: '#/chat' }, 'Open the chat')));
    return;
  }
  document.title = entry.label + ' · Exocortex';
  if (entry.admin && auth.role !== 'admin') {
    root.appendChild(h('h1', null, entry.label));
    root.appendChild(h('p', null, 'This view needs an admin key; you are signed in with an agent key.'));
    return;
  }
  const ctx = {
    api, sse, h, md, toast, css,
    args: parts.slice(1), role: auth.role, key: auth.key, admin: auth.role === 'admin',
    navigate: (hash) => { location.hash = hash; },
    onCleanup: (fn) => leaving.push(fn),
  };
  try {
    const mod = await import(`./views/${name}.js`);
    if (token !== routeToken) return;
    const done = await mod.render(root, ctx);
    if (typeof done === 'function') leaving.push(done);
  } catch (e) {
    if (token !== routeToken) return;
    console.error(e);
    root.appendChild(h('h1', null, entry.label));
    root.appendChild(h('p', { class: 'error', role: 'alert' }, `This view could not open: ${e.message}`));
  }
  if (!root.contains(document.activeElement)) main.focus({ preventScroll: true });
  // The first view drawn: the browser tests read this mark (docs/PERFORMANCE.md).
  if (!performance.getEntriesByName('dashboard-ready').length) performance.mark('dashboard-ready');
}

function showSignIn(message = '') {
  endDeltas();
  for (const fn of leaving.splice(0)) { try { fn(); } catch (e) { console.error(e); } }
  drawNav('');
  who.textContent = '';
  signout.hidden = true;
  clear(main);
  document.title = 'Sign in · Exocortex';
  const input = h('input', { id: 'apikey', name: 'key', type: 'password', autocomplete: 'current-password', required: true, 'aria-describedby': 'signin-help' });
  const err = h('p', { class: 'error', role: 'alert', id: 'signin-error' }, message);
  const form = h('form', { class: 'signin card', 'aria-labelledby': 'signin-title' },
    h('h1', { id: 'signin-title' }, 'Sign in'),
    h('label', { for: 'apikey' }, 'API key'),
    input,
    h('p', { id: 'signin-help', class: 'muted' }, 'serve.api_key (admin) or serve.agent_key (agent) from config.yaml, or EXOCORTEX_API_KEY.'),
    err,
    h('button', { type: 'submit', class: 'primary' }, 'Sign in'));
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    err.textContent = '';
    try {
      auth = await api('/api/v1/auth/login', { body: { key: input.value }, quiet: true });
      input.value = '';
      startDeltas();
      if (!location.hash) location.hash = '#/chat';
      route();
    } catch (e) {
      err.textContent = e.message;
      input.select();
    }
  });
  main.appendChild(form);
  input.focus();
}

// The theme: the system's unless the toggle chose; remembered in localStorage.
const THEMES = ['system', 'light', 'dark'];
function applyTheme(t) {
  if (t === 'system') delete document.documentElement.dataset.theme;
  else document.documentElement.dataset.theme = t;
  const b = document.getElementById('theme');
  b.setAttribute('aria-label', t === 'system' ? 'Colour theme: follows the system' : `Colour theme: ${t}`);
  b.title = b.getAttribute('aria-label') + ' (click to change)';
}
function initTheme() {
  let t = 'system';
  try { t = localStorage.getItem('exocortex.theme') || 'system'; } catch { /* private mode */ }
  applyTheme(THEMES.includes(t) ? t : 'system');
  document.getElementById('theme').addEventListener('click', () => {
    const cur = document.documentElement.dataset.theme || 'system';
    const next = THEMES[(THEMES.indexOf(cur) + 1) % THEMES.length];
    try { localStorage.setItem('exocortex.theme', next); } catch { /* private mode */ }
    applyTheme(next);
  });
}

async function boot() {
  initTheme();
  signout.addEventListener('click', async () => {
    try { await api('/api/v1/auth/logout', { method: 'POST', quiet: true }); } catch (e) { toast(e.message, 'error'); }
    auth = null;
    showSignIn('Signed out.');
  });
  window.addEventListener('hashchange', route);
  document.addEventListener('keydown', (e) => {
    if (!e.altKey || e.ctrlKey || e.metaKey || !auth) return;
    const v = NAV.find((n) => n.key === e.key.toLowerCase() && (!n.admin || auth.role === 'admin'));
    if (v) { e.preventDefault(); location.hash = '#/' + v.name; }
  });
  try {
    auth = await api('/api/v1/auth/session', { quiet: true });
  } catch (e) {
    auth = null;
    showSignIn(e.status === 401 ? '' : e.message);
    return;
  }
  startDeltas();
  route();
}

boot();
