// approval.js: a held tool call drawn inline (in the chat, and wherever a
// view lists GET /api/v1/approvals): what it would do (the command, or the
// file diff, coloured), why it is held, and Approve / Deny / Always for this
// session. The terminal's rules and approval mode decided that it is held;
// the answer goes to POST /api/v1/approvals/{id} (admin keys only).
export function approvalCard(ctx, p) {
  const { h } = ctx;
  const reason = h('input', { type: 'text', class: 'deny-reason', placeholder: 'Why (told to the model)', 'aria-label': 'Reason for denying ' + p.tool });
  const verdict = h('p', { class: 'verdict', role: 'status' });
  const buttons = h('div', { class: 'row approval-actions' });
  const card = h('section', { class: 'approval card', 'aria-label': 'Approval needed for ' + p.tool, 'data-approval': p.id },
    h('h3', null, '⏸ Approval needed: ', h('code', null, p.tool)),
    p.reason ? h('p', null, p.reason) : null,
    p.extension ? h('p', { class: 'muted' }, 'held by ', h('code', null, p.extension)) : null,
    action(h, p.action),
    buttons, verdict);
  const answer = async (decision) => {
    for (const b of buttons.querySelectorAll('button')) b.disabled = true;
    try {
      const body = { decision };
      if (decision === 'deny' && reason.value.trim()) body.reason = reason.value.trim();
      await ctx.api('/api/v1/approvals/' + encodeURIComponent(p.id), { body });
      card.answered(decision, '');
    } catch (e) {
      verdict.textContent = e.message;
      verdict.className = 'verdict error';
      for (const b of buttons.querySelectorAll('button')) b.disabled = false;
    }
  };
  if (ctx.admin) {
    buttons.append(
      h('button', { type: 'button', class: 'primary', onclick: () => answer('allow_once') }, 'Approve'),
      h('button', { type: 'button', onclick: () => answer('allow_session') }, 'Always for this session'),
      reason,
      h('button', { type: 'button', class: 'danger', onclick: () => answer('deny') }, 'Deny'));
  } else {
    buttons.append(h('p', { class: 'muted' }, 'Waiting for an admin to answer (an agent key cannot).'));
  }
  if (p.deadline) buttons.append(h('span', { class: 'muted small' }, 'refused by itself at ' + new Date(p.deadline).toLocaleTimeString()));
  card.answered = (decision, text) => {
    if (card.classList.contains('answered')) return;
    card.classList.add('answered');
    buttons.remove();
    const [d] = String(decision).split(':');
    const denied = d === 'deny';
    verdict.textContent = (denied ? '✗ denied' : d === 'allow_session' ? '✓ approved for this session' : '✓ approved') + (text ? ' — ' + text : '');
    verdict.className = 'verdict ' + (denied ? 'error' : 'ok');
  };
  return card;
}

// action is the held call's action: a diff coloured line by line, or the
// command as it would run.
function action(h, text) {
  const src = String(text || '');
  const lines = src.split('\n');
  const isDiff = lines.some((l) => l.startsWith('@@') || l.startsWith('+++') || l.startsWith('---')) && lines.some((l) => /^[+-]/.test(l));
  if (!isDiff) return h('pre', { class: 'action', tabindex: 0, 'aria-label': 'What it would run' }, src);
  return h('pre', { class: 'action diff', tabindex: 0, 'aria-label': 'The change it would make' },
    lines.map((l) => h('span', { class: l.startsWith('@@') ? 'd-hunk' : l.startsWith('+') ? 'd-add' : l.startsWith('-') ? 'd-del' : 'd-ctx' }, l + '\n')));
}
