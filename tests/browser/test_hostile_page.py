"""Markup and script in the document (report_docs.hostile) and the title: nothing runs, nothing becomes
an element, and every string is shown as the text it is."""

import pytest

import report_docs
from report_docs import HOSTILE, HOSTILE_IMG, HOSTILE_SCRIPT


@pytest.fixture
def page(open_page):
    return open_page(report_docs.hostile(), title=HOSTILE)


def assert_not_pwned(page):
    assert page.js('return typeof window.__pwned') == 'undefined'
    assert page.js("return document.querySelectorAll('img, iframe, object, embed').length") == 0
    assert page.js("return document.scripts.length") == 2  # the data and the page's script


def row_text(page, css, attr, value):
    return page.js("""
        const e = Array.from(document.querySelectorAll(arguments[0])).find((e) => e.getAttribute(arguments[1]) === arguments[2]);
        return e ? e.textContent : null;""", css, attr, value)


def test_nothing_runs(page):
    assert_not_pwned(page)
    assert page.driver.title == HOSTILE
    assert page.find('#title').text == HOSTILE


def test_a_token(page):
    texts = page.doc['tokens']['texts']
    rows = page.search_tokens('window.__pwned')
    assert sorted(int(r['id']) for r in rows) == [i for i, t in enumerate(texts) if 'window.__pwned' in t]
    shown = page.js("return Array.from(document.querySelectorAll('#token-results tbody tr .token-text')).map((td) => td.textContent)")
    assert sorted(shown) == sorted([HOSTILE_SCRIPT, HOSTILE_IMG, HOSTILE])
    special = page.js("return Array.from(document.querySelectorAll('#special-tokens dt')).map((dt) => dt.textContent)")
    assert HOSTILE in special
    assert_not_pwned(page)


def test_a_key_and_a_value(page):
    assert row_text(page, '#metadata tbody tr', 'data-key', HOSTILE).startswith(HOSTILE)
    assert row_text(page, '#metadata tbody tr', 'data-key', 'general.url').endswith(HOSTILE)
    page.type_into('#metadata-filter', 'onerror')
    shown = [r['key'] for r in page.visible_rows('#metadata tbody tr')]
    assert HOSTILE in shown and 'general.url' in shown and 'hostile.items' in shown
    page.click('#metadata tr[data-key="hostile.items"] summary')
    page.wait("return document.querySelectorAll('#metadata tr[data-key=\"hostile.items\"] li').length === 2")
    items = page.js("return Array.from(document.querySelectorAll('#metadata tr[data-key=\"hostile.items\"] li')).map((li) => li.textContent)")
    assert items == [HOSTILE_SCRIPT, HOSTILE_IMG]
    assert_not_pwned(page)


def test_a_tensor_name_and_type(page):
    t = page.doc['tensors'][5]
    assert HOSTILE in t['name']
    text = row_text(page, '#tensors tbody tr', 'data-name', t['name'])
    assert text.startswith(t['name'] + HOSTILE_IMG)
    page.click('#layers td.cell[data-layer="0"][data-role="attn_v"]')
    assert [r['name'] for r in page.rows('#layer-detail tbody tr')] == [t['name']]
    assert_not_pwned(page)


def test_the_summary_layers_and_template(page):
    m = page.doc['models'][0]
    for key in ('location', 'name', 'architecture', 'file_type', 'tokenizer'):
        values = page.js("return Array.from(document.querySelectorAll('#summary tr[data-field=\"' + arguments[0] + '\"] td'))"
                         ".map((td) => [td.dataset.value, td.textContent])", key)
        assert values == [[m[key], m[key]]], key
    assert row_text(page, '#layers td.cell', 'data-role', HOSTILE) is not None
    assert row_text(page, '#by-type tbody tr', 'data-type', HOSTILE).startswith(HOSTILE)
    assert row_text(page, '#by-role tbody tr', 'data-role', HOSTILE).startswith(HOSTILE)
    assert page.js("return document.getElementById('chat-template').textContent") == page.doc['chat_template']
    assert HOSTILE in page.find('#footer').text
    page.click('#layers td.cell[data-role="%s"]' % HOSTILE.replace('"', '\\"'))
    assert_not_pwned(page)
