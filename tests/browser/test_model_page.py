"""The page of one model with values (report_docs.small_model): every section drawn from the document,
and the interactions (sorting, filtering, the heatmap, the token search, the theme)."""

import math

import pytest
from selenium.webdriver.common.keys import Keys

import report_docs
from conftest import same_number

SECTIONS = ['summary', 'layers', 'tensors', 'metadata', 'tokens', 'by-type', 'by-role', 'layer-detail',
            'metadata-filter', 'tensors-filter', 'token-search', 'token-results', 'chat-template', 'theme-toggle']


@pytest.fixture
def page(open_page):
    return open_page(report_docs.small_model())


def test_every_section_is_there(page):
    for id_ in SECTIONS:
        assert page.js('return !!document.getElementById(arguments[0])', id_), id_
    assert not page.js("return !!document.getElementById('errors')"), 'errors is for comparisons only'
    assert page.js("return document.querySelectorAll('[data-mode=compare]').length") == 0


def test_summary(page):
    model = page.doc['models'][0]
    rows = {r['field']: r for r in page.rows('#summary tr[data-field]')}
    for key in ('architecture', 'parameters', 'file_bytes', 'bits_per_weight', 'file_type', 'context_length', 'tokenizer',
                'name', 'location', 'tensor_count', 'vocab_size'):
        values = page.js("return Array.from(document.querySelectorAll('#summary tr[data-field=\"' + arguments[0] + '\"] td'))"
                         ".map((td) => td.dataset.value === undefined ? null : td.dataset.value)", key)
        assert key in rows
        assert len(values) == 1
        v = model[key]
        assert values[0] == str(v) if isinstance(v, (str, int)) else same_number(values[0], v), key


def test_metadata_rows(page):
    rows = page.rows('#metadata tbody tr')
    assert [r['key'] for r in rows] == [kv['key'] for kv in page.doc['metadata']]
    for r, kv in zip(rows, page.doc['metadata']):
        if 'count' in kv:
            assert r['count'] == str(kv['count'])
            assert kv['value'] in r['_text']


@pytest.mark.parametrize('key', ['tokenizer.ggml.tokens', 'tokenizer.ggml.merges'])
def test_metadata_arrays_open_to_their_items(page, key):
    kv = next(kv for kv in page.doc['metadata'] if kv['key'] == key)
    row = 'tr[data-key="%s"]' % key
    assert page.js("return document.querySelectorAll(arguments[0] + ' li').length", '#metadata ' + row) == 0  # drawn on demand
    page.click('#metadata %s details summary' % row)
    page.wait("return document.querySelectorAll(arguments[0]).length > 0", 10, '#metadata %s li' % row)
    items = page.js("return Array.from(document.querySelectorAll(arguments[0])).map((li) => li.textContent)",
                    '#metadata %s li:not(.more)' % row)
    assert len(items) == len(kv['items'])
    # the items as text: spaces stay spaces; controls are shown as escapes
    for shown, item in zip(items, kv['items']):
        if not any(ord(c) < 32 or 0x200b <= ord(c) <= 0x202e for c in item):
            assert shown == item
    more = page.js("return Array.from(document.querySelectorAll(arguments[0])).map((li) => li.textContent)",
                   '#metadata %s li.more' % row)
    if kv['truncated']:
        assert more == ['\u2026 %d more' % (kv['count'] - len(kv['items']))]
    else:
        assert more == []


def test_metadata_filter(page):
    page.type_into('#metadata-filter', 'Tokenizer.GGML')
    shown = [r['key'] for r in page.visible_rows('#metadata tbody tr')]
    expected = [kv['key'] for kv in page.doc['metadata']
                if 'tokenizer.ggml' in (kv['key'] + '\n' + kv['type'] + '\n' + kv['value']).lower()]
    assert shown == expected and 0 < len(shown) < len(page.doc['metadata'])
    assert page.find('#metadata-count').text == '%d of %d keys' % (len(expected), len(page.doc['metadata']))
    page.type_into('#metadata-filter', '500000')  # a value
    assert [r['key'] for r in page.visible_rows('#metadata tbody tr')] == ['llama.rope.freq_base']
    page.type_into('#metadata-filter', '')
    assert len(page.visible_rows('#metadata tbody tr')) == len(page.doc['metadata'])


def test_tensor_rows_carry_the_document_values(page):
    rows = page.rows('#tensors tbody tr')
    tensors = page.doc['tensors']
    assert len(rows) == len(tensors)
    for r, t in zip(rows, tensors):
        assert r['name'] == t['name'] and r['type'] == t['type']
        assert same_number(r['bytes'], t['bytes'])
        s = t['stats']
        if s is None:
            assert all(k not in r for k in ('min', 'max', 'mean', 'std', 'nan', 'inf')), t['name']
            continue
        for k in ('min', 'max', 'mean', 'std', 'nan', 'inf'):
            assert same_number(r.get(k), s[k]), (t['name'], k, r.get(k), s[k])
    with_stats = sum(1 for t in tensors if t['stats'] is not None)
    assert page.js("return document.querySelectorAll('#tensors tbody tr svg.hist path').length") == with_stats
    assert with_stats < len(tensors)


def test_histograms_follow_the_counts(page):
    t = next(t for t in page.doc['tensors'] if t['stats'])
    counts = t['stats']['histogram']['counts']
    bars = page.js("return document.querySelector('#tensors tbody tr svg.hist path').getAttribute('d').split('M').length - 1")
    assert bars == sum(1 for c in counts if c > 0)


def test_the_nan_and_inf_counts_are_flagged(page):
    t = next(t for t in page.doc['tensors'] if t['stats'] and t['stats']['nan'])
    flags = page.js("return Array.from(document.querySelectorAll('#tensors tbody tr')).find((tr) => tr.dataset.name === arguments[0])"
                    ".querySelectorAll('.flag').length", t['name'])
    assert flags == 2


def test_sorting_by_a_column(page):
    before = page.column('#tensors', 'data-name')
    th = page.header('#tensors', 'Bytes')
    page.click(th.find_element('css selector', 'button'))
    assert th.get_attribute('aria-sort') == 'descending'
    sizes = [int(v) for v in page.column('#tensors', 'data-bytes')]
    assert sizes == sorted(sizes, reverse=True) and sizes != [t['bytes'] for t in page.doc['tensors']]
    page.click(th.find_element('css selector', 'button'))
    assert th.get_attribute('aria-sort') == 'ascending'
    sizes = [int(v) for v in page.column('#tensors', 'data-bytes')]
    assert sizes == sorted(sizes)
    assert sorted(page.column('#tensors', 'data-name')) == sorted(before)  # the same rows


def test_sorting_with_the_keyboard(page):
    th = page.header('#tensors', 'Min')
    button = th.find_element('css selector', 'button')
    page.js('arguments[0].focus()', button)
    button.send_keys(Keys.ENTER)
    assert th.get_attribute('aria-sort') == 'descending'
    mins = [float(v) for v in page.column('#tensors', 'data-min') if v is not None]
    assert mins == sorted(mins, reverse=True)
    # rows without statistics last
    assert page.column('#tensors', 'data-min')[-1] is None
    button.send_keys(Keys.SPACE)
    assert th.get_attribute('aria-sort') == 'ascending'
    th2 = page.header('#tensors', 'Name')
    b2 = th2.find_element('css selector', 'button')
    page.js('arguments[0].focus()', b2)
    b2.send_keys(Keys.SPACE)
    assert th2.get_attribute('aria-sort') == 'ascending' and th.get_attribute('aria-sort') is None
    names = page.column('#tensors', 'data-name')
    assert names.index('blk.2.attn_q.weight') < names.index('token_embd.weight')
    assert names.index('blk.1.attn_q.weight') < names.index('blk.2.attn_q.weight')


def test_filtering_tensors(page):
    page.type_into('#tensors-filter', 'ffn_DOWN')
    shown = [r['name'] for r in page.visible_rows('#tensors tbody tr')]
    expected = [t['name'] for t in page.doc['tensors'] if 'ffn_down' in (t['name'] + t['type'] + t['role']).lower()]
    assert shown == expected and len(expected) == 3
    page.type_into('#tensors-filter', 'q6_k')  # a type
    assert all(r['type'] == 'q6_K' for r in page.visible_rows('#tensors tbody tr'))
    page.type_into('#tensors-filter', 'nothing-like-this')
    assert page.visible_rows('#tensors tbody tr') == []
    assert page.find('#tensors-count').text == '0 of %d tensors' % len(page.doc['tensors'])


def test_heatmap_cells(page):
    cells = page.rows('#layers td.cell')
    doc_cells = page.doc['layers']['cells']
    assert len(cells) == len(doc_cells)
    got = {(int(c['layer']), c['role']): c for c in cells}
    for c in doc_cells:
        shown = got[(c['layer'], c['role'])]
        assert same_number(shown['bytes'], c['bytes'])
        assert same_number(shown['bpw'], c['bits_per_weight'])
        assert 'rmse' not in shown
    rows = page.js("return document.querySelectorAll('#layers table.heatmap tbody tr').length")
    assert rows == page.doc['layers']['count']
    assert page.js("return document.querySelectorAll('#layers table.heatmap thead th').length") == 1 + len(page.doc['layers']['roles'])


def test_selecting_a_cell_shows_its_tensors(page):
    assert page.detail_names() == []
    cell = next(c for c in page.doc['layers']['cells'] if len(c['tensors']) > 1)
    page.click('#layers td.cell[data-layer="%d"][data-role="%s"]' % (cell['layer'], cell['role']))
    assert page.detail_names() == cell['tensors']
    assert page.find('#layers td.cell[aria-selected="true"]').get_attribute('data-role') == cell['role']


def test_the_heatmap_with_the_keyboard(page):
    # one tab stop for the grid; arrows move; Enter and Space select
    assert page.js("return document.querySelectorAll('#layers td.cell[tabindex=\"0\"]').length") == 1
    first = page.find('#layers td.cell[tabindex="0"]')
    page.js('arguments[0].focus()', first)
    active = page.driver.switch_to.active_element
    active.send_keys(Keys.ARROW_RIGHT)
    active = page.driver.switch_to.active_element
    active.send_keys(Keys.ARROW_DOWN)
    active = page.driver.switch_to.active_element
    assert (active.get_attribute('data-layer'), active.get_attribute('data-role')) == ('1', page.doc['layers']['roles'][1])
    active.send_keys(Keys.ENTER)
    cell = next(c for c in page.doc['layers']['cells'] if c['layer'] == 1 and c['role'] == page.doc['layers']['roles'][1])
    assert page.detail_names() == cell['tensors']
    active.send_keys(Keys.END)
    active = page.driver.switch_to.active_element
    assert active.get_attribute('data-role') == page.doc['layers']['roles'][-1]
    active.send_keys(Keys.SPACE)
    assert page.find('#layer-detail').get_attribute('data-role') == page.doc['layers']['roles'][-1]
    assert page.js("return document.querySelectorAll('#layers td.cell[tabindex=\"0\"]').length") == 1


@pytest.mark.parametrize('table,key,doc_key', [('#by-type', 'type', 'by_type'), ('#by-role', 'role', 'by_role')])
def test_bytes_by_type_and_role(page, table, key, doc_key):
    rows = page.rows(table + ' tbody tr')
    expected = page.doc[doc_key]
    assert [r[key] for r in rows] == [e[key] for e in expected]
    for r, e in zip(rows, expected):
        assert same_number(r['bytes'], e['bytes']) and same_number(r['tensors'], e['tensors'])


def test_token_search_by_text(page):
    texts = page.doc['tokens']['texts']
    rows = page.search_tokens('hello')
    ids = [int(r['id']) for r in rows]
    assert sorted(ids) == [i for i, t in enumerate(texts) if 'hello' in t.lower()]
    assert ids[:3] == [i for i, t in enumerate(texts) if t.lower() == 'hello']  # whole matches first
    rows = page.search_tokens('Hello')  # capitals: case counts
    assert [int(r['id']) for r in rows] == [texts.index('Hello')]
    for r in rows:
        assert r['_text'].startswith(r['id'])


def test_token_search_by_id(page):
    texts = page.doc['tokens']['texts']
    rows = page.search_tokens('5')
    assert int(rows[0]['id']) == 5 and 'id-match' in rows[0]['_class']
    assert sorted(int(r['id']) for r in rows[1:]) == [i for i, t in enumerate(texts) if '5' in t and i != 5]
    rows = page.search_tokens(str(len(texts) - 1))
    assert int(rows[0]['id']) == len(texts) - 1
    assert page.search_tokens(str(len(texts))) == []  # no such id, no such text
    assert page.find('#token-count').text == 'No match.'


def test_token_rows_show_text_type_and_score(page):
    tokens = page.doc['tokens']
    rows = page.search_tokens('<|im_end|>')
    assert len(rows) == 1
    i = int(rows[0]['id'])
    cells = page.js("return Array.from(document.querySelectorAll('#token-results tbody tr td')).map((td) => td.textContent)")
    assert cells[1] == tokens['texts'][i] == '<|im_end|>'
    assert cells[2] == 'control (3)'
    assert float(cells[3]) == pytest.approx(tokens['scores'][i], rel=1e-3)


def test_invisible_characters_are_made_visible(page):
    texts = page.doc['tokens']['texts']
    escapes = lambda i: page.js(  # noqa: E731
        "return Array.from(document.querySelectorAll('#token-results tbody tr')).find((tr) => tr.dataset.id === arguments[0])"
        ".querySelectorAll('.esc, .sp').length", str(i))
    page.search_tokens(str(texts.index('\n')))
    assert page.js("return document.querySelector('#token-results tbody tr .esc').textContent") == '\\n'
    page.search_tokens('a\u200bb')
    assert page.js("return document.querySelector('#token-results tbody tr .esc').textContent") == '\\u200b'
    page.search_tokens(' hello')
    assert escapes(texts.index(' hello')) == 1
    # spaces stay spaces in the text
    assert page.js("return document.querySelector('#token-results tbody tr .token-text').textContent") == ' hello'


def test_empty_search_shows_the_first_tokens(page):
    rows = page.search_tokens('')
    assert [int(r['id']) for r in rows] == list(range(min(200, len(page.doc['tokens']['texts']))))


def test_special_tokens(page):
    special = page.doc['tokens']['special']
    shown = page.js("return Array.from(document.querySelectorAll('#special-tokens dt')).map((dt) => dt.textContent)")
    assert shown == list(special)
    page.js("document.querySelector('#special-tokens button').click()")
    page.wait("return document.getElementById('token-results').dataset.query === arguments[0]", 10, str(special['bos']))


def test_chat_template(page):
    assert page.find('#chat-template').tag_name == 'pre'
    assert page.js("return document.getElementById('chat-template').textContent") == page.doc['chat_template']


def test_dark_mode_toggles(page):
    colour = lambda: page.js("return getComputedStyle(document.body).backgroundColor")  # noqa: E731
    toggle = page.find('#theme-toggle')
    start, pressed = colour(), toggle.get_attribute('aria-pressed')
    page.click(toggle)
    assert colour() != start and toggle.get_attribute('aria-pressed') != pressed
    assert page.js('return document.documentElement.dataset.theme') == ('dark' if pressed == 'false' else 'light')
    page.js('arguments[0].focus()', toggle)
    toggle.send_keys(Keys.SPACE)
    assert colour() == start and toggle.get_attribute('aria-pressed') == pressed


def test_the_page_is_ready_once(page):
    assert page.js("return performance.getEntriesByName('minfer-report-ready').length") == 1
    assert page.js("return document.getElementById('page-error').hidden") is True


def test_a_document_without_values_tokens_or_template(open_page):
    doc = report_docs.small_model(values=False)
    doc['tokens'] = None
    doc['chat_template'] = None
    page = open_page(doc)
    rows = page.rows('#tensors tbody tr')
    assert len(rows) == len(doc['tensors']) and all('min' not in r for r in rows)
    assert page.js("return document.querySelectorAll('#tensors svg').length") == 0
    assert page.js("return document.getElementById('token-search').disabled") is True
    assert page.rows('#token-results tbody tr') == []
    assert page.js("return document.getElementById('chat-template').textContent") == ''
    assert 'no chat template' in page.find('#chat-template-note').text


def test_non_finite_numbers(open_page):
    doc = report_docs.small_model()
    t = doc['tensors'][1]
    t['stats']['min'], t['stats']['max'], t['stats']['mean'] = '-inf', 'inf', 'nan'
    page = open_page(doc)
    r = next(r for r in page.rows('#tensors tbody tr') if r['name'] == t['name'])
    assert (r['min'], r['max'], r['mean']) == ('-inf', 'inf', 'nan')
    text = page.js("return Array.from(document.querySelectorAll('#tensors tbody tr')).find((tr) => tr.dataset.name === arguments[0]).textContent",
                   t['name'])
    assert '-Inf' in text and '+Inf' in text and 'NaN' in text
    assert not math.isnan(float(r['std']))
