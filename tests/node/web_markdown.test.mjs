// The chat page's Markdown renderer (src/server/web/markdown.js): the HTML it makes for the
// constructs it supports, and that no input can produce markup it did not create itself.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

// The page's file is a browser module outside any package.json: load it as module text.
const source = readFileSync(new URL('../../src/server/web/markdown.js', import.meta.url), 'utf8');
const { renderMarkdown, safeUrl } = await import(
  `data:text/javascript;charset=utf-8,${encodeURIComponent(source)}`);

test('block constructs', () => {
  assert.equal(renderMarkdown('# Title'), '<h1>Title</h1>');
  assert.equal(renderMarkdown('one\ntwo\n\nthree'), '<p>one<br>two</p>\n<p>three</p>');
  assert.equal(renderMarkdown('```python\nif a < b:\n    pass\n```'),
    '<pre data-lang="python"><code>if a &lt; b:\n    pass</code></pre>');
  assert.equal(renderMarkdown('```\nopen'), '<pre data-open="true"><code>open</code></pre>');
  assert.equal(renderMarkdown('- a\n- b'), '<ul><li>a</li><li>b</li></ul>');
  assert.equal(renderMarkdown('3. c\n4. d'), '<ol start="3"><li>c</li><li>d</li></ol>');
  assert.equal(renderMarkdown('- a\n  - b\n- c'), '<ul><li>a<ul><li>b</li></ul></li><li>c</li></ul>');
  assert.equal(renderMarkdown('> quoted'), '<blockquote><p>quoted</p></blockquote>');
  assert.equal(renderMarkdown('---'), '<hr>');
});

test('inline constructs', () => {
  assert.equal(renderMarkdown('**b** *i* _j_ ~~s~~ `x*y*`'),
    '<p><strong>b</strong> <em>i</em> <em>j</em> <del>s</del> <code>x*y*</code></p>');
  assert.equal(renderMarkdown('snake_case_name and 2*3*4'), '<p>snake_case_name and 2*3*4</p>');
  assert.equal(renderMarkdown('[docs](https://example.org/a?b=1&c=2)'),
    '<p><a href="https://example.org/a?b=1&amp;c=2" target="_blank" rel="noopener noreferrer">docs</a></p>');
  assert.equal(renderMarkdown('see https://example.org/x.'),
    '<p>see <a href="https://example.org/x" target="_blank" rel="noopener noreferrer">https://example.org/x</a>.</p>');
});

test('HTML and unsafe links stay text', () => {
  assert.equal(renderMarkdown('<script>alert(1)</script>'), '<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>');
  assert.equal(renderMarkdown('<img src=x onerror=alert(1)>'), '<p>&lt;img src=x onerror=alert(1)&gt;</p>');
  assert.equal(renderMarkdown('[x](javascript:alert(1))'), '<p>[x](javascript:alert(1))</p>');
  assert.equal(renderMarkdown('[x](data:text/html,hi)'), '<p>[x](data:text/html,hi)</p>');
  // A quote ends a bare URL: it can never leave the href attribute.
  assert.equal(renderMarkdown('[x](http://a"onmouseover="alert(1))'),
    '<p>[x](<a href="http://a" target="_blank" rel="noopener noreferrer">http://a</a>' +
    '&quot;onmouseover=&quot;alert(1))</p>');
  assert.equal(renderMarkdown('[a](https://e.org/"x)'),
    '<p><a href="https://e.org/&quot;x" target="_blank" rel="noopener noreferrer">a</a></p>');
  assert.equal(safeUrl(' JAVASCRIPT:alert(1)'), null);
  assert.equal(safeUrl('https://a b'), null);
  assert.equal(safeUrl('mailto:a@b.c'), 'mailto:a@b.c');
});

// Every tag in the output is one the renderer makes; every attribute is one it sets, and an
// href is http(s) or mailto. Random inputs mix Markdown markers with HTML-significant text.
test('no input produces foreign markup', () => {
  const pieces = ['<', '>', '"', "'", '&', '*', '_', '`', '```', '~~', '[', ']', '(', ')', '#', '-',
    '1.', '>', '\n', ' ', '  ', 'a', 'script', 'onerror=', 'javascript:', 'http://x', 'https://y.z/',
    '<img src=x>', '</p>', '<a href="', '&lt;', '\\'];
  const allowed = /^<\/?(p|br|h[1-6]|pre|code|ul|ol|li|blockquote|hr|strong|em|del|a)( (data-lang|data-open|start|href|target|rel)="[^"<>]*")*>$/;
  let seed = 12345;
  const rand = (n) => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed % n;
  };
  for (let i = 0; i < 3000; i++) {
    let input = '';
    for (let j = rand(40); j >= 0; j--) input += pieces[rand(pieces.length)];
    const html = renderMarkdown(input);
    for (const tag of html.match(/<[^>]*>?/g) || []) {
      assert.match(tag, allowed, `input ${JSON.stringify(input)} gave ${JSON.stringify(html)}`);
      const href = tag.match(/href="([^"]*)"/);
      if (href) assert.match(href[1], /^(https?:\/\/|mailto:)/i);
    }
  }
});
