// saw.js: "what the model saw" (#/saw/SESSION/TURN). For a turn of a
// session (the last by default), each request as it went to the model: the
// budget as a stacked bar, every prompt block labelled with the extension,
// plugin and hook that added it (the recall block marked), the messages by
// part, the system prompt and the reply; above them the memories recalled,
// each with why it was chosen. Data: GET /api/v1/saw/{session}?turn=N
// (server/inspect).
import { budgetBar, picker } from './wiring.js';

export async function render(root, ctx) {
  const { h } = ctx;
  ctx.css('views/wiring.css');
  ctx.css('views/saw.css');
  const [session = '', turn = ''] = ctx.args;
  const title = h('h1', { id: 'saw-title' }, 'What the model saw');
  const body = h('div', { class: 'saw-body', 'aria-live': 'polite', 'aria-busy': 'true' });
  const section = h('section', { class: 'saw', 'aria-labelledby': 'saw-title' }, title);
  root.append(section);
  const pick = await picker(ctx, 'saw', session, turn);
  section.append(pick.form, body);
  if (!pick.session) {
    body.append(h('p', { class: 'muted' }, 'No session yet: send a message in the chat first.'));
    body.setAttribute('aria-busy', 'false');
    return;
  }
  let data;
  try {
    data = await ctx.api(`/api/v1/saw/${encodeURIComponent(pick.session)}` + (turn ? `?turn=${encodeURIComponent(turn)}` : ''));
  } catch (e) {
    body.append(h('p', { class: 'error', role: 'alert' }, e.message));
    body.setAttribute('aria-busy', 'false');
    return;
  }
  pick.setTurns(data.turns, data.turn.n);
  body.append(
    h('p', { class: 'saw-turn' }, h('strong', null, `Turn ${data.turn.n}`), ': ', data.turn.user || '(no message)',
      ' ', h('span', { class: 'muted' }, `· ${data.iterations.length} request${data.iterations.length === 1 ? '' : 's'}` + (data.turn.ended ? '' : ' · still running'))),
    recalled(h, data.recalled),
    ...data.iterations.map((it) => iteration(h, it, data.iterations.length)));
  body.setAttribute('aria-busy', 'false');
}

function recalled(h, list) {
  const head = h('h2', { id: 'saw-recalled' }, 'Memories recalled');
  if (!list.length) return h('section', { 'aria-labelledby': 'saw-recalled' }, head, h('p', { class: 'muted' }, 'No memory was recalled in this turn.'));
  return h('section', { 'aria-labelledby': 'saw-recalled' }, head,
    h('ol', { class: 'saw-memories' }, list.map((m) => h('li', { class: 'card' },
      h('div', null, h('span', { class: 'tag' }, m.area), ' ', h('span', { class: 'saw-memory-text' }, m.text)),
      h('div', { class: 'saw-why' }, h('strong', null, 'Why: '), m.why),
      h('div', { class: 'muted saw-by' }, `by ${who(m)} at ${m.hook}, request ${m.iteration}`)))));
}

function who(b) {
  return b.plugin && b.plugin !== b.extension ? `${b.extension} (${b.plugin})` : b.extension;
}

function iteration(h, it, count) {
  const id = `saw-it-${it.n}`;
  const blocks = it.blocks.map((b) => h('details', { class: 'saw-block' + (b.recall ? ' recall' : ''), open: b.recall },
    h('summary', null, h('strong', null, b.title || '(untitled block)'), ' ',
      h('span', { class: 'saw-label' }, `${who(b)} · ${b.hook}`), b.recall ? h('span', { class: 'tag' }, 'recall') : null),
    h('pre', { tabindex: 0 }, b.content)));
  const byPart = {};
  for (const m of it.messages) byPart[m.part] = (byPart[m.part] || 0) + 1;
  const parts = Object.entries(byPart).map(([p, n]) => `${n} ${p}`).join(', ');
  return h('section', { class: 'saw-iteration', 'aria-labelledby': id },
    h('h2', { id }, `Request ${it.n}` + (count > 1 ? ` of ${count}` : '')),
    it.budget ? budgetBar(h, it.budget) : null,
    h('h3', null, `Prompt blocks (${it.blocks.length})`),
    blocks.length ? h('div', { class: 'saw-blocks' }, blocks) : h('p', { class: 'muted' }, 'No block reached this request.'),
    h('details', { class: 'saw-messages' },
      h('summary', null, `Messages sent (${it.messages.length}: ${parts})`),
      h('ol', null, it.messages.map((m) => h('li', null,
        h('div', { class: 'saw-label' }, `${m.role} · ${m.part}`),
        h('pre', { tabindex: 0 }, m.content))))),
    h('details', null, h('summary', null, 'Base system prompt (before any block)'), h('pre', { tabindex: 0 }, it.system)),
    it.reply ? h('details', { open: true }, h('summary', null, 'The model answered'), h('pre', { tabindex: 0 }, it.reply)) : null,
    it.thinking ? h('details', null, h('summary', null, 'Its thinking'), h('pre', { tabindex: 0 }, it.thinking)) : null);
}
