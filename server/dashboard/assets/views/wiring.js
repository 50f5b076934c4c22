// wiring.js: the live wiring (#/wiring/SESSION/TURN). The hooks of a turn
// (the last by default, followed as new turns end) as a timeline, one row
// per hook firing with a bar per extension call at its time; the state keys
// each extension read and wrote; the signals fired; failures and
// quarantines highlighted; each request's context budget as a stacked bar.
// Data: GET /api/v1/wiring/{session}?turn=N (server/inspect). It also
// exports the session and turn picker and the budget bar saw.js uses.

const FOLLOW_MS = 4000;

// PARTS are the budget's parts, in the bar's order.
const PARTS = [
  ['fixed', 'Fixed prompt'], ['blocks', 'Blocks'], ['recall', 'Recall'],
  ['history', 'History'], ['free', 'Free'], ['reserve', 'Reserved for the reply'],
];

export async function render(root, ctx) {
  const { h } = ctx;
  ctx.css('views/wiring.css');
  const [session = '', turn = ''] = ctx.args;
  const title = h('h1', { id: 'wiring-title' }, 'Live wiring');
  const body = h('div', { class: 'wiring-body', 'aria-busy': 'true' });
  const section = h('section', { class: 'wiring', 'aria-labelledby': 'wiring-title' }, title);
  root.append(section);
  const pick = await picker(ctx, 'wiring', session, turn);
  section.append(pick.form, body);
  if (!pick.session) {
    body.append(h('p', { class: 'muted' }, 'No session yet: send a message in the chat first.'));
    body.setAttribute('aria-busy', 'false');
    return;
  }
  const path = `/api/v1/wiring/${encodeURIComponent(pick.session)}` + (turn ? `?turn=${encodeURIComponent(turn)}` : '');
  let shown = '';
  const status = h('span', { class: 'muted', role: 'status' });
  async function load(quiet) {
    let data;
    try {
      data = await ctx.api(path);
    } catch (e) {
      if (!quiet) body.replaceChildren(h('p', { class: 'error', role: 'alert' }, e.message));
      body.setAttribute('aria-busy', 'false');
      return;
    }
    const mark = `${data.turn.n}/${data.turn.ended}/${data.hooks.length}`;
    if (mark === shown) return;
    shown = mark;
    pick.setTurns(data.turns, data.turn.n);
    body.replaceChildren(...view(h, data));
    body.setAttribute('aria-busy', 'false');
    if (quiet) status.textContent = `Turn ${data.turn.n} shown.`;
  }
  await load(false);
  if (turn) return; // a chosen turn does not change
  let timer = null;
  const follow = h('input', { type: 'checkbox', id: 'wiring-follow', checked: true });
  const setFollow = () => {
    clearInterval(timer);
    timer = follow.checked ? setInterval(() => load(true), FOLLOW_MS) : null;
  };
  follow.addEventListener('change', setFollow);
  pick.form.append(h('span', { class: 'row' }, follow, h('label', { for: 'wiring-follow' }, 'Follow new turns'), status));
  setFollow();
  return () => clearInterval(timer);
}

function view(h, d) {
  const out = [];
  const took = d.turn.took_us ? ` in ${dur(d.turn.took_us)}` : '';
  out.push(h('p', null, h('strong', null, `Turn ${d.turn.n}`), ': ', d.turn.user || '(no message)', ' ',
    h('span', { class: 'muted' }, `· ${d.hooks.length} hook firings${took}` + (d.turn.ended ? '' : ' · still running'))));
  if (d.failures.length || d.quarantined.length) out.push(problems(h, d));
  out.push(timeline(h, d));
  out.push(h('h2', { id: 'wiring-budgets' }, 'Context budget of each request'));
  out.push(d.budgets.length
    ? h('div', { class: 'budgets', 'aria-labelledby': 'wiring-budgets' }, d.budgets.map((b) => budgetBar(h, b)))
    : h('p', { class: 'muted' }, 'No request was sized in this turn.'));
  out.push(keys(h, d.keys));
  out.push(signals(h, d.signals));
  out.push(plugins(h, d.plugins, d.quarantined));
  if (d.notices?.length) out.push(h('h2', null, 'Notices'), h('ul', null, d.notices.map((n) => h('li', null, n))));
  return out;
}

function problems(h, d) {
  return h('div', { class: 'card wiring-problems', role: 'alert' },
    h('h2', null, 'Failures'),
    h('ul', null,
      d.quarantined.map((p) => h('li', null, h('strong', null, `${p} is quarantined`), ' (after repeated crashes; it is retried when its file changes)')),
      d.failures.map((c) => h('li', null, h('strong', null, `${c.plugin}/${c.extension}`), ` at ${c.hook} (request ${c.iteration}): `,
        h('span', { class: 'tag bad' }, c.error_kind || 'error'), ' ', c.error))));
}

function timeline(h, d) {
  const span = Math.max(1, d.turn.took_us || 0, ...d.hooks.map((r) => r.end_us));
  const pct = (us) => `${Math.max(0, Math.min(100, (us / span) * 100))}%`;
  const detail = h('div', { class: 'tl-detail card', 'aria-live': 'polite' }, 'Choose a bar (Tab, then Enter) to see the call.');
  const show = (r, c) => {
    // h() skips null children (replaceChildren would print them).
    detail.replaceChildren(h('div', null, h('strong', null, `${c.plugin}/${c.extension}`), ` at ${r.hook}`, c.order != null ? ` (order ${c.order})` : '',
      h('br'), `request ${c.iteration}, ${dur(c.duration_us)}, from ${dur(c.start_us)} to ${dur(c.end_us)}` + (c.batch ? `, call ${c.batch_index} of a batch of ${c.batch}` : ''),
      c.reads?.length ? h('div', null, 'read ', c.reads.join(', ')) : null,
      c.writes?.length ? h('div', null, 'wrote ', c.writes.join(', ')) : null,
      c.error ? h('div', { class: 'error' }, `FAILED (${c.error_kind || 'error'}): ${c.error}`) : null));
  };
  const rows = d.hooks.map((r) => {
    const bars = r.calls.map((c) => {
      const label = `${c.plugin}/${c.extension}: ${dur(c.duration_us)}` + (c.error ? `, failed: ${c.error_kind || 'error'}` : '');
      const b = h('button', { type: 'button', class: 'tl-bar' + (c.error ? ' failed' : ''), 'aria-label': label, title: label });
      b.style.left = pct(c.start_us);
      b.style.width = `max(3px, ${pct(c.end_us - c.start_us)})`;
      b.addEventListener('click', () => show(r, c));
      b.addEventListener('focus', () => show(r, c));
      return b;
    });
    const firing = h('div', { class: 'tl-firing' });
    firing.style.left = pct(r.start_us);
    firing.style.width = `max(1px, ${pct(r.end_us - r.start_us)})`;
    const names = r.calls.map((c) => `${c.extension} ${dur(c.duration_us)}`).join(', ');
    return h('li', { class: 'tl-row' + (r.failed ? ' failed' : '') },
      h('span', { class: 'tl-label' }, h('span', { class: 'muted' }, `${r.iteration}·`), r.hook),
      h('div', { class: 'tl-track', role: 'group', 'aria-label': `${r.hook}, request ${r.iteration}: ${names || 'no call recorded'}` }, firing, bars),
      h('span', { class: 'tl-time' }, dur(r.end_us - r.start_us)));
  });
  return h('section', { 'aria-labelledby': 'wiring-timeline' },
    h('h2', { id: 'wiring-timeline' }, 'Hooks of the turn, in order'),
    h('p', { class: 'muted' }, `One row per hook firing (request·hook); bars are the extensions' calls at their time, across ${dur(span)}.`),
    rows.length ? h('ol', { class: 'timeline', 'aria-label': 'Hook firings, in order' }, rows) : h('p', { class: 'muted' }, 'No hook fired.'),
    detail);
}

function keys(h, list) {
  const head = h('h2', { id: 'wiring-keys' }, 'State keys read and written');
  if (!list.length) return h('section', { 'aria-labelledby': 'wiring-keys' }, head, h('p', { class: 'muted' }, 'No extension read or wrote a state key.'));
  return h('section', { 'aria-labelledby': 'wiring-keys' }, head, h('div', { class: 'table-wrap', tabindex: 0, role: 'region', 'aria-label': 'State keys' },
    h('table', null,
      h('thead', null, h('tr', null, h('th', { scope: 'col' }, 'Key'), h('th', { scope: 'col' }, 'Read by'), h('th', { scope: 'col' }, 'Written by'))),
      h('tbody', null, list.map((k) => h('tr', null, h('th', { scope: 'row' }, h('code', null, k.key)),
        h('td', null, k.read_by.join(', ') || '—'), h('td', null, k.written_by.join(', ') || '—')))))));
}

function signals(h, list) {
  const head = h('h2', { id: 'wiring-signals' }, 'Signals fired');
  return h('section', { 'aria-labelledby': 'wiring-signals' }, head, list.length
    ? h('ul', null, list.map((s) => h('li', null, h('code', null, s.signal), ` (request ${s.iteration})`, s.text ? `: ${s.text}` : '')))
    : h('p', { class: 'muted' }, 'No signal fired.'));
}

function plugins(h, list, quarantined) {
  const head = h('h2', { id: 'wiring-plugins' }, 'Plugins of the turn, now');
  if (!list.length) return h('section', { 'aria-labelledby': 'wiring-plugins' }, head, h('p', { class: 'muted' }, 'No plugin health to show.'));
  return h('section', { 'aria-labelledby': 'wiring-plugins' }, head, h('ul', { class: 'wiring-plugins' }, list.map((p) => {
    const bad = p.state !== 'running' && p.state !== 'stopped';
    return h('li', { class: bad || quarantined.includes(p.name) ? 'bad' : '' }, h('strong', null, p.name), ' ',
      h('span', { class: 'tag' + (bad ? ' bad' : '') }, p.state),
      p.crashes ? ` · ${p.crashes} crash${p.crashes === 1 ? '' : 'es'}, ${p.restarts} restart${p.restarts === 1 ? '' : 's'}` : '',
      p.last_error ? h('div', { class: 'muted' }, 'last error: ', p.last_error) : null);
  })));
}

// budgetBar draws one request's budget (server/inspect's Split) as a
// stacked bar with its legend; the parts add up to the window.
export function budgetBar(h, b) {
  const total = Math.max(1, b.window);
  const segs = PARTS.filter(([k]) => b[k] > 0).map(([k, label]) => {
    const s = h('span', { class: `seg seg-${k}`, title: `${label}: ${b[k]} tokens` });
    s.style.width = `${(b[k] / total) * 100}%`;
    return s;
  });
  const text = PARTS.map(([k, label]) => `${label} ${b[k]}`).join(', ');
  return h('figure', { class: 'budget' },
    h('div', { class: 'budget-bar', role: 'img', 'aria-label': `Request ${b.iteration}: ${b.tokens} of ${b.window} tokens (${Math.round(b.fill * 100)}%). ${text}.` }, segs),
    h('figcaption', null,
      h('span', { class: 'budget-head' }, `Request ${b.iteration}: ${b.tokens} of ${b.window} tokens (${Math.round(b.fill * 100)}%)` + (b.calibrated ? '' : ', estimated')),
      h('ul', { class: 'legend' }, PARTS.map(([k, label]) => h('li', null, h('span', { class: `swatch seg-${k}`, 'aria-hidden': 'true' }), `${label} ${b[k]}`))),
      b.left_out?.length ? h('div', { class: 'muted' }, 'Left out: ', b.left_out.map((l) => `${l.kind}${l.title ? ' ' + l.title : ''}${l.source ? ' (' + l.source + ')' : ''}: ${l.reason}`).join('; ')) : null));
}

// picker is the session and turn choice of a view (#/VIEW/SESSION/TURN):
// its form, the session shown (the route's, else the most recent), and
// setTurns(turns, n) to list the session's turns once they are known.
export async function picker(ctx, viewName, session, turn) {
  const { h } = ctx;
  let list = [];
  try { list = (await ctx.api('/api/v1/sessions')).sessions || []; } catch (e) { ctx.toast(e.message, 'error'); }
  if (!session && list.length) session = list[0].name;
  const sid = `${viewName}-session`, tid = `${viewName}-turn`;
  const sel = h('select', { id: sid },
    list.map((s) => h('option', { value: s.name, selected: s.name === session }, s.name)),
    session && !list.some((s) => s.name === session) ? h('option', { value: session, selected: true }, session) : null);
  const turns = h('select', { id: tid, disabled: true }, h('option', { value: '' }, 'The last turn'));
  const go = () => ctx.navigate(`#/${viewName}/${encodeURIComponent(sel.value)}` + (turns.value ? `/${encodeURIComponent(turns.value)}` : ''));
  sel.addEventListener('change', () => { turns.value = ''; go(); });
  turns.addEventListener('change', go);
  const form = h('form', { class: 'picker row', 'aria-label': 'Session and turn', onsubmit: (e) => e.preventDefault() },
    h('label', { for: sid }, 'Session'), sel, h('label', { for: tid }, 'Turn'), turns);
  return {
    form, session,
    setTurns(all, n) {
      turns.replaceChildren(h('option', { value: '', selected: !turn }, 'The last turn'),
        ...all.map((t) => h('option', { value: String(t.n), selected: turn && t.n === n }, `${t.n}: ${clip(t.user, 60)}`)));
      turns.disabled = false;
    },
  };
}

function clip(s, n) {
  s = String(s || '').replace(/\s+/g, ' ');
  return s.length > n ? s.slice(0, n - 1) + '…' : s;
}

// dur formats microseconds.
export function dur(us) {
  us = Math.max(0, Math.round(us || 0));
  if (us < 1000) return `${us} µs`;
  if (us < 1e6) return `${(us / 1000).toFixed(us < 1e4 ? 2 : 1)} ms`;
  return `${(us / 1e6).toFixed(2)} s`;
}
