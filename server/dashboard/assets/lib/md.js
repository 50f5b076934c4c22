// md.js: a small Markdown renderer that builds DOM nodes (never HTML
// strings), so a model's answer cannot inject markup: headings, paragraphs,
// fenced and indented code (highlighted), lists, quotes, rules, tables, and
// inline code, bold, italics, strike-through and links (http, https, mailto
// and relative only).
import { h } from './dom.js';

export function md(text) {
  const frag = document.createDocumentFragment();
  const lines = String(text ?? '').replace(/\r\n?/g, '\n').split('\n');
  let i = 0;
  const para = [];
  const flush = () => {
    if (para.length) frag.appendChild(h('p', null, inline(para.join('\n'))));
    para.length = 0;
  };
  while (i < lines.length) {
    const line = lines[i];
    let m;
    if ((m = line.match(/^\s{0,3}(```+|~~~+)\s*([\w+#.-]*)/))) {
      flush();
      const fence = m[1], lang = m[2];
      const body = [];
      i++;
      while (i < lines.length && !lines[i].trimStart().startsWith(fence)) body.push(lines[i++]);
      i++;
      frag.appendChild(codeBlock(body.join('\n'), lang));
      continue;
    }
    if ((m = line.match(/^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$/))) {
      flush();
      frag.appendChild(h('h' + Math.min(6, m[1].length + 2), null, inline(m[2])));
      i++;
      continue;
    }
    if (/^\s{0,3}([-*_])(\s*\1){2,}\s*$/.test(line)) {
      flush();
      frag.appendChild(h('hr'));
      i++;
      continue;
    }
    if (/^\s{0,3}>/.test(line)) {
      flush();
      const body = [];
      while (i < lines.length && /^\s{0,3}>/.test(lines[i])) body.push(lines[i++].replace(/^\s{0,3}>\s?/, ''));
      frag.appendChild(h('blockquote', null, md(body.join('\n'))));
      continue;
    }
    if ((m = line.match(/^(\s*)([-*+]|\d{1,9}[.)])\s+/))) {
      flush();
      const ordered = /\d/.test(m[2]);
      const list = h(ordered ? 'ol' : 'ul');
      const item = /^(\s*)([-*+]|\d{1,9}[.)])\s+(.*)$/;
      let cur = null;
      while (i < lines.length) {
        const l = lines[i];
        const im = l.match(item);
        if (im && (/\d/.test(im[2]) === ordered) && im[1].length <= m[1].length + 1) {
          cur = [im[3]];
          list.appendChild(h('li'));
          list.lastChild._src = cur;
          i++;
        } else if (cur && l.trim() !== '' && /^\s+/.test(l)) {
          cur.push(l.replace(/^\s{1,4}/, ''));
          i++;
        } else break;
      }
      for (const li of list.children) {
        const src = li._src.join('\n');
        const task = src.match(/^\[([ xX])\]\s+/);
        if (task) li.appendChild(h('input', { type: 'checkbox', disabled: true, checked: task[1] !== ' ', 'aria-label': 'done' }));
        if (li._src.length > 1) li.appendChild(md(task ? src.slice(task[0].length) : src));
        else li.appendChild(inline(task ? src.slice(task[0].length) : src));
        delete li._src;
      }
      frag.appendChild(list);
      continue;
    }
    if (line.includes('|') && i + 1 < lines.length && /^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$/.test(lines[i + 1])) {
      flush();
      const cells = (l) => l.trim().replace(/^\||\|$/g, '').split('|').map((c) => c.trim());
      const head = cells(line);
      i += 2;
      const rows = [];
      while (i < lines.length && lines[i].includes('|') && lines[i].trim() !== '') rows.push(cells(lines[i++]));
      frag.appendChild(h('div', { class: 'table-wrap' }, h('table', null,
        h('thead', null, h('tr', null, head.map((c) => h('th', { scope: 'col' }, inline(c))))),
        h('tbody', null, rows.map((r) => h('tr', null, r.map((c) => h('td', null, inline(c)))))))));
      continue;
    }
    if (line.trim() === '') {
      flush();
      i++;
      continue;
    }
    if (/^ {4}/.test(line) && para.length === 0) {
      const body = [];
      while (i < lines.length && (/^ {4}/.test(lines[i]) || lines[i].trim() === '')) body.push(lines[i++].slice(4));
      frag.appendChild(codeBlock(body.join('\n').replace(/\n+$/, ''), ''));
      continue;
    }
    para.push(line);
    i++;
  }
  flush();
  return frag;
}

function codeBlock(src, lang) {
  const code = h('code', { class: lang ? 'lang-' + lang : null });
  highlight(code, src, lang);
  const copy = h('button', { type: 'button', class: 'copy ghost', 'aria-label': 'Copy the code' }, 'Copy');
  copy.addEventListener('click', () => {
    navigator.clipboard?.writeText(src).then(() => { copy.textContent = 'Copied'; }, () => { copy.textContent = 'Select and copy'; });
  });
  return h('div', { class: 'code' }, lang ? h('span', { class: 'code-lang' }, lang) : null, copy, h('pre', { tabindex: 0 }, code));
}

const SAFE_URL = /^(https?:|mailto:|#|\/|\.\/|\.\.\/)/i;

// inline renders code spans, links, bold, italics and strike-through.
export function inline(text) {
  const frag = document.createDocumentFragment();
  const re = /(`+)([\s\S]*?[^`])\1(?!`)|\[([^\]]+)\]\(([^)\s]+)(?:\s+"[^"]*")?\)|(\*\*|__)(?=\S)([\s\S]*?\S)\5|(\*|_)(?=\S)([\s\S]*?\S)\7(?!\w)|~~(?=\S)([\s\S]*?\S)~~|(https?:\/\/[^\s<>()]+[^\s<>().,;:!?'"])|\n/g;
  let last = 0, m;
  while ((m = re.exec(text))) {
    if (m.index > last) frag.appendChild(document.createTextNode(text.slice(last, m.index)));
    if (m[1]) frag.appendChild(h('code', null, m[2].replace(/^ (.*) $/, '$1')));
    else if (m[3]) {
      const url = m[4];
      if (SAFE_URL.test(url)) frag.appendChild(h('a', { href: url, rel: 'noopener noreferrer', target: url.startsWith('#') ? null : '_blank' }, inline(m[3])));
      else frag.appendChild(document.createTextNode(m[0]));
    } else if (m[5]) frag.appendChild(h('strong', null, inline(m[6])));
    else if (m[7]) frag.appendChild(h('em', null, inline(m[8])));
    else if (m[9]) frag.appendChild(h('del', null, inline(m[9])));
    else if (m[10]) frag.appendChild(h('a', { href: m[10], rel: 'noopener noreferrer', target: '_blank' }, m[10]));
    else frag.appendChild(h('br'));
    last = re.lastIndex;
  }
  if (last < text.length) frag.appendChild(document.createTextNode(text.slice(last)));
  return frag;
}

const KEYWORDS = new Set(('break case catch class const continue def default defer do elif else enum export extends false finally for from func function go if import in interface let map nil none null package pass range return select self static struct switch this throw true try type typeof var void while with yield async await lambda raise not and or is fn pub use mut impl match echo then fi esac done local').split(' '));

// highlight fills code with src split into spans: comments, strings,
// numbers, keywords (a common set across Go, JS, Python, Rust, shell).
export function highlight(code, src, lang) {
  const hash = /^(py|python|sh|bash|shell|zsh|yaml|yml|toml|rb|ruby|r|conf|ini|dockerfile|make|makefile)$/i.test(lang || '');
  const re = hash
    ? /(#[^\n]*)|("(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')|\b(\d[\d_.xXa-fA-F]*)\b|\b([A-Za-z_]\w*)\b/g
    : /(\/\/[^\n]*|\/\*[\s\S]*?\*\/)|("(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|`[^`]*`)|\b(\d[\d_.xXa-fA-F]*)\b|\b([A-Za-z_]\w*)\b/g;
  let last = 0, m, plain = '';
  const put = (cls, s) => {
    if (plain) { code.appendChild(document.createTextNode(plain)); plain = ''; }
    code.appendChild(h('span', { class: cls }, s));
  };
  while ((m = re.exec(src))) {
    plain += src.slice(last, m.index);
    last = re.lastIndex;
    if (m[1]) put('tok-c', m[1]);
    else if (m[2]) put('tok-s', m[2]);
    else if (m[3]) put('tok-n', m[3]);
    else if (KEYWORDS.has(m[4])) put('tok-k', m[4]);
    else plain += m[4];
  }
  plain += src.slice(last);
  if (plain) code.appendChild(document.createTextNode(plain));
}
