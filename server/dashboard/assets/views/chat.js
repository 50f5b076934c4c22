// chat.js: the chat view (#/chat/SESSION). Sessions on the left (the
// terminal's own: `exocortex --resume NAME` opens them), the conversation
// in the middle, streamed from POST /api/v1/sessions/NAME/turn; tool calls
// and thoughts folded; held tool calls answered inline.
import { approvalCard } from './approval.js';

const BATCH = 25; // messages drawn per task when a long session opens (small: each batch is one task under 50 ms)

export async function render(root, ctx) {
  const { h, api } = ctx;
  ctx.css('views/chat.css');
  let current = ctx.args[0] || '';
  let running = null; // the turn's stream
  let attachments = [];
  let closed = false;
  ctx.onCleanup(() => { closed = true; });

  const sessionList = h('ul', { class: 'sessions', 'aria-label': 'Sessions' });
  const newBtn = h('button', { type: 'button', class: 'primary', onclick: () => newSession() }, '+ New session');
  const side = h('aside', { class: 'chat-side', 'aria-label': 'Sessions' }, h('h2', null, 'Sessions'), newBtn, sessionList);
  const title = h('h1', { class: 'chat-title' }, current || 'New session');
  const status = h('span', { class: 'chat-status muted', role: 'status', 'aria-live': 'polite' });
  const inspect = h('span', { class: 'chat-links' });
  const drawLinks = () => inspect.replaceChildren(...(current ? [
    h('a', { href: '#/saw/' + encodeURIComponent(current) }, 'What the model saw'), ' · ',
    h('a', { href: '#/wiring/' + encodeURIComponent(current) }, 'Live wiring')] : []));
  const log = h('div', { class: 'messages', role: 'log', 'aria-label': 'Conversation', 'aria-live': 'off', tabindex: 0 });
  const input = h('textarea', { id: 'chat-input', rows: 2, placeholder: 'Message the agent (Enter sends, Shift+Enter for a new line)', 'aria-label': 'Message' });
  const fileInput = h('input', { type: 'file', multiple: true, hidden: true, 'aria-hidden': 'true', tabindex: -1 });
  const attachBtn = h('button', { type: 'button', class: 'ghost', onclick: () => fileInput.click(), 'aria-label': 'Attach files' }, '📎');
  const chips = h('div', { class: 'chips', 'aria-label': 'Attachments' });
  const sendBtn = h('button', { type: 'submit', class: 'primary' }, 'Send');
  const stopBtn = h('button', { type: 'button', class: 'danger', hidden: true, onclick: () => stop() }, 'Stop');
  const form = h('form', { class: 'composer' }, chips, h('div', { class: 'composer-row' }, attachBtn, fileInput, input, sendBtn, stopBtn));
  const convo = h('section', { class: 'chat-main', 'aria-labelledby': 'chat-title' }, h('div', { class: 'chat-head' }, title, inspect, status), log, form);
  title.id = 'chat-title';
  root.append(h('div', { class: 'chat' }, side, convo));

  // ---- sessions -------------------------------------------------------
  async function loadSessions() {
    let list = [];
    try { list = (await api('/api/v1/sessions')).sessions; } catch (e) { ctx.toast(e.message, 'error'); }
    if (closed) return list;
    sessionList.replaceChildren(...list.map(sessionItem));
    if (!list.length) sessionList.append(h('li', { class: 'muted' }, 'No sessions yet.'));
    return list;
  }
  function sessionItem(s) {
    const link = h('a', { href: '#/chat/' + encodeURIComponent(s.name), 'aria-current': s.name === current ? 'page' : null, title: 'Modified ' + new Date(s.modified).toLocaleString() }, s.name, s.busy ? h('span', { class: 'tag' }, 'running') : null);
    const li = h('li', { 'data-session': s.name }, link);
    if (ctx.admin) {
      li.append(h('span', { class: 'session-actions' },
        h('button', { type: 'button', class: 'ghost small', 'aria-label': 'Rename ' + s.name, onclick: () => renameSession(li, s.name) }, 'Rename'),
        h('button', { type: 'button', class: 'ghost small', 'aria-label': 'Delete ' + s.name, onclick: () => deleteSession(s.name) }, 'Delete')));
    }
    return li;
  }
  async function newSession() {
    try {
      const { name } = await api('/api/v1/sessions', { method: 'POST', body: {} });
      ctx.navigate('#/chat/' + encodeURIComponent(name));
    } catch (e) { ctx.toast(e.message, 'error'); }
  }
  function renameSession(li, name) {
    const field = h('input', { type: 'text', value: name, 'aria-label': 'New name for ' + name });
    const save = async (ev) => {
      ev.preventDefault();
      try {
        const res = await api(`/api/v1/sessions/${encodeURIComponent(name)}/rename`, { body: { name: field.value.trim() } });
        if (name === current) ctx.navigate('#/chat/' + encodeURIComponent(res.name));
        else loadSessions();
      } catch (e) { ctx.toast(e.message, 'error'); field.focus(); }
    };
    const f = h('form', { class: 'rename', onsubmit: save }, field, h('button', { type: 'submit', class: 'small' }, 'Save'),
      h('button', { type: 'button', class: 'ghost small', onclick: () => loadSessions() }, 'Cancel'));
    f.addEventListener('keydown', (e) => { if (e.key === 'Escape') loadSessions(); });
    li.replaceChildren(f);
    field.select();
  }
  async function deleteSession(name) {
    if (!confirm(`Delete session ${name}? Its files move to the sessions' .trash.`)) return;
    try {
      await api('/api/v1/sessions/' + encodeURIComponent(name), { method: 'DELETE' });
      ctx.toast('Deleted ' + name);
      if (name === current) ctx.navigate('#/chat');
      else loadSessions();
    } catch (e) { ctx.toast(e.message, 'error'); }
  }

  // ---- messages -------------------------------------------------------
  let lastTool = null; // the folded tool call a following result belongs to
  function userMsg(text) {
    return h('article', { class: 'msg user', 'aria-label': 'You' }, h('div', { class: 'bubble' }, text));
  }
  function thoughtsBox(thoughts, think) {
    const all = [think, ...(thoughts || [])].filter(Boolean);
    if (!all.length) return null;
    return h('details', { class: 'thoughts' }, h('summary', null, 'Thoughts'), h('div', { class: 'muted' }, all.map((t) => h('p', null, t))));
  }
  function toolBox(tool, args, headline) {
    const out = h('pre', { class: 'tool-out' });
    const state = h('span', { class: 'tool-state' }, '…');
    const d = h('details', { class: 'tool' },
      h('summary', null, h('span', { class: 'tool-icon', 'aria-hidden': 'true' }, '⚙ '), h('strong', null, tool), ' ', h('span', { class: 'muted' }, headline || ''), ' ', state),
      h('div', { class: 'tool-body' }, h('div', { class: 'label' }, 'Arguments'), h('pre', { class: 'tool-args' }, args), h('div', { class: 'label' }, 'Output'), out));
    d._out = out;
    d._state = state;
    return d;
  }
  function argsText(args) {
    if (!args) return '';
    if (typeof args === 'string') { try { return JSON.stringify(JSON.parse(args), null, 2); } catch { return args; } }
    if (args && typeof args === 'object' && !Array.isArray(args)) return Object.entries(args).map(([k, v]) => `${k}: ${v}`).join('\n');
    return JSON.stringify(args, null, 2);
  }
  function setResult(box, result, error) {
    if (!box) return;
    box._out.textContent = error ? 'error: ' + error : result || '(no output)';
    box._state.textContent = error ? 'failed' : 'done';
    box._state.className = 'tool-state ' + (error ? 'error' : 'ok');
  }
  // historyMsg draws one message of GET …/messages.
  function historyMsg(m) {
    if (m.role === 'user') { lastTool = null; return userMsg(m.content); }
    if (m.role === 'tool') {
      if (lastTool) { setResult(lastTool, m.content, ''); lastTool = null; return null; }
      const box = toolBox(m.tool_name || 'tool', '', 'result');
      setResult(box, m.content, '');
      return h('article', { class: 'msg agent' }, box);
    }
    if (m.role !== 'assistant') return null;
    const art = h('article', { class: 'msg agent', 'aria-label': 'Agent' }, thoughtsBox(m.thoughts, m.think));
    if (m.tool && m.tool !== 'response') {
      lastTool = toolBox(m.tool, argsText(m.args), m.headline);
      art.append(lastTool);
    } else {
      art.append(h('div', { class: 'md' }, ctx.md(m.text || m.content)));
    }
    return art;
  }

  async function openSession(name) {
    log.replaceChildren();
    drawLinks();
    lastTool = null;
    title.textContent = name || 'New session';
    if (!name) {
      log.append(h('p', { class: 'muted empty' }, 'Write a message to start a session.'));
      return;
    }
    let data;
    try { data = await api(`/api/v1/sessions/${encodeURIComponent(name)}/messages?limit=100000`); } catch (e) {
      log.append(h('p', { class: 'error', role: 'alert' }, e.message));
      return;
    }
    if (closed) return;
    const msgs = data.messages;
    if (!msgs.length) log.append(h('p', { class: 'muted empty' }, 'No messages yet.'));
    // Draw the last messages at once; the older ones a batch at a time as
    // the reader scrolls up to them (a sentinel at the top), keeping the
    // view where it was, so a long session never blocks the page.
    let start = Math.max(0, msgs.length - BATCH);
    // Each batch is one chunk the browser skips laying out while it is off
    // screen (content-visibility), so a batch drawn costs the same at the
    // 80th as at the first.
    const draw = (from, to) => {
      const chunk = h('div', { class: 'chunk' });
      lastTool = null;
      for (const m of msgs.slice(from, to)) { const el = historyMsg(m); if (el) chunk.append(el); }
      lastTool = null;
      return chunk;
    };
    const sentinel = h('div', { class: 'older', 'aria-hidden': 'true' });
    log.append(sentinel, draw(start, msgs.length));
    log.scrollTop = log.scrollHeight;
    log.dataset.loaded = String(msgs.length - start);
    for (const p of data.approvals || []) log.append(approvalCard(ctx, p));
    if (data.busy) status.textContent = 'A turn is running in this session.';
    const done = () => { sentinel.remove(); log.dataset.complete = 'true'; };
    if (start === 0) { done(); return; }
    const more = () => {
      if (closed || name !== current || start === 0) return;
      const end = start;
      start = Math.max(0, start - BATCH);
      const fromBottom = log.scrollHeight - log.scrollTop;
      sentinel.after(draw(start, end));
      log.scrollTop = log.scrollHeight - fromBottom;
      log.dataset.loaded = String(msgs.length - start);
      if (start === 0) { io.disconnect(); done(); return; }
      // Still near the top (a short batch): the observer will not fire again.
      if (log.scrollTop < 600) requestAnimationFrame(more);
    };
    const io = new IntersectionObserver((entries) => { if (entries.some((e) => e.isIntersecting)) requestAnimationFrame(more); }, { root: log, rootMargin: '600px 0px 0px 0px' });
    io.observe(sentinel);
    ctx.onCleanup(() => io.disconnect());
  }

  // ---- a turn ---------------------------------------------------------
  function busy(on) {
    sendBtn.hidden = on;
    stopBtn.hidden = !on;
    status.textContent = on ? 'The agent is working…' : '';
    if (!on) input.focus();
  }
  async function send() {
    const text = input.value;
    if (!text.trim() && !attachments.length) return;
    if (running) return;
    let name = current;
    if (!name) {
      try { name = (await api('/api/v1/sessions', { method: 'POST', body: {} })).name; } catch (e) { ctx.toast(e.message, 'error'); return; }
      current = name;
      history.replaceState(null, '', '#/chat/' + encodeURIComponent(name));
      title.textContent = name;
      drawLinks();
      log.replaceChildren();
    }
    log.querySelector('.empty')?.remove();
    const files = attachments;
    attachments = [];
    drawChips();
    input.value = '';
    log.append(userMsg(text + (files.length ? '\n📎 ' + files.map((f) => f.filename).join(', ') : '')));
    const live = new Turn(log);
    busy(true);
    log.scrollTop = log.scrollHeight;
    running = ctx.sse(`/api/v1/sessions/${encodeURIComponent(name)}/turn`, (ev) => {
      live.event(ev);
      if (ev.event === 'done' || ev.event === 'error') { running = null; busy(false); loadSessions(); }
    }, {
      method: 'POST', body: { message: text, attachments: files },
      onError: (e) => { live.fail(e.message); running = null; busy(false); },
      onEnd: () => { if (running) { running = null; busy(false); } },
    });
    loadSessions();
  }
  async function stop() {
    try { await api(`/api/v1/sessions/${encodeURIComponent(current)}/stop`, { method: 'POST' }); } catch (e) { ctx.toast(e.message, 'error'); }
  }
  ctx.onCleanup(() => running?.close());

  // Turn draws one streamed turn: per iteration its thoughts and reply, the
  // tool calls folded, held calls inline.
  class Turn {
    constructor(parent) {
      this.el = h('article', { class: 'msg agent live', 'aria-label': 'Agent', 'aria-busy': 'true' });
      parent.append(this.el);
      this.iter = -1;
      this.tool = null;
      this.pending = null;
      this.dirty = new Set();
    }
    stick() {
      const near = log.scrollHeight - log.scrollTop - log.clientHeight < 120;
      if (near) log.scrollTop = log.scrollHeight;
    }
    part(iteration) {
      if (iteration !== this.iter || !this.cur) {
        this.iter = iteration;
        this.cur = { thoughts: h('div'), text: h('div', { class: 'md answer' }), src: '' };
        this.el.append(this.cur.thoughts, this.cur.text);
      }
      return this.cur;
    }
    drawText(p, text) {
      if (text === p.src) return;
      p.src = text;
      this.dirty.add(p);
      if (this.frame) return;
      this.frame = requestAnimationFrame(() => {
        this.frame = 0;
        for (const q of this.dirty) q.text.replaceChildren(ctx.md(q.src));
        this.dirty.clear();
        this.stick();
      });
    }
    event({ event, data }) {
      const d = data || {};
      if (d.agent) {
        if (event === 'tool_call' || event === 'notice') this.el.append(h('p', { class: 'muted sub' }, `${d.agent}: ${d.tool || d.text || ''}`));
        return;
      }
      switch (event) {
        case 'reply': {
          const p = this.part(d.iteration);
          const tb = thoughtsBox(d.thoughts, d.think);
          if (tb) { const open = p.thoughts.querySelector('details')?.open; if (open) tb.open = true; p.thoughts.replaceChildren(tb); }
          if (!d.tool || d.tool === 'response') this.drawText(p, d.text || '');
          break;
        }
        case 'reasoning': break;
        case 'tool_call': {
          if (d.tool === 'response') break;
          const p = this.part(d.iteration);
          this.tool = toolBox(d.tool, argsText(d.raw_args), '');
          p.text.after(this.tool);
          this.cur = null;
          this.stick();
          break;
        }
        case 'tool_output': if (this.tool) { this.tool._out.textContent = d.text; } break;
        case 'tool_result': if (d.tool !== 'response') { setResult(this.tool, d.result, d.error); this.tool = null; } break;
        case 'approval_waiting': this.el.append(approvalCard(ctx, d.approval)); this.stick(); break;
        case 'approval': {
          const card = [...this.el.querySelectorAll('.approval:not(.answered)')].pop();
          if (card) card.answered(d.result, d.text);
          break;
        }
        case 'notice': if (d.text) this.el.append(h('p', { class: 'notice muted' }, d.text)); break;
        case 'signal': this.el.append(h('p', { class: 'notice muted' }, `↺ ${d.signal}`)); break;
        case 'done': {
          this.el.removeAttribute('aria-busy');
          this.el.classList.remove('live');
          const shown = [...this.el.querySelectorAll('.answer')].some((a) => a.textContent.trim());
          if (!shown && d.text) this.el.append(h('div', { class: 'md answer' }, ctx.md(d.text)));
          if (d.error) this.el.append(h('p', { class: 'notice muted' }, d.error));
          this.stick();
          break;
        }
        case 'error': this.fail(d.error || 'the turn failed', d.code); break;
      }
    }
    fail(msg, code) {
      this.el.removeAttribute('aria-busy');
      this.el.classList.remove('live');
      this.el.append(h('p', { class: code === 'stopped' ? 'notice muted' : 'error', role: code === 'stopped' ? null : 'alert' }, code === 'stopped' ? '■ ' + msg : msg));
    }
  }

  // ---- the composer ---------------------------------------------------
  input.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) { e.preventDefault(); send(); }
  });
  form.addEventListener('submit', (e) => { e.preventDefault(); send(); });
  fileInput.addEventListener('change', () => { addFiles(fileInput.files); fileInput.value = ''; });
  for (const target of [convo]) {
    target.addEventListener('dragover', (e) => { if ([...e.dataTransfer.types].includes('Files')) { e.preventDefault(); convo.classList.add('dropping'); } });
    target.addEventListener('dragleave', (e) => { if (e.target === convo || !convo.contains(e.relatedTarget)) convo.classList.remove('dropping'); });
    target.addEventListener('drop', (e) => { e.preventDefault(); convo.classList.remove('dropping'); addFiles(e.dataTransfer.files); });
  }
  async function addFiles(list) {
    for (const f of list) {
      const b64 = await new Promise((res, rej) => {
        const r = new FileReader();
        r.onload = () => res(String(r.result).replace(/^data:[^,]*,/, ''));
        r.onerror = () => rej(r.error);
        r.readAsDataURL(f);
      }).catch((e) => { ctx.toast(`${f.name}: ${e.message}`, 'error'); return null; });
      if (b64 != null) attachments.push({ filename: f.name, base64: b64 });
    }
    drawChips();
  }
  function drawChips() {
    chips.replaceChildren(...attachments.map((a, i) => h('span', { class: 'chip' }, a.filename,
      h('button', { type: 'button', class: 'ghost small', 'aria-label': 'Remove ' + a.filename, onclick: () => { attachments.splice(i, 1); drawChips(); } }, '×'))));
  }

  const list = await loadSessions();
  if (!current && list.length) {
    current = list[0].name;
    history.replaceState(null, '', '#/chat/' + encodeURIComponent(current));
    sessionList.querySelector(`[data-session="${CSS.escape(current)}"] a`)?.setAttribute('aria-current', 'page');
  }
  await openSession(current);
  input.focus();
}
