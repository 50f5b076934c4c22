// deltas.js: the badge for memory changes. After sign-in the shell follows
// GET /api/v1/deltas/stream (reconnecting with Last-Event-ID); every change
// of a record (a write, an archive, a restore, a merge, a deletion; not a
// mere recall) raises the badge's count, and the badge opens the record
// changed last.
const CHANGES = new Set(['upsert', 'archive', 'restore', 'merge', 'delete']);

export function followDeltas(ctx, badge) {
  let count = 0;
  let last = '';
  const draw = () => {
    badge.hidden = count === 0;
    badge.textContent = count === 1 ? '1 memory change' : `${count} memory changes`;
    badge.href = last ? '#/memory/' + encodeURIComponent(last) : '#/memory';
    badge.title = last ? 'Open the record changed last: ' + last : '';
  };
  badge.addEventListener('click', () => { count = 0; setTimeout(draw, 0); });
  const stream = ctx.sse('/api/v1/deltas/stream', ({ event, data }) => {
    if (event !== 'delta' || !data || !CHANGES.has(data.event_type)) return;
    count++;
    last = data.item_id;
    badge.dataset.item = last;
    draw();
  }, { onError: (e) => console.warn('deltas stream:', e.message) });
  draw();
  return () => stream.close();
}
