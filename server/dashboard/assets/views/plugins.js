// plugins.js: the plugins view (admin): each plugin's health (state,
// crashes, restarts, start time, last error and stderr tail), its
// extensions with their hooks and orders, its tools, and a Reload button
// (POST /api/v1/plugins/NAME/reload: the new file passes the checks a change
// on disk gets, then is swapped in). Plugins that failed to start are listed
// with why.
export async function render(root, ctx) {
  const { h } = ctx;
  ctx.css('views/plugins.css');
  const list = h('div', { class: 'plugins' });
  const refresh = h('button', { type: 'button', onclick: () => draw() }, 'Refresh');
  root.append(h('div', { class: 'row' }, h('h1', null, 'Plugins'), refresh), list);
  const draw = async () => {
    let res;
    try { res = await ctx.api('/api/v1/plugins'); } catch (e) {
      list.replaceChildren(h('p', { class: 'error', role: 'alert' }, e.status === 404 ? 'This serve has no plugins endpoint (GET /api/v1/plugins).' : e.message));
      return;
    }
    list.replaceChildren(
      ...res.plugins.map((p) => plugin(ctx, p, res.pending || [], draw)),
      ...(res.failed || []).map((f) => h('section', { class: 'card plugin failed', 'aria-label': 'Plugin ' + f.name + ' (failed)' },
        h('h2', null, f.name, ' ', h('span', { class: 'state state-failed' }, 'failed to start')), h('p', null, f.reason), h('p', { class: 'muted' }, f.path),
        f.stderr_tail ? h('details', null, h('summary', null, 'stderr'), h('pre', null, f.stderr_tail)) : null)));
    if (!res.plugins.length && !(res.failed || []).length) list.append(h('p', { class: 'muted' }, 'No plugins are loaded.'));
  };
  await draw();
}

function plugin(ctx, p, pending, redraw) {
  const { h } = ctx;
  const msg = h('p', { role: 'status', class: 'reload-msg' });
  const reload = h('button', { type: 'button', class: 'primary', 'aria-label': 'Reload ' + p.name }, 'Reload');
  reload.addEventListener('click', async () => {
    reload.disabled = true;
    msg.textContent = 'Reloading…';
    msg.className = 'reload-msg muted';
    try {
      const r = await ctx.api(`/api/v1/plugins/${encodeURIComponent(p.name)}/reload`, { method: 'POST' });
      await redraw();
      ctx.toast(r.message);
      const again = document.querySelector(`[data-plugin="${CSS.escape(p.name)}"] .reload-msg`);
      if (again) { again.textContent = r.message; again.className = 'reload-msg ok'; }
    } catch (e) {
      msg.textContent = e.message;
      msg.className = 'reload-msg error';
      reload.disabled = false;
    }
  });
  const exts = [...(p.extensions || [])].sort((a, b) => a.hook.localeCompare(b.hook) || a.order - b.order);
  return h('section', { class: 'card plugin', 'data-plugin': p.name, 'aria-label': 'Plugin ' + p.name },
    h('div', { class: 'row' }, h('h2', null, p.name), h('span', { class: 'state state-' + p.state }, p.state),
      p.version ? h('span', { class: 'muted' }, 'v' + p.version) : null,
      pending.includes(p.name) || p.pending ? h('span', { class: 'tag' }, 'new version pending') : null,
      h('span', { class: 'spacer' }), reload),
    msg,
    h('dl', { class: 'kv' },
      h('dt', null, 'Crashes'), h('dd', { class: p.crashes ? 'error' : null }, String(p.crashes)),
      h('dt', null, 'Restarts'), h('dd', null, String(p.restarts)),
      h('dt', null, 'Start'), h('dd', null, `${p.start_ms} ms`),
      p.reloads ? [h('dt', null, 'Reloads'), h('dd', null, String(p.reloads))] : null,
      p.calls ? [h('dt', null, 'Calls'), h('dd', null, p.calls)] : null,
      h('dt', null, 'File'), h('dd', null, h('code', null, p.path))),
    p.last_error ? h('p', { class: 'error' }, h('strong', null, 'Last error: '), p.last_error) : null,
    p.last_rejection ? h('p', { class: 'error' }, h('strong', null, 'Last version refused: '), p.last_rejection) : null,
    exts.length ? h('div', { class: 'table-wrap' }, h('table', { class: 'exts' },
      h('caption', { class: 'muted' }, 'Extensions, by hook and order'),
      h('thead', null, h('tr', null, h('th', { scope: 'col' }, 'Hook'), h('th', { scope: 'col' }, 'Order'), h('th', { scope: 'col' }, 'Extension'))),
      h('tbody', null, exts.map((e) => h('tr', { class: e.disabled ? 'disabled' : null }, h('td', null, h('code', null, e.hook)), h('td', { class: 'num' }, String(e.order)), h('td', null, e.name, e.disabled ? ' (disabled)' : '')))))) : null,
    (p.tools || []).length ? h('p', null, h('strong', null, 'Tools: '), p.tools.join(', ')) : null,
    (p.over_budget || []).length ? h('p', { class: 'error' }, h('strong', null, 'Over budget: '), p.over_budget.map((o) => `${o.extension || ''} ${o.hook || ''}`).join(', ')) : null,
    p.stderr_tail ? h('details', null, h('summary', null, 'stderr (last lines)'), h('pre', null, p.stderr_tail)) : null);
}
