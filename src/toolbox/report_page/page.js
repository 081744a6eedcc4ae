// minfer report page: draws the report document (docs/REPORT_JSON.md) embedded in #report-data.
//
// Safety: every string of the document is untrusted (keys, values, token texts and tensor names come
// from the model file). It reaches the DOM only through textContent, text nodes and setAttribute,
// never innerHTML or markup strings, so no string can become an element or run code.
//
// Speed: tables are built in DocumentFragments and inserted once; the vocabulary (up to a million
// tokens) is searched in slices of a few thousand tokens per task, so the page never freezes.
'use strict';
(function () {
  const SVG_NS = 'http://www.w3.org/2000/svg';
  const TOKEN_SLICE = 4096;     // tokens per search task: well under a millisecond each
  const TOKEN_RESULTS = 200;    // rows of #token-results at most
  const LONG_VALUE = 400;       // characters of a metadata string shown before "show all"
  // llama.cpp's token types (a Map: a type read from the document never reaches Object's prototype)
  const TOKEN_TYPES = new Map([[1, 'normal'], [2, 'unknown'], [3, 'control'], [4, 'user defined'], [5, 'unused'], [6, 'byte']]);
  const collator = new Intl.Collator('en', {numeric: true});

  // ---------------------------------------------------------------------------------------------
  // DOM and number helpers

  // h('td', {class: 'num', title: '…', data: {name: '…'}}, child, …): children are nodes or strings
  // (strings become text nodes); 'text' sets textContent. Attribute values are set as text.
  function h(tag, props, ...children) {
    const e = document.createElement(tag);
    if (props) {
      for (const k of Object.keys(props)) {
        const v = props[k];
        if (v === null || v === undefined || v === false) continue;
        if (k === 'text') e.textContent = String(v);
        else if (k === 'class') e.className = v;
        else if (k === 'data') for (const d of Object.keys(v)) { if (v[d] !== null && v[d] !== undefined) e.dataset[d] = v[d]; }
        else e.setAttribute(k, v === true ? '' : String(v));
      }
    }
    for (const c of children) if (c !== null && c !== undefined) e.append(c);
    return e;
  }
  function byId(id) { return document.getElementById(id); }

  // A number of the document: a JSON number, or "nan" / "inf" / "-inf"; null when absent or null.
  function num(v) {
    if (typeof v === 'number') return v;
    if (v === 'nan') return NaN;
    if (v === 'inf') return Infinity;
    if (v === '-inf') return -Infinity;
    return null;
  }
  // The text of a data-* attribute: the number as the document has it (String() of a parsed JSON
  // number is its shortest round-trip form, integers exact), "nan"/"inf"/"-inf" as written; null
  // (no attribute) for null.
  function numAttr(v) {
    if (typeof v === 'number') return String(v);
    if (v === 'nan' || v === 'inf' || v === '-inf') return v;
    return null;
  }
  function setNumAttr(e, name, v) {
    const s = numAttr(v);
    if (s !== null) e.setAttribute(name, s);
  }

  function fmtInt(v) {
    const n = num(v);
    return n === null ? '\u2014' : Number.isFinite(n) ? n.toLocaleString('en-US') : fmtFloat(n);
  }
  function fmtFloat(v, digits) {
    const n = num(v);
    if (n === null) return '\u2014';
    if (Number.isNaN(n)) return 'NaN';
    if (n === Infinity) return '+Inf';
    if (n === -Infinity) return '-Inf';
    if (n === 0) return '0';
    const p = digits || 4;
    const a = Math.abs(n);
    // Plain '-' (not U+2212): a value copied from the page reads back as a number.
    return a >= 1e-3 && a < 1e6 ? String(Number(n.toPrecision(p))) : n.toExponential(p - 1).replace(/\.?0+e/, 'e');
  }
  function fmtBytes(v) {
    const n = num(v);
    if (n === null || !Number.isFinite(n)) return '\u2014';
    if (Math.abs(n) < 1024) return n + ' B';
    const units = ['KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
    let x = n / 1024, u = 0;
    while (Math.abs(x) >= 1024 && u < units.length - 1) { x /= 1024; u++; }
    return (Math.abs(x) >= 100 ? x.toFixed(0) : Math.abs(x) >= 10 ? x.toFixed(1) : x.toFixed(2)) + '\u00a0' + units[u];
  }
  function fmtCount(v) {  // parameters: 8.03 B, 494 M, 12.3 K
    const n = num(v);
    if (n === null || !Number.isFinite(n)) return '\u2014';
    const steps = [[1e12, 'T'], [1e9, 'B'], [1e6, 'M'], [1e3, 'K']];
    for (const [s, u] of steps) if (Math.abs(n) >= s) return Number((n / s).toPrecision(3)) + '\u00a0' + u;
    return String(n);
  }
  function fmtBpw(v) {
    const n = num(v);
    return n === null ? '\u2014' : Number.isFinite(n) ? n.toFixed(2) : fmtFloat(n);
  }
  function shortBpw(v) {  // fits a heatmap cell: 4.50, 16.0
    const n = num(v);
    return n === null || !Number.isFinite(n) ? '' : n < 10 ? n.toFixed(2) : n.toFixed(1);
  }
  function fmtShape(shape) {
    return Array.isArray(shape) ? shape.join(' \u00d7 ') : '\u2014';
  }
  function fmtPercent(x) {
    return (x > 0 ? '+' : x < 0 ? '-' : '') + Math.abs(x).toFixed(Math.abs(x) < 10 ? 1 : 0) + '\u00a0%';
  }

  // Untrusted text made readable: control characters, zero-width characters and direction marks
  // (which could hide text or reorder a row) are shown as escapes in a styled span; with markSpaces
  // (token texts, where a space matters) every space stays a real space in a span that shows a dot.
  // Printable text stays as it is, so the DOM's text is the string itself.
  const INVISIBLE_CHARS = '\\u0000-\\u001f\\u007f-\\u00a0\\u00ad\\u034f\\u061c\\u115f\\u1160\\u17b4\\u17b5\\u180e' +
    '\\u2000-\\u200f\\u2028-\\u202f\\u205f-\\u206f\\u3000\\u3164\\ufe00-\\ufe0f\\ufeff\\ufff0-\\ufffb';
  const INVISIBLE = new RegExp('[' + INVISIBLE_CHARS + ']');
  const INVISIBLE_G = new RegExp('[' + INVISIBLE_CHARS + ']', 'g');
  const INVISIBLE_OR_SPACE_G = new RegExp('[ ' + INVISIBLE_CHARS + ']', 'g');
  const NAMED_ESCAPES = new Map([['\n', '\\n'], ['\r', '\\r'], ['\t', '\\t']]);
  function escapeOf(ch) {
    if (NAMED_ESCAPES.has(ch)) return NAMED_ESCAPES.get(ch);
    const code = ch.charCodeAt(0);
    return code < 0x100 ? '\\x' + code.toString(16).padStart(2, '0') : '\\u' + code.toString(16).padStart(4, '0');
  }
  function visibleText(s, markSpaces) {
    if (typeof s !== 'string') s = s === null || s === undefined ? '' : String(s);
    const re = markSpaces ? INVISIBLE_OR_SPACE_G : INVISIBLE_G;
    if (!(markSpaces ? s.includes(' ') || INVISIBLE.test(s) : INVISIBLE.test(s))) return document.createTextNode(s);
    const frag = document.createDocumentFragment();
    let last = 0;
    re.lastIndex = 0;
    for (let m = re.exec(s); m !== null; m = re.exec(s)) {
      if (m.index > last) frag.append(s.slice(last, m.index));
      if (m[0] === ' ') frag.append(h('span', {class: 'sp', text: ' '}));
      else frag.append(h('span', {class: 'esc', title: 'U+' + m[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, '0'), text: escapeOf(m[0])}));
      last = m.index + 1;
    }
    if (last < s.length) frag.append(s.slice(last));
    return frag;
  }
  function mono(s) { return h('span', {class: 'mono'}, visibleText(s, false)); }

  // ---------------------------------------------------------------------------------------------
  // A table: sortable by its columns' header buttons (Enter and Space work: they are buttons),
  // filterable by a text per row. Rows are built once; sorting moves them, filtering hides them.
  //
  // spec: {id, label, rows, columns: [{label, num, cls, cell(row) -> node|string|null,
  //        sort(row) -> number|string|null, title}], decorate(tr, row, index), text(row) -> string}

  function compareKeys(a, b) {
    if (typeof a === 'number' && typeof b === 'number') return a < b ? -1 : a > b ? 1 : 0;
    return collator.compare(String(a), String(b));
  }
  function missing(k) { return k === null || k === undefined || (typeof k === 'number' && Number.isNaN(k)); }

  function dataTable(spec) {
    const table = h('table', {class: 'data', id: spec.id || null, 'aria-label': spec.label || null});
    const headRow = h('tr');
    const ths = spec.columns.map((col, ci) => {
      const th = h('th', {scope: 'col', class: col.num ? 'num' : null, title: col.title || null});
      if (col.sort) {
        const b = h('button', {type: 'button', class: 'sort', text: col.label});
        b.addEventListener('click', () => sortBy(ci));
        th.append(b);
      } else {
        th.textContent = col.label;
      }
      headRow.append(th);
      return th;
    });
    const tbody = h('tbody');
    table.append(h('thead', null, headRow), tbody);

    const rows = spec.rows;
    const trs = new Array(rows.length);
    const frag = document.createDocumentFragment();
    for (let i = 0; i < rows.length; i++) {
      const row = rows[i];
      const tr = document.createElement('tr');
      for (const col of spec.columns) {
        const td = document.createElement('td');
        const cls = (col.num ? 'num ' : '') + (col.cls || '');
        if (cls) td.className = cls.trim();
        const v = col.cell(row);
        if (v !== null && v !== undefined) td.append(v);
        tr.append(td);
      }
      if (spec.decorate) spec.decorate(tr, row, i);
      trs[i] = tr;
      frag.append(tr);
    }
    tbody.append(frag);

    let sorted = {column: -1, dir: 0};
    function sortBy(ci, dir) {
      const col = spec.columns[ci];
      // A first click sorts numbers largest first (the question is usually "which is biggest"),
      // text A to Z; another click reverses.
      if (!dir) dir = sorted.column === ci ? -sorted.dir : col.num ? -1 : 1;
      const keyed = rows.map((r, i) => ({k: col.sort(r), i}));
      keyed.sort((a, b) => {
        const ma = missing(a.k), mb = missing(b.k);
        if (ma || mb) return ma === mb ? a.i - b.i : ma ? 1 : -1;  // missing values last, either way
        return dir * compareKeys(a.k, b.k) || a.i - b.i;
      });
      const f = document.createDocumentFragment();
      for (const {i} of keyed) f.append(trs[i]);
      tbody.append(f);
      ths.forEach((th, j) => { if (j === ci) th.setAttribute('aria-sort', dir > 0 ? 'ascending' : 'descending'); else th.removeAttribute('aria-sort'); });
      sorted = {column: ci, dir};
    }

    let texts = null;  // lower-cased search texts, made on the first filter
    function filter(query, keep) {
      const q = (query || '').toLowerCase();
      if (q && !texts) texts = rows.map((r) => (spec.text ? spec.text(r) : '').toLowerCase());
      let shown = 0;
      for (let i = 0; i < rows.length; i++) {
        const visible = (!q || texts[i].includes(q)) && (!keep || keep(rows[i]));
        trs[i].hidden = !visible;
        if (visible) shown++;
      }
      return shown;
    }
    return {table, tbody, trs, sortBy, filter};
  }

  // A filter input driving a table, with its "N of M" line.
  function connectFilter(input, countEl, table, total, noun, keep) {
    function apply() {
      const shown = table.filter(input.value, keep ? keep() : null);
      countEl.textContent = shown === total ? fmtInt(total) + ' ' + noun : fmtInt(shown) + ' of ' + fmtInt(total) + ' ' + noun;
    }
    input.addEventListener('input', apply);
    apply();
    return apply;
  }

  // A histogram as one SVG path (one element per row instead of one per bin: a page of a thousand
  // tensors stays light). Bar heights are linear in the counts.
  function histogramSvg(hist, width, height) {
    const counts = hist && Array.isArray(hist.counts) ? hist.counts : null;
    if (!counts || counts.length === 0) return null;
    const svg = document.createElementNS(SVG_NS, 'svg');
    svg.setAttribute('class', 'hist');
    svg.setAttribute('width', width);
    svg.setAttribute('height', height);
    svg.setAttribute('viewBox', '0 0 ' + width + ' ' + height);
    svg.setAttribute('role', 'img');
    const lo = num(hist.lo), w = num(hist.width);
    const hi = lo !== null && w !== null ? lo + w * counts.length : null;
    const label = 'histogram of ' + counts.length + ' bins from ' + fmtFloat(lo) + ' to ' + fmtFloat(hi);
    svg.setAttribute('aria-label', label);
    const title = document.createElementNS(SVG_NS, 'title');
    title.textContent = label;
    svg.append(title);
    let max = 0;
    for (const c of counts) if (typeof c === 'number' && c > max) max = c;
    const bw = width / counts.length;
    let d = '';
    if (max > 0) {
      for (let i = 0; i < counts.length; i++) {
        const c = counts[i];
        if (!(c > 0)) continue;
        const bh = Math.max(1, (c / max) * (height - 1));
        d += 'M' + (i * bw).toFixed(2) + ' ' + height + 'h' + bw.toFixed(2) + 'v' + (-bh).toFixed(2) + 'h' + (-bw).toFixed(2) + 'z';
      }
    }
    const path = document.createElementNS(SVG_NS, 'path');
    path.setAttribute('d', d);
    svg.append(path);
    if (lo !== null && hi !== null && Number.isFinite(lo) && Number.isFinite(hi) && lo < 0 && hi > 0) {
      const x = (((0 - lo) / (hi - lo)) * width).toFixed(2);  // where zero falls
      const line = document.createElementNS(SVG_NS, 'line');
      line.setAttribute('x1', x); line.setAttribute('x2', x);
      line.setAttribute('y1', '0'); line.setAttribute('y2', String(height));
      svg.append(line);
    }
    return svg;
  }

  // A colour ramp from cool (low) to hot (high), for the layer heatmap and its legend.
  const BPW_RANGE = [1.5, 16];
  const RAMP = [[0, [36, 59, 143]], [0.25, [47, 134, 181]], [0.5, [95, 192, 160]], [0.75, [242, 212, 92]], [1, [217, 67, 47]]];
  function rampColour(t) {
    const x = Math.min(1, Math.max(0, t));
    for (let i = 1; i < RAMP.length; i++) {
      if (x <= RAMP[i][0]) {
        const [t0, c0] = RAMP[i - 1], [t1, c1] = RAMP[i];
        const f = (x - t0) / (t1 - t0);
        return c0.map((c, j) => Math.round(c + f * (c1[j] - c)));
      }
    }
    return RAMP[RAMP.length - 1][1];
  }
  function rgb(c) { return 'rgb(' + c.join(',') + ')'; }
  function textOn(c) { return 0.299 * c[0] + 0.587 * c[1] + 0.114 * c[2] > 150 ? '#111' : '#fff'; }

  // ---------------------------------------------------------------------------------------------
  // Sections

  function drawSummary(doc) {
    const body = byId('summary').querySelector('.section-body');
    const models = Array.isArray(doc.models) ? doc.models : [];
    const compare = doc.mode === 'compare' && doc.compare && models.length >= 2;
    const ref = compare ? models[doc.compare.reference] || models[0] : null;
    const cmp = compare ? models[doc.compare.compared] || models[1] : null;
    const shown = compare ? [ref, cmp] : models.slice(0, 1);
    const fields = [
      ['location', 'File', (m) => mono(m.location)],
      ['name', 'Name', (m) => visibleText(m.name)],
      ['architecture', 'Architecture', (m) => visibleText(m.architecture)],
      ['parameters', 'Parameters', (m) => withExact(fmtCount(m.parameters), m.parameters), true],
      ['file_bytes', 'File size', (m) => withExact(fmtBytes(m.file_bytes), m.file_bytes, ' bytes' + (m.parts > 1 ? ' in ' + m.parts + ' files' : '')), true],
      ['tensor_bytes', 'Tensor bytes', (m) => withExact(fmtBytes(m.tensor_bytes), m.tensor_bytes, ' bytes'), true],
      ['bits_per_weight', 'Bits per weight', (m) => fmtBpw(m.bits_per_weight), true],
      ['file_type', 'File type', (m) => visibleText(m.file_type)],
      ['context_length', 'Context length', (m) => fmtInt(m.context_length), true],
      ['block_count', 'Blocks', (m) => fmtInt(m.block_count), true],
      ['tokenizer', 'Tokenizer', (m) => visibleText(m.tokenizer)],
      ['vocab_size', 'Vocabulary', (m) => fmtInt(m.vocab_size), true],
      ['tensor_count', 'Tensors', (m) => fmtInt(m.tensor_count), true],
      ['kv_count', 'Metadata keys', (m) => fmtInt(m.kv_count), true],
      ['version', 'GGUF version', (m) => fmtInt(m.version)],
      ['alignment', 'Alignment', (m) => fmtInt(m.alignment)],
    ];
    function withExact(text, v, unit) {
      const n = num(v);
      if (n === null || !Number.isFinite(n) || n < 1000) return text;
      return h('span', null, text, h('span', {class: 'note', text: ' (' + n.toLocaleString('en-US') + (unit || '') + ')'}));
    }
    const table = h('table', {class: 'data summary', 'aria-label': 'Summary'});
    const head = h('tr', null, h('th', {scope: 'col', text: ''}));
    if (compare) head.append(h('th', {scope: 'col', text: 'Reference (A)'}), h('th', {scope: 'col', text: 'Compared (B)'}), h('th', {scope: 'col', class: 'num', text: 'B vs A'}));
    else head.append(h('th', {scope: 'col', text: 'Model'}));
    const tbody = h('tbody');
    for (const [key, label, show, numeric] of fields) {
      const tr = h('tr', {data: {field: key}}, h('th', {scope: 'row', text: label}));
      const values = shown.map((m) => (m ? m[key] : null));
      for (const m of shown) {
        const v = m ? m[key] : null;
        const td = h('td', null, v === null || v === undefined ? '\u2014' : show(m));
        if (v !== null && v !== undefined) td.dataset.value = String(v);
        tr.append(td);
      }
      if (compare) {
        if (!sameValue(values[0], values[1])) tr.classList.add('differs');
        const a = num(values[0]), b = num(values[1]);
        let delta = '';
        if (numeric && a !== null && b !== null && Number.isFinite(a) && Number.isFinite(b) && a !== 0 && key !== 'block_count') {
          delta = a === b ? 'same' : fmtPercent(((b - a) / a) * 100);
        }
        tr.append(h('td', {class: 'num', text: delta}));
      }
      tbody.append(tr);
    }
    table.append(h('thead', null, head), tbody);
    body.append(h('div', {class: 'table-wrap'}, table));

    if (compare) {
      const c = doc.compare;
      const errors = Array.isArray(c.errors) ? c.errors : [];
      const outliers = errors.filter((e) => e.outlier === true).length;
      const facts = h('p', {class: 'note', id: 'compare-facts'});
      facts.append(fmtInt(errors.length) + ' tensors compared \u00b7 ' + fmtInt(outliers) + ' outlier' + (outliers === 1 ? '' : 's') +
        ' \u00b7 ' + fmtInt(len(c.only_in_reference)) + ' only in the reference \u00b7 ' + fmtInt(len(c.only_in_compared)) +
        ' only in the compared model \u00b7 ' + fmtInt(len(c.shape_mismatch)) + ' shape mismatch' + (len(c.shape_mismatch) === 1 ? '' : 'es'));
      if (c.imatrix) facts.append(' \u00b7 importance: ', mono(c.imatrix));
      body.append(facts);
    }
  }
  function len(a) { return Array.isArray(a) ? a.length : 0; }
  function sameValue(a, b) { return a === b || (num(a) !== null && num(b) !== null && Object.is(num(a), num(b))); }

  function drawMetadata(doc) {
    const kvs = Array.isArray(doc.metadata) ? doc.metadata : [];
    const columns = [
      {label: 'Key', cls: 'name', cell: (kv) => mono(kv.key), sort: (kv) => kv.key},
      {label: 'Type', cell: (kv) => visibleText(kv.type), sort: (kv) => kv.type},
      {label: 'Value', cls: 'value', cell: metadataValue},
    ];
    const table = dataTable({
      label: 'Metadata', rows: kvs, columns,
      decorate: (tr, kv) => { tr.dataset.key = String(kv.key); if (Array.isArray(kv.items) || typeof kv.count === 'number') tr.dataset.count = String(kv.count); },
      text: (kv) => String(kv.key) + '\n' + String(kv.type) + '\n' + (kv.value === null || kv.value === undefined ? '' : String(kv.value)),
    });
    byId('metadata-table').append(table.table);
    connectFilter(byId('metadata-filter'), byId('metadata-count'), table, kvs.length, 'keys');
  }
  function metadataValue(kv) {
    const text = kv.value === null || kv.value === undefined ? '' : String(kv.value);
    const isArray = typeof kv.count === 'number' || Array.isArray(kv.items);
    if (!isArray) {
      if (text.length <= LONG_VALUE) return visibleText(text, false);
      // A long string (a chat template, a licence) is shown whole on request.
      const preview = h('div', null, visibleText(text.slice(0, LONG_VALUE) + '\u2026', false));
      const full = h('details', null, h('summary', {text: 'show all ' + fmtInt(text.length) + ' characters'}));
      full.addEventListener('toggle', () => {
        if (full.open && full.childNodes.length === 1) full.append(h('div', null, visibleText(text, false)));
        preview.hidden = full.open;
      });
      return h('div', null, preview, full);
    }
    const items = Array.isArray(kv.items) ? kv.items : [];
    const count = typeof kv.count === 'number' ? kv.count : items.length;
    const wrap = h('div', null, visibleText(text, false));
    if (items.length === 0 && count === 0) return wrap;
    // The items are drawn when first opened: a vocabulary's 1024 capped items for each of several
    // arrays would otherwise be thousands of elements nobody looks at.
    const details = h('details', null, h('summary', {text: fmtInt(count) + ' item' + (count === 1 ? '' : 's') + (items.length < count ? ', first ' + fmtInt(items.length) + ' here' : '')}));
    details.addEventListener('toggle', () => {
      if (!details.open || details.querySelector('ol')) return;
      const ol = h('ol', {start: '0', class: 'token-text'});
      const frag = document.createDocumentFragment();
      for (const item of items) frag.append(h('li', null, visibleText(item, true)));
      const more = count - items.length;
      if (kv.truncated === true || more > 0) frag.append(h('li', {class: 'more', text: '\u2026 ' + fmtInt(Math.max(more, 0)) + ' more'}));
      ol.append(frag);
      details.append(ol);
    });
    wrap.append(details);
    return wrap;
  }

  function drawTensors(doc) {
    const tensors = Array.isArray(doc.tensors) ? doc.tensors : [];
    const values = doc.values === true;
    const st = (t) => (t.stats && typeof t.stats === 'object' ? t.stats : null);
    const stat = (key) => (t) => (st(t) ? num(st(t)[key]) : null);
    const columns = [
      {label: 'Name', cls: 'name', cell: (t) => mono(t.name), sort: (t) => t.name},
      {label: 'Type', cell: (t) => visibleText(t.type), sort: (t) => t.type},
      // the element count as the shape's tooltip, and the layer by the name's numeric order: the
      // table stays narrow enough for the statistics beside it
      {label: 'Shape', cls: 'mono', cell: (t) => h('span', {title: fmtInt(t.elements) + ' elements', text: fmtShape(t.shape)}), sort: (t) => num(t.elements)},
      {label: 'Bytes', num: true, cell: (t) => h('span', {title: fmtInt(t.bytes) + ' bytes', text: fmtBytes(t.bytes)}), sort: (t) => num(t.bytes)},
      {label: 'Bits/weight', num: true, cell: (t) => fmtBpw(t.bits_per_weight), sort: (t) => num(t.bits_per_weight)},
      {label: 'Role', cell: (t) => visibleText(t.role), sort: (t) => t.role},
    ];
    if (tensors.some((t) => typeof t.part === 'number' && t.part > 1)) {
      columns.push({label: 'Part', num: true, cell: (t) => fmtInt(t.part), sort: (t) => num(t.part)});
    }
    if (values) {
      const statCell = (key) => (t) => {
        const v = st(t) ? st(t)[key] : null;
        return v === null || v === undefined ? null : h('span', {title: numAttr(v), text: fmtFloat(v)});
      };
      const countCell = (key) => (t) => {
        const v = st(t) ? num(st(t)[key]) : null;
        if (v === null) return null;
        return v > 0 ? h('span', {class: 'flag', text: fmtInt(v)}) : '0';
      };
      columns.push(
        {label: 'Min', num: true, cell: statCell('min'), sort: stat('min')},
        {label: 'Max', num: true, cell: statCell('max'), sort: stat('max')},
        {label: 'Mean', num: true, cell: statCell('mean'), sort: stat('mean')},
        {label: 'Std', num: true, cell: statCell('std'), sort: stat('std')},
        {label: 'NaN', num: true, cell: countCell('nan'), sort: stat('nan')},
        {label: 'Inf', num: true, cell: countCell('inf'), sort: stat('inf')},
        {label: 'Zeros', num: true, cell: (t) => (st(t) ? fmtInt(st(t).zeros) : null), sort: stat('zeros')},
        {label: 'Histogram', cell: (t) => (st(t) ? histogramSvg(st(t).histogram, 96, 22) : null)},
      );
    }
    const table = dataTable({
      label: 'Tensors', rows: tensors, columns,
      decorate: (tr, t) => {
        tr.dataset.name = String(t.name);
        tr.dataset.type = String(t.type);
        setNumAttr(tr, 'data-bytes', t.bytes);
        const s = st(t);
        if (values && s) {
          setNumAttr(tr, 'data-min', s.min);
          setNumAttr(tr, 'data-max', s.max);
          setNumAttr(tr, 'data-mean', s.mean);
          setNumAttr(tr, 'data-std', s.std);
          setNumAttr(tr, 'data-nan', s.nan);
          setNumAttr(tr, 'data-inf', s.inf);
        }
      },
      text: (t) => String(t.name) + '\n' + String(t.type) + '\n' + String(t.role),
    });
    byId('tensors-table').append(table.table);
    connectFilter(byId('tensors-filter'), byId('tensors-count'), table, tensors.length, 'tensors');
  }

  // The layer x role heatmap. Cells are one focusable grid: Tab enters it at one cell (roving
  // tabindex), the arrow keys, Home and End move, Enter or Space (or a click) selects.
  function drawLayers(doc, tensorIndex, errorsByName) {
    const layers = doc.layers && typeof doc.layers === 'object' ? doc.layers : {count: 0, roles: [], cells: []};
    const cells = Array.isArray(layers.cells) ? layers.cells : [];
    const roles = Array.isArray(layers.roles) ? layers.roles.slice() : [];
    for (const c of cells) if (!roles.includes(c.role)) roles.push(c.role);
    let rowCount = typeof layers.count === 'number' ? layers.count : 0;
    for (const c of cells) if (typeof c.layer === 'number' && c.layer + 1 > rowCount) rowCount = c.layer + 1;

    const compare = doc.mode === 'compare';
    // Colour: bits per weight for one model; for a comparison the error, on a log scale (errors span
    // orders of magnitude): nmse when the cells have it, else rmse.
    const useNmse = compare && cells.some((c) => num(c.nmse) !== null);
    const measure = !compare ? 'bits_per_weight' : useNmse ? 'nmse' : 'rmse';
    const measureLabel = {bits_per_weight: 'bits per weight (log scale)', nmse: 'NMSE (log scale)', rmse: 'RMSE (log scale)'}[measure];
    const valueOf = (c) => num(c[measure]);
    // Both on a log scale. Bits per weight on a fixed one, 1.5 to 16 (f32's 32 clamped): a type has
    // the same colour in every report, and the quantized types, not the f32 norms, get the range.
    // Errors span orders of magnitude and have no natural bounds: the document's own range.
    let lo = BPW_RANGE[0], hi = BPW_RANGE[1];
    if (compare) {
      lo = Infinity; hi = -Infinity;
      for (const c of cells) {
        const v = valueOf(c);
        if (v === null || !Number.isFinite(v) || v <= 0) continue;
        if (v < lo) lo = v;
        if (v > hi) hi = v;
      }
    }
    const scale = (v) => {
      if (v === null || Number.isNaN(v) || !(lo <= hi)) return null;
      if (v === Infinity) return 1;
      if (v <= 0) return 0;
      return hi === lo ? 0.5 : (Math.log(v) - Math.log(lo)) / (Math.log(hi) - Math.log(lo));
    };

    byId('layers-note').textContent = cells.length === 0
      ? 'No block tensors (blk.N.*) in this model.'
      : fmtInt(rowCount) + ' layers \u00d7 ' + fmtInt(roles.length) + ' roles, coloured by ' + measureLabel + '. Select a cell for its tensors.';

    const grid = new Array(rowCount);  // grid[layer][roleIndex] = td of a cell
    for (let i = 0; i < rowCount; i++) grid[i] = new Array(roles.length).fill(null);
    const table = h('table', {class: 'heatmap', role: 'grid', 'aria-label': 'Layers by role, coloured by ' + measureLabel});
    const head = h('tr', null, h('th', {scope: 'col', text: 'layer'}));
    for (const r of roles) head.append(h('th', {scope: 'col', title: String(r)}, visibleText(r)));
    const byPos = new Map();
    cells.forEach((c, i) => byPos.set(c.layer + '\u0000' + c.role, i));
    const tbody = h('tbody');
    const frag = document.createDocumentFragment();
    let first = null;
    for (let layer = 0; layer < rowCount; layer++) {
      const tr = h('tr', null, h('th', {scope: 'row', text: String(layer)}));
      roles.forEach((role, ri) => {
        const index = byPos.get(layer + '\u0000' + role);
        if (index === undefined) { tr.append(h('td', {class: 'empty'})); return; }
        const c = cells[index];
        const td = h('td', {class: 'cell', tabindex: '-1', 'aria-selected': 'false'});
        td.dataset.layer = String(c.layer);
        td.dataset.role = String(c.role);
        td.dataset.index = String(index);
        setNumAttr(td, 'data-bytes', c.bytes);
        setNumAttr(td, 'data-bpw', c.bits_per_weight);
        if (compare) { setNumAttr(td, 'data-rmse', c.rmse); setNumAttr(td, 'data-nmse', c.nmse); }
        const t = scale(valueOf(c));
        if (t === null) {
          td.classList.add('novalue');
        } else {
          const colour = rampColour(t);
          td.style.background = rgb(colour);
          td.style.color = textOn(colour);
        }
        if (!compare) td.textContent = shortBpw(c.bits_per_weight);
        const count = Array.isArray(c.tensors) ? c.tensors.length : 0;
        td.title = 'layer ' + c.layer + ' \u00b7 ' + c.role + '\n' + count + ' tensor' + (count === 1 ? '' : 's') + ' \u00b7 ' + fmtBytes(c.bytes) +
          ' \u00b7 ' + fmtBpw(c.bits_per_weight) + ' bits/weight' + (compare ? '\nRMSE ' + fmtFloat(c.rmse) + ' \u00b7 NMSE ' + fmtFloat(c.nmse) : '');
        grid[layer][ri] = td;
        if (!first) first = td;
        tr.append(td);
      });
      frag.append(tr);
    }
    tbody.append(frag);
    table.append(h('thead', null, head), tbody);
    const holder = byId('heatmap');
    holder.append(table);
    if (first) first.tabIndex = 0;

    // legend
    const legend = byId('heatmap-legend');
    if (cells.length > 0 && lo <= hi) {
      const stops = RAMP.map(([t, c]) => rgb(c) + ' ' + (t * 100) + '%').join(', ');
      legend.append(h('div', {text: measureLabel}), h('div', {class: 'ramp', style: 'background: linear-gradient(to right, ' + stops + ')'}),
        h('div', {class: 'ends'}, h('span', {text: (compare ? '' : '\u2264 ') + fmtFloat(lo)}), h('span', {text: (compare ? '' : '\u2265 ') + fmtFloat(hi)})));
      if (compare) legend.append(h('div', {class: 'note', text: 'Hatched or uncoloured: no value.'}));
    }

    let current = first, selected = null;
    function focusCell(td) {
      if (!td) return;
      if (current) current.tabIndex = -1;
      current = td;
      td.tabIndex = 0;
      td.focus();
    }
    function select(td) {
      if (selected) selected.setAttribute('aria-selected', 'false');
      selected = td;
      td.setAttribute('aria-selected', 'true');
      showLayerDetail(cells[Number(td.dataset.index)], tensorIndex, errorsByName);
    }
    function position(td) {
      const layer = Number(td.dataset.layer);
      return [layer, grid[layer].indexOf(td)];
    }
    function step(td, dl, dr) {
      let [l, r] = position(td);
      for (;;) {
        l += dl; r += dr;
        if (l < 0 || l >= rowCount || r < 0 || r >= roles.length) return null;
        if (grid[l][r]) return grid[l][r];
      }
    }
    table.addEventListener('click', (e) => {
      const td = e.target.closest('td.cell');
      if (!td) return;
      focusCell(td);
      select(td);
    });
    table.addEventListener('keydown', (e) => {
      const td = e.target.closest('td.cell');
      if (!td) return;
      let next = null;
      const [l] = position(td);
      switch (e.key) {
        case 'ArrowRight': next = step(td, 0, 1); break;
        case 'ArrowLeft': next = step(td, 0, -1); break;
        case 'ArrowDown': next = step(td, 1, 0); break;
        case 'ArrowUp': next = step(td, -1, 0); break;
        case 'Home': next = grid[l].find((x) => x) || null; break;
        case 'End': next = grid[l].slice().reverse().find((x) => x) || null; break;
        case 'Enter': case ' ': e.preventDefault(); select(td); return;
        default: return;
      }
      e.preventDefault();
      focusCell(next);
    });

    drawBreakdown('by-type', 'type', doc.by_type, 'Bytes by type');
    drawBreakdown('by-role', 'role', doc.by_role, 'Bytes by role');
  }

  function showLayerDetail(cell, byName, errorsByName) {
    const detail = byId('layer-detail');
    detail.textContent = '';
    const names = Array.isArray(cell.tensors) ? cell.tensors : [];
    const rows = names.map((n) => ({name: n, t: byName.get(n) || null, e: errorsByName ? errorsByName.get(n) || null : null}));
    const columns = [
      {label: 'Name', cls: 'name', cell: (r) => mono(r.name), sort: (r) => r.name},
      {label: 'Type', cell: (r) => (r.t ? visibleText(r.t.type) : '\u2014'), sort: (r) => (r.t ? r.t.type : null)},
      {label: 'Shape', cls: 'mono', cell: (r) => (r.t ? fmtShape(r.t.shape) : '\u2014')},
      {label: 'Bytes', num: true, cell: (r) => (r.t ? fmtBytes(r.t.bytes) : '\u2014'), sort: (r) => (r.t ? num(r.t.bytes) : null)},
      {label: 'Bits/weight', num: true, cell: (r) => (r.t ? fmtBpw(r.t.bits_per_weight) : '\u2014'), sort: (r) => (r.t ? num(r.t.bits_per_weight) : null)},
    ];
    if (errorsByName) {
      columns.push(
        {label: 'Reference type', cell: (r) => (r.e ? visibleText(r.e.reference_type) : '\u2014')},
        {label: 'RMSE', num: true, cell: (r) => (r.e ? fmtFloat(r.e.rmse) : '\u2014'), sort: (r) => (r.e ? num(r.e.rmse) : null)},
        {label: 'NMSE', num: true, cell: (r) => (r.e ? fmtFloat(r.e.nmse) : '\u2014'), sort: (r) => (r.e ? num(r.e.nmse) : null)},
        {label: 'Cosine', num: true, cell: (r) => (r.e ? fmtFloat(r.e.cosine, 6) : '\u2014'), sort: (r) => (r.e ? num(r.e.cosine) : null)},
      );
    }
    const table = dataTable({label: 'Tensors of layer ' + cell.layer + ' ' + cell.role, rows, columns,
      decorate: (tr, r) => { tr.dataset.name = String(r.name); if (r.e && r.e.outlier === true) tr.classList.add('outlier'); }});
    const facts = fmtInt(names.length) + ' tensor' + (names.length === 1 ? '' : 's') + ' \u00b7 ' + fmtBytes(cell.bytes) + ' \u00b7 ' +
      fmtInt(cell.elements) + ' elements \u00b7 ' + fmtBpw(cell.bits_per_weight) + ' bits/weight' +
      (errorsByName ? ' \u00b7 RMSE ' + fmtFloat(cell.rmse) + ' \u00b7 NMSE ' + fmtFloat(cell.nmse) : '');
    detail.dataset.layer = String(cell.layer);
    detail.dataset.role = String(cell.role);
    detail.append(h('h3', null, 'Layer ' + cell.layer + ' \u00b7 ', visibleText(cell.role)), h('p', {class: 'note', text: facts}),
      h('div', {class: 'table-wrap'}, table.table));
  }

  function drawBreakdown(id, key, rows, label) {
    const list = Array.isArray(rows) ? rows : [];
    let total = 0;
    for (const r of list) total += num(r.bytes) || 0;
    const columns = [
      {label: key === 'type' ? 'Type' : 'Role', cell: (r) => visibleText(r[key]), sort: (r) => r[key]},
      {label: 'Tensors', num: true, cell: (r) => fmtInt(r.tensors), sort: (r) => num(r.tensors)},
      {label: 'Bytes', num: true, sort: (r) => num(r.bytes), cell: (r) => {
        const share = total > 0 ? (num(r.bytes) || 0) / total : 0;
        return h('span', {title: fmtInt(r.bytes) + ' bytes'}, h('span', {class: 'bar', style: 'width: ' + Math.round(share * 80) + 'px'}), fmtBytes(r.bytes));
      }},
      {label: 'Share', num: true, cell: (r) => (total > 0 ? ((100 * (num(r.bytes) || 0)) / total).toFixed(1) + '\u00a0%' : '\u2014'), sort: (r) => num(r.bytes)},
      {label: 'Elements', num: true, cell: (r) => fmtInt(r.elements), sort: (r) => num(r.elements)},
      {label: 'Bits/weight', num: true, cell: (r) => (num(r.elements) > 0 ? fmtBpw((8 * num(r.bytes)) / num(r.elements)) : '\u2014'),
        sort: (r) => (num(r.elements) > 0 ? (8 * num(r.bytes)) / num(r.elements) : null)},
    ];
    const table = dataTable({label, rows: list, columns, decorate: (tr, r) => {
      tr.dataset[key] = String(r[key]);
      setNumAttr(tr, 'data-tensors', r.tensors);
      setNumAttr(tr, 'data-bytes', r.bytes);
      setNumAttr(tr, 'data-elements', r.elements);
    }});
    byId(id).append(table.table);
  }

  function drawErrors(doc) {
    const c = doc.compare;
    const errors = Array.isArray(c.errors) ? c.errors : [];
    const models = Array.isArray(doc.models) ? doc.models : [];
    const ref = models[c.reference], cmp = models[c.compared];
    const note = byId('errors-note');
    note.append('Each tensor of B (', mono(cmp ? cmp.location : 'B'), ') against the same tensor of the reference A (', mono(ref ? ref.location : 'A'),
      '). NMSE = \u2211(a\u2212b)\u00b2 / \u2211a\u00b2. Outliers (marked) have an NMSE far above their role\u2019s. Sort by a column to find the worst.');
    const hasWeighted = errors.some((e) => num(e.weighted_rmse) !== null);
    const columns = [
      {label: 'Name', cls: 'name', sort: (e) => e.name, cell: (e) => {
        const s = h('span', null, mono(e.name));
        if (e.outlier === true) s.append(h('span', {class: 'flag', text: 'outlier'}));
        return s;
      }},
      {label: 'Role', cell: (e) => visibleText(e.role), sort: (e) => e.role},
      {label: 'A \u2192 B', title: 'type in the reference \u2192 type in the compared model', sort: (e) => String(e.compared_type) + '\u0000' + String(e.reference_type),
        cell: (e) => h('span', null, visibleText(e.reference_type), ' \u2192 ', visibleText(e.compared_type))},
      {label: 'RMSE', num: true, cell: (e) => numCell(e.rmse), sort: (e) => num(e.rmse)},
      {label: 'NMSE', num: true, cell: (e) => numCell(e.nmse), sort: (e) => num(e.nmse)},
      {label: 'Cosine', num: true, cell: (e) => numCell(e.cosine, 6), sort: (e) => num(e.cosine)},
      {label: 'Max |a\u2212b|', num: true, cell: (e) => numCell(e.max_abs), sort: (e) => num(e.max_abs)},
      {label: 'at', num: true, title: 'flat index (ggml element order) of the largest |a\u2212b|', cell: (e) => fmtInt(e.max_abs_index), sort: (e) => num(e.max_abs_index)},
      {label: 'Rel. error', num: true, cell: (e) => numCell(e.relative_error), sort: (e) => num(e.relative_error)},
    ];
    if (hasWeighted) columns.push({label: 'Weighted RMSE', num: true, cell: (e) => numCell(e.weighted_rmse), sort: (e) => num(e.weighted_rmse)});
    columns.push({label: 'Non-finite', num: true, title: 'elements finite in one model and not in the other', sort: (e) => num(e.non_finite_mismatches), cell: (e) => {
      const v = num(e.non_finite_mismatches);
      return v > 0 ? h('span', {class: 'flag', text: fmtInt(v)}) : fmtInt(v);
    }});
    const table = dataTable({
      id: 'errors-list', label: 'Errors', rows: errors, columns,
      decorate: (tr, e) => {
        tr.dataset.name = String(e.name);
        setNumAttr(tr, 'data-rmse', e.rmse);
        setNumAttr(tr, 'data-nmse', e.nmse);
        setNumAttr(tr, 'data-cosine', e.cosine);
        setNumAttr(tr, 'data-maxabs', e.max_abs);
        if (e.outlier === true) { tr.classList.add('outlier'); tr.dataset.outlier = '1'; }
      },
      text: (e) => String(e.name) + '\n' + String(e.role) + '\n' + String(e.reference_type) + '\n' + String(e.compared_type),
    });
    byId('errors-table').append(table.table);
    const outliersOnly = byId('errors-outliers-only');
    const apply = connectFilter(byId('errors-filter'), byId('errors-count'), table, errors.length, 'tensors',
      () => (outliersOnly.checked ? (e) => e.outlier === true : null));
    outliersOnly.addEventListener('change', apply);

    drawNameList('only-in-reference', c.only_in_reference);
    drawNameList('only-in-compared', c.only_in_compared);
    const mismatches = Array.isArray(c.shape_mismatch) ? c.shape_mismatch : [];
    const shapes = dataTable({
      id: 'shape-mismatch', label: 'Shapes that differ', rows: mismatches,
      columns: [
        {label: 'Name', cls: 'name', cell: (m) => mono(m.name), sort: (m) => m.name},
        {label: 'Reference shape', cls: 'mono', cell: (m) => fmtShape(m.reference_shape)},
        {label: 'Compared shape', cls: 'mono', cell: (m) => fmtShape(m.compared_shape)},
      ],
      decorate: (tr, m) => { tr.dataset.name = String(m.name); },
    });
    byId('shape-mismatch-wrap').append(shapes.table);
    if (mismatches.length === 0) byId('shape-mismatch-wrap').append(h('p', {class: 'note', text: 'None.'}));
  }
  function numCell(v, digits) {
    if (v === null || v === undefined) return '\u2014';
    return h('span', {title: numAttr(v), text: fmtFloat(v, digits)});
  }
  function drawNameList(id, names) {
    const ul = byId(id);
    const list = Array.isArray(names) ? names : [];
    const frag = document.createDocumentFragment();
    for (const n of list) frag.append(h('li', {data: {name: String(n)}}, mono(n)));
    ul.append(frag);
    if (list.length === 0) ul.after(h('p', {class: 'note', text: 'None.'}));
  }

  // ---------------------------------------------------------------------------------------------
  // Tokens: a search over the whole vocabulary in slices, one task each (a MessageChannel message:
  // unlike setTimeout it is not clamped to 4 ms after a few nested calls). A new query bumps the
  // generation, and the slices of the old one stop at their next turn.

  function drawTokens(doc) {
    const tokens = doc.tokens && typeof doc.tokens === 'object' ? doc.tokens : null;
    const results = byId('token-results');
    const tbody = results.tBodies[0];
    const input = byId('token-search');
    const countEl = byId('token-count');
    const template = byId('chat-template');
    if (typeof doc.chat_template === 'string') {
      template.textContent = doc.chat_template;
    } else {
      byId('chat-template-note').textContent = 'The model has no chat template (tokenizer.chat_template).';
    }
    if (!tokens || !Array.isArray(tokens.texts)) {
      byId('tokens-note').textContent = 'The model has no vocabulary (tokenizer.ggml.tokens).';
      input.disabled = true;
      results.dataset.complete = '1';
      results.dataset.matches = '0';
      return;
    }
    const texts = tokens.texts;
    const types = Array.isArray(tokens.types) ? tokens.types : null;
    const scores = Array.isArray(tokens.scores) ? tokens.scores : null;
    const note = byId('tokens-note');
    note.textContent = fmtInt(tokens.count) + ' tokens' + (tokens.model ? ' (' + tokens.model + ' tokenizer)' : '') +
      (tokens.truncated === true ? '; the report holds the first ' + fmtInt(texts.length) + ' of them.' : '.') +
      ' A query in lower case matches any case; an integer also finds the token with that id.';

    const special = tokens.special && typeof tokens.special === 'object' ? tokens.special : {};
    const dl = byId('special-tokens');
    for (const name of Object.keys(special)) {
      const id = num(special[name]);
      const b = h('button', {type: 'button', title: 'search for token ' + id, text: String(id)});
      b.addEventListener('click', () => { input.value = String(id); search(input.value); });
      const text = id !== null && id >= 0 && id < texts.length ? h('span', {class: 'token-text'}, visibleText(texts[id], true)) : null;
      dl.append(h('div', null, h('dt', {text: name}), h('dd', null, b, ' ', text)));
    }

    // One pending slice at most: a new query's first slice replaces the old query's next one, and
    // the generation check stops a slice of an old query that is already queued.
    const port = new MessageChannel();
    let queued = null, posted = false;
    port.port1.onmessage = () => {
      posted = false;
      const f = queued;
      queued = null;
      if (f) f();
    };
    function schedule(f) {
      queued = f;
      if (!posted) { posted = true; port.port2.postMessage(null); }
    }

    function row(id, cls) {
      const type = types ? types[id] : null;
      return h('tr', {class: cls || null, data: {id: String(id)}},
        h('td', {class: 'num', text: String(id)}),
        h('td', {class: 'token-text'}, visibleText(texts[id], true)),
        h('td', {text: type === null || type === undefined ? '' : TOKEN_TYPES.has(type) ? TOKEN_TYPES.get(type) + ' (' + type + ')' : String(type)}),
        h('td', {class: 'num'}, scores ? numCell(scores[id]) : ''));
    }
    function show(ids, idMatch, query, matches, slices) {
      const frag = document.createDocumentFragment();
      for (const id of ids) frag.append(row(id, id === idMatch ? 'id-match' : null));
      tbody.textContent = '';
      tbody.append(frag);
      results.dataset.query = query;
      results.dataset.matches = String(matches);
      results.dataset.shown = String(ids.length);
      results.dataset.slices = String(slices);
      results.dataset.complete = '1';
    }

    let generation = 0;
    function search(query) {
      const gen = ++generation;
      results.dataset.complete = '0';
      const n = texts.length;
      if (query === '') {
        const ids = [];
        for (let i = 0; i < Math.min(n, TOKEN_RESULTS); i++) ids.push(i);
        show(ids, -1, '', n, 0);
        countEl.textContent = fmtInt(n) + ' tokens; the first ' + fmtInt(ids.length) + ' shown.';
        return;
      }
      const trimmed = query.trim();
      const idMatch = /^\d+$/.test(trimmed) && Number(trimmed) < n ? Number(trimmed) : -1;
      const fold = query === query.toLowerCase();  // smart case: a lower-case query ignores case
      const exact = [], partial = [];
      let matches = idMatch >= 0 ? 1 : 0;
      let i = 0, slices = 0;
      countEl.textContent = 'Searching\u2026';
      function slice() {
        if (gen !== generation) return;  // a newer query took over
        const end = Math.min(n, i + TOKEN_SLICE);
        for (; i < end; i++) {
          const t = texts[i];
          if (typeof t !== 'string' || i === idMatch) continue;
          const hay = fold ? t.toLowerCase() : t;
          if (!hay.includes(query)) continue;
          matches++;
          if (hay === query) { if (exact.length < TOKEN_RESULTS) exact.push(i); }
          else if (partial.length < TOKEN_RESULTS) partial.push(i);
        }
        slices++;
        if (i < n) {
          if (slices % 16 === 0) countEl.textContent = 'Searching\u2026 ' + Math.floor((100 * i) / n) + '\u00a0%';
          schedule(slice);
          return;
        }
        // The id first, then whole-text matches, then the rest, each in id order.
        const ids = (idMatch >= 0 ? [idMatch] : []).concat(exact, partial).slice(0, TOKEN_RESULTS);
        show(ids, idMatch, query, matches, slices);
        countEl.textContent = matches === 0 ? 'No match.' : fmtInt(matches) + ' match' + (matches === 1 ? '' : 'es') +
          (matches > ids.length ? '; the first ' + fmtInt(ids.length) + ' shown.' : '.');
      }
      schedule(slice);
    }
    input.addEventListener('input', () => search(input.value));
    search(input.value);
  }

  // ---------------------------------------------------------------------------------------------
  // Theme: the system's preference until the toggle is used; then the toggle's choice.

  function setUpTheme() {
    const root = document.documentElement;
    const button = byId('theme-toggle');
    const prefersDark = window.matchMedia ? window.matchMedia('(prefers-color-scheme: dark)') : null;
    const isDark = () => (root.dataset.theme ? root.dataset.theme === 'dark' : !!(prefersDark && prefersDark.matches));
    const sync = () => button.setAttribute('aria-pressed', String(isDark()));
    button.addEventListener('click', () => {
      root.dataset.theme = isDark() ? 'light' : 'dark';
      sync();
    });
    if (prefersDark && prefersDark.addEventListener) prefersDark.addEventListener('change', sync);
    sync();
  }

  function drawFooter(doc) {
    byId('footer').textContent = 'Made by ' + (doc.generator || 'minfer') + ' \u00b7 report document version ' + doc.minfer_report +
      ' \u00b7 ' + (doc.mode === 'compare' ? 'comparison' : 'one model') + (doc.values === true ? ' with values' : '') +
      '. Offline page: it loads nothing.';
  }

  function main() {
    setUpTheme();
    let doc;
    try {
      doc = JSON.parse(byId('report-data').textContent);
    } catch (e) {
      throw new Error('the report data is not valid JSON: ' + e.message);
    }
    if (!doc || typeof doc !== 'object') throw new Error('the report data is not a report document');
    if (doc.minfer_report !== 1) {
      const banner = byId('page-error');
      banner.textContent = 'This page knows report documents of version 1; this one says ' + String(doc.minfer_report) + '. Some parts may be missing.';
      banner.hidden = false;
    }
    const compare = doc.mode === 'compare' && doc.compare && typeof doc.compare === 'object';
    if (!compare) for (const e of document.querySelectorAll('[data-mode="compare"]')) e.remove();
    const tensorIndex = new Map();
    for (const t of Array.isArray(doc.tensors) ? doc.tensors : []) tensorIndex.set(t.name, t);
    let errorsByName = null;
    if (compare) {
      errorsByName = new Map();
      for (const e of Array.isArray(doc.compare.errors) ? doc.compare.errors : []) errorsByName.set(e.name, e);
    }
    drawSummary(doc);
    if (compare) drawErrors(doc);
    drawLayers(doc, tensorIndex, errorsByName);
    drawTensors(doc);
    drawMetadata(doc);
    drawTokens(doc);
    drawFooter(doc);
    document.body.dataset.ready = '1';
    if (performance.mark) performance.mark('minfer-report-ready');
  }

  try {
    main();
  } catch (e) {
    const banner = byId('page-error');
    banner.textContent = 'This report could not be drawn: ' + (e && e.message ? e.message : String(e));
    banner.hidden = false;
    document.body.dataset.ready = 'error';
    throw e;  // also to the console, where the browser tests look
  }
})();
