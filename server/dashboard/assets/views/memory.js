// memory.js: the memory view. #/memory searches (each hit says why it
// matched) with the counts by area beside; #/memory/ID opens one record: its
// text, tags, status and provenance, and its history (every journal event
// that made it what it is, GET /api/v1/memory/why/ID); admins add, archive
// and restore.
export async function render(root, ctx) {
  ctx.css('views/memory.css');
  if (ctx.args[0]) return record(root, ctx, ctx.args[0]);
  return search(root, ctx);
}

const esc = encodeURIComponent;

async function counts(ctx) {
  const { h } = ctx;
  const box = h('section', { class: 'card mem-counts', 'aria-labelledby': 'mem-counts-h' }, h('h2', { id: 'mem-counts-h' }, 'By area'));
  try {
    const st = await ctx.api('/api/v1/state');
    const areas = Object.entries(st.by_area || {}).sort((a, b) => b[1] - a[1]);
    box.append(h('p', { class: 'muted' }, `${st.records} records · journal seq ${st.seq}`),
      h('table', { class: 'area-table' }, h('thead', null, h('tr', null, h('th', { scope: 'col' }, 'Area'), h('th', { scope: 'col' }, 'Records'))),
        h('tbody', null, areas.map(([a, n]) => h('tr', null, h('td', null, h('a', { href: '#/memory', 'data-area': a }, a)), h('td', { class: 'num' }, String(n)))))));
  } catch (e) {
    box.append(h('p', { class: 'error' }, e.message));
  }
  return box;
}

async function search(root, ctx) {
  const { h } = ctx;
  const q = h('input', { type: 'search', id: 'mem-q', name: 'q', placeholder: 'What to recall', 'aria-label': 'Search memory' });
  const area = h('input', { type: 'text', id: 'mem-area', name: 'area', placeholder: 'all areas', 'aria-label': 'Areas (comma-separated)', size: 12 });
  const results = h('div', { class: 'mem-results', 'aria-live': 'polite' });
  const form = h('form', { class: 'row mem-search', role: 'search' }, q, area, h('button', { type: 'submit', class: 'primary' }, 'Search'));
  const side = h('div', { class: 'mem-side' });
  root.append(h('h1', null, 'Memory'), h('div', { class: 'mem-grid' }, h('div', null, form, results), side));
  const run = async () => {
    if (!q.value.trim()) { results.replaceChildren(h('p', { class: 'muted' }, 'Search for something to see what the agent would recall, and why.')); return; }
    results.replaceChildren(h('p', { class: 'muted' }, 'Searching…'));
    try {
      const params = new URLSearchParams({ q: q.value, k: '20' });
      if (area.value.trim()) params.set('area', area.value.trim());
      const res = await ctx.api('/api/v1/memory/search?' + params);
      const list = h('ol', { class: 'hits' }, res.hits.map((hit) => hitItem(ctx, hit)));
      results.replaceChildren(h('p', { class: 'muted' }, `${res.hits.length} hits (${res.mode})`, res.notice ? ' · ' + res.notice : ''), list);
      if (!res.hits.length) results.append(h('p', null, 'Nothing matched.'));
    } catch (e) { results.replaceChildren(h('p', { class: 'error', role: 'alert' }, e.message)); }
  };
  form.addEventListener('submit', (e) => { e.preventDefault(); run(); });
  side.append(await counts(ctx));
  side.querySelector('.mem-counts')?.addEventListener('click', (e) => {
    const a = e.target.closest('a[data-area]');
    if (!a) return;
    e.preventDefault();
    area.value = a.dataset.area;
    if (!q.value.trim()) q.focus(); else run();
  });
  if (ctx.admin) side.append(addForm(ctx));
  run();
  q.focus();
}

function hitItem(ctx, hit) {
  const { h } = ctx;
  const r = hit.record;
  return h('li', { class: 'hit card' },
    h('div', { class: 'row' }, h('a', { href: '#/memory/' + esc(r.id), class: 'hit-open' }, r.key || r.id), h('span', { class: 'tag' }, r.area),
      r.status !== 'active' ? h('span', { class: 'tag' }, r.status) : null, h('span', { class: 'muted' }, `match ${(hit.match * 100).toFixed(0)}%`)),
    h('p', { class: 'hit-text' }, r.text),
    h('p', { class: 'why' }, h('span', { class: 'label' }, 'Why: '), hit.why));
}

function addForm(ctx) {
  const { h } = ctx;
  const text = h('textarea', { id: 'mem-new-text', rows: 3, required: true });
  const area = h('input', { type: 'text', id: 'mem-new-area', placeholder: 'main' });
  const tags = h('input', { type: 'text', id: 'mem-new-tags', placeholder: 'ops, deploy' });
  const msg = h('p', { role: 'status' });
  const form = h('form', { class: 'card mem-add', 'aria-labelledby': 'mem-add-h' },
    h('h2', { id: 'mem-add-h' }, 'Add a memory'),
    h('label', { for: 'mem-new-text' }, 'Text'), text,
    h('label', { for: 'mem-new-area' }, 'Area'), area,
    h('label', { for: 'mem-new-tags' }, 'Tags (comma-separated)'), tags,
    h('button', { type: 'submit', class: 'primary' }, 'Save'), msg);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const body = { text: text.value };
    if (area.value.trim()) body.area = area.value.trim();
    const t = tags.value.split(',').map((s) => s.trim()).filter(Boolean);
    if (t.length) body.tags = t;
    try {
      const res = await ctx.api('/api/v1/memory', { body });
      ctx.navigate('#/memory/' + esc(res.record.id));
    } catch (err) { msg.textContent = err.message; msg.className = 'error'; }
  });
  return form;
}

async function record(root, ctx, id) {
  const { h } = ctx;
  root.append(h('p', null, h('a', { href: '#/memory' }, '← Search')));
  const box = h('div', { class: 'mem-record' });
  root.append(box);
  const draw = async () => {
    let why;
    try { why = await ctx.api('/api/v1/memory/why/' + esc(id)); } catch (e) {
      box.replaceChildren(h('h1', null, 'Record ' + id), h('p', { class: 'error', role: 'alert' }, e.message));
      return;
    }
    const r = why.record;
    const head = h('h1', null, 'Record ', h('code', null, id));
    if (!r) { box.replaceChildren(head, h('p', null, 'This record is gone (deleted); its history remains.'), history(ctx, why.entries)); return; }
    const actions = h('div', { class: 'row' });
    if (ctx.admin) {
      if (r.status === 'active') actions.append(h('button', { type: 'button', onclick: () => act('archive') }, 'Archive'));
      else actions.append(h('button', { type: 'button', onclick: () => act('restore') }, 'Restore'));
    }
    const p = r.provenance || {};
    box.replaceChildren(head,
      h('div', { class: 'row' }, h('span', { class: 'tag' }, r.area), h('span', { class: 'tag status-' + r.status }, r.status), (r.tags || []).map((t) => h('span', { class: 'tag' }, '#' + t)), r.key ? h('span', { class: 'muted' }, 'key ' + r.key) : null),
      h('blockquote', { class: 'mem-text' }, r.text),
      actions,
      h('h2', null, 'Provenance'),
      h('dl', { class: 'kv' },
        kv(h, 'Source', p.source), kv(h, 'Session', p.session), kv(h, 'Message', p.message), kv(h, 'Created', `${new Date(r.created).toLocaleString()} (seq ${p.seq})`),
        kv(h, 'Updated', `${new Date(r.updated).toLocaleString()} (seq ${p.updated_seq})`), kv(h, 'Importance', String(r.importance)), kv(h, 'Recalled', `${r.access_count} times`),
        r.superseded_by ? kv(h, 'Superseded by', h('a', { href: '#/memory/' + esc(r.superseded_by) }, r.superseded_by)) : null),
      history(ctx, why.entries));
  };
  const act = async (what) => {
    try {
      await ctx.api(`/api/v1/memory/${esc(id)}/${what}`, { method: 'POST' });
      ctx.toast(what === 'archive' ? 'Archived: out of recall, kept.' : 'Restored: back in recall.');
      draw();
    } catch (e) { ctx.toast(e.message, 'error'); }
  };
  await draw();
}

function kv(h, k, v) {
  if (v == null || v === '') return null;
  return [h('dt', null, k), h('dd', null, v)];
}

function history(ctx, entries) {
  const { h } = ctx;
  return h('section', { class: 'mem-history', 'aria-labelledby': 'mem-history-h' },
    h('h2', { id: 'mem-history-h' }, `History (${entries.length} versions)`),
    h('ol', { class: 'timeline' }, entries.map((e, i) => h('li', null,
      h('div', { class: 'row' }, h('strong', null, `v${i + 1}`), h('span', { class: 'tag' }, e.kind), h('span', { class: 'muted' }, `seq ${e.seq} · ${new Date(e.ts).toLocaleString()}`), e.session ? h('span', { class: 'muted' }, 'session ' + e.session) : null),
      h('p', null, e.summary)))));
}
