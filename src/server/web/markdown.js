// A small Markdown renderer for the chat page, written here (no library). It returns HTML in
// which every character of the input is escaped: only the tags it creates itself are markup.
// Supported: fenced code blocks (```lang), indented text inside them kept verbatim, inline code,
// **bold**, *italic* / _italic_, ~~strike~~, headings (#..######), bullet and numbered lists
// (one level, plus nesting by indentation), > quotes, horizontal rules, paragraphs with line
// breaks, and links [text](url) / bare http(s) URLs whose scheme is http, https or mailto.
// Anything else stays visible as plain text.

const ESCAPES = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(text) {
  return String(text).replace(/[&<>"']/g, (c) => ESCAPES[c]);
}

// The URL if it is safe to link to (http, https, mailto; no control characters), else null.
export function safeUrl(url) {
  const u = url.trim();
  if (/[\u0000-\u001f\u007f\s]/.test(u)) return null;
  if (!/^(https?:\/\/|mailto:)/i.test(u)) return null;
  return u;
}

// Inline spans of one line of raw text. Code spans are cut out first so nothing inside them is
// interpreted; the rest is escaped, then emphasis and links are applied to the escaped text.
function inline(text) {
  const parts = text.split(/(`+[^`]*?`+)/);
  return parts
    .map((part, i) => {
      if (i % 2 === 1) {
        const m = part.match(/^(`+)([^`]*?)\1$/);
        if (m) return `<code>${escapeHtml(m[2])}</code>`;
        return escapeHtml(part);
      }
      return emphasis(part);
    })
    .join('');
}

function emphasis(raw) {
  // Links before escaping so the URL can be checked as written; text parts are escaped.
  const out = [];
  const linkRe = /\[([^\]]*)\]\(([^()\s]+)\)|(https?:\/\/[^\s<>()"'`]*[^\s<>().,;:!?"'`])/g;
  let last = 0;
  for (let m; (m = linkRe.exec(raw)); ) {
    out.push(spans(escapeHtml(raw.slice(last, m.index))));
    const label = m[1] !== undefined ? m[1] : m[3];
    const url = safeUrl(m[2] !== undefined ? m[2] : m[3]);
    if (url === null) {
      out.push(escapeHtml(m[0]));
    } else {
      out.push(`<a href="${escapeHtml(url)}" target="_blank" rel="noopener noreferrer">` +
               `${spans(escapeHtml(label))}</a>`);
    }
    last = linkRe.lastIndex;
  }
  out.push(spans(escapeHtml(raw.slice(last))));
  return out.join('');
}

// Emphasis on already escaped text (the markers * _ ~ are not touched by escaping).
function spans(s) {
  return s
    .replace(/\*\*(?=\S)([^*]*?\S)\*\*/g, '<strong>$1</strong>')
    .replace(/__(?=\S)([^_]*?\S)__/g, '<strong>$1</strong>')
    .replace(/(^|[^*\w])\*(?=\S)([^*]*?\S)\*(?![*\w])/g, '$1<em>$2</em>')
    .replace(/(^|[^_\w])_(?=\S)([^_]*?\S)_(?![_\w])/g, '$1<em>$2</em>')
    .replace(/~~(?=\S)([^~]*?\S)~~/g, '<del>$1</del>');
}

const LIST_ITEM = /^(\s*)([-*+]|\d{1,9}[.)])\s+(.*)$/;

export function renderMarkdown(source) {
  const lines = String(source).replace(/\r\n?/g, '\n').split('\n');
  const html = [];
  let paragraph = [];
  const flush = () => {
    if (paragraph.length) html.push(`<p>${paragraph.map(inline).join('<br>')}</p>`);
    paragraph = [];
  };
  for (let i = 0; i < lines.length; ) {
    const line = lines[i];
    const fence = line.match(/^\s*(`{3,}|~{3,})\s*([\w+#.-]*)/);
    if (fence) {
      flush();
      const body = [];
      let j = i + 1;
      const closing = new RegExp(`^\\s*${fence[1][0] === '`' ? '`' : '~'}{${fence[1].length},}\\s*$`);
      while (j < lines.length && !closing.test(lines[j])) body.push(lines[j++]);
      const lang = fence[2] ? ` data-lang="${escapeHtml(fence[2])}"` : '';
      const unfinished = j >= lines.length ? ' data-open="true"' : '';
      html.push(`<pre${lang}${unfinished}><code>${escapeHtml(body.join('\n'))}</code></pre>`);
      i = j + 1;
      continue;
    }
    const heading = line.match(/^(#{1,6})\s+(.*?)\s*#*\s*$/);
    if (heading) {
      flush();
      const level = heading[1].length;
      html.push(`<h${level}>${inline(heading[2])}</h${level}>`);
      i++;
      continue;
    }
    if (/^\s*([-*_])(\s*\1){2,}\s*$/.test(line)) {
      flush();
      html.push('<hr>');
      i++;
      continue;
    }
    if (/^\s*>/.test(line)) {
      flush();
      const quoted = [];
      while (i < lines.length && /^\s*>/.test(lines[i])) quoted.push(lines[i++].replace(/^\s*> ?/, ''));
      html.push(`<blockquote>${renderMarkdown(quoted.join('\n'))}</blockquote>`);
      continue;
    }
    if (LIST_ITEM.test(line)) {
      flush();
      const items = [];
      while (i < lines.length && (LIST_ITEM.test(lines[i]) || /^\s{2,}\S/.test(lines[i]))) {
        items.push(lines[i++]);
      }
      html.push(list(items));
      continue;
    }
    if (line.trim() === '') {
      flush();
    } else {
      paragraph.push(line);
    }
    i++;
  }
  flush();
  return html.join('\n');
}

// A list from its lines: items at the first line's indentation, deeper lines nested.
function list(lines) {
  const first = lines[0].match(LIST_ITEM);
  const indent = first[1].length;
  const ordered = /\d/.test(first[2]);
  const start = ordered ? parseInt(first[2], 10) : 1;
  const items = [];
  for (const line of lines) {
    const m = line.match(LIST_ITEM);
    if (m && m[1].length <= indent) {
      items.push({ text: [m[3]], children: [] });
    } else if (items.length) {
      const last = items[items.length - 1];
      if (m) last.children.push(line);
      else if (last.children.length) last.children.push(line);
      else last.text.push(line.trim());
    }
  }
  const body = items
    .map((it) => `<li>${it.text.map(inline).join('<br>')}${it.children.length ? list(it.children) : ''}</li>`)
    .join('');
  if (!ordered) return `<ul>${body}</ul>`;
  return start === 1 ? `<ol>${body}</ol>` : `<ol start="${start}">${body}</ol>`;
}
