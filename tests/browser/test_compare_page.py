"""The page of a comparison (report_docs.compare: B against reference A): both models in the summary,
the errors table with its outlier, the tensors of one model only, the shape mismatch, and the
heatmap coloured by the error."""

import pytest

import report_docs
from conftest import same_number


@pytest.fixture
def page(open_page):
    return open_page(report_docs.compare())


def test_every_section_is_there(page):
    for id_ in ('summary', 'errors', 'errors-filter', 'only-in-reference', 'only-in-compared', 'shape-mismatch', 'layers',
                'layer-detail', 'by-type', 'by-role', 'tensors', 'metadata', 'tokens'):
        assert page.js('return !!document.getElementById(arguments[0])', id_), id_
    assert page.js("return !!document.querySelector('nav a[href=\"#errors\"]')")


def test_the_summary_shows_both_models(page):
    a, b = page.doc['models']
    for key in ('architecture', 'parameters', 'file_bytes', 'bits_per_weight', 'file_type', 'context_length', 'tokenizer',
                'location'):
        values = page.js("return Array.from(document.querySelectorAll('#summary tr[data-field=\"' + arguments[0] + '\"] td[data-value]'))"
                         ".map((td) => td.dataset.value)", key)
        assert len(values) == 2, key
        for shown, m in zip(values, (a, b)):
            assert shown == str(m[key]) if isinstance(m[key], (str, int)) else same_number(shown, m[key]), key
    differs = page.js("return Array.from(document.querySelectorAll('#summary tr.differs')).map((tr) => tr.dataset.field)")
    assert 'file_type' in differs and 'architecture' not in differs


def test_error_rows_carry_the_document_values(page):
    rows = page.rows('#errors-list tbody tr')
    errors = page.doc['compare']['errors']
    assert len(rows) == len(errors)
    for r, e in zip(rows, errors):
        assert r['name'] == e['name']
        for attr, key in (('rmse', 'rmse'), ('nmse', 'nmse'), ('cosine', 'cosine'), ('maxabs', 'max_abs')):
            if e[key] is None:
                assert attr not in r, (e['name'], attr)
            else:
                assert same_number(r.get(attr), e[key]), (e['name'], attr, r.get(attr), e[key])
        assert (r.get('outlier') == '1') == e['outlier']
        assert ('outlier' in r['_class'].split()) == e['outlier']
    assert sum(1 for e in errors if e['outlier']) == 1
    assert any(e['rmse'] == 'nan' for e in errors)


def test_sorting_errors(page):
    th = page.header('#errors-list', 'NMSE')
    page.click(th.find_element('css selector', 'button'))
    names = page.column('#errors-list', 'data-name')
    outlier = next(e['name'] for e in page.doc['compare']['errors'] if e['outlier'])
    assert names[0] == outlier  # the largest NMSE first
    nmse = [float(v) for v in page.column('#errors-list', 'data-nmse') if v is not None]
    assert nmse == sorted(nmse, reverse=True)
    assert page.column('#errors-list', 'data-nmse')[-1] is None  # no value: last


def test_filtering_errors(page):
    errors = page.doc['compare']['errors']
    page.type_into('#errors-filter', 'attn_q')
    shown = [r['name'] for r in page.visible_rows('#errors-list tbody tr')]
    assert shown == [e['name'] for e in errors if 'attn_q' in e['name']] and shown
    page.type_into('#errors-filter', '')
    page.click('#errors-outliers-only')
    shown = page.visible_rows('#errors-list tbody tr')
    assert [r['name'] for r in shown] == [e['name'] for e in errors if e['outlier']]
    assert page.find('#errors-count').text == '1 of %d tensors' % len(errors)


def test_tensors_in_one_model_only_and_shape_mismatches(page):
    c = page.doc['compare']
    for id_, names in (('only-in-reference', c['only_in_reference']), ('only-in-compared', c['only_in_compared'])):
        assert [r['name'] for r in page.rows('#%s li' % id_)] == names and names
        assert [r['_text'] for r in page.rows('#%s li' % id_)] == names
    rows = page.rows('#shape-mismatch tbody tr')
    assert [r['name'] for r in rows] == [m['name'] for m in c['shape_mismatch']]
    m = c['shape_mismatch'][0]
    assert ' \u00d7 '.join(map(str, m['reference_shape'])) in rows[0]['_text']
    assert ' \u00d7 '.join(map(str, m['compared_shape'])) in rows[0]['_text']


def test_heatmap_cells_carry_the_errors(page):
    cells = {(int(c['layer']), c['role']): c for c in page.rows('#layers td.cell')}
    doc_cells = page.doc['layers']['cells']
    assert len(cells) == len(doc_cells)
    for c in doc_cells:
        shown = cells[(c['layer'], c['role'])]
        assert same_number(shown['bytes'], c['bytes'])
        for k in ('rmse', 'nmse'):
            if c[k] is None:
                assert k not in shown
            else:
                assert same_number(shown[k], c[k])
    assert any(c['rmse'] is None for c in doc_cells)
    # coloured by the error: the outlier's cell is the hottest
    hottest = page.js("""
        const cells = Array.from(document.querySelectorAll('#layers td.cell[data-nmse]'));
        const red = (td) => Number(getComputedStyle(td).backgroundColor.match(/\\d+/g)[0]);
        cells.sort((a, b) => red(b) - red(a));
        return cells[0].dataset.layer + '/' + cells[0].dataset.role;""")
    assert hottest == '2/ffn_down'


def test_the_cell_detail_has_the_errors(page):
    cell = next(c for c in page.doc['layers']['cells'] if c['layer'] == 2 and c['role'] == 'ffn_down')
    page.click('#layers td.cell[data-layer="2"][data-role="ffn_down"]')
    assert page.detail_names() == cell['tensors']
    assert page.js("return document.querySelectorAll('#layer-detail tbody tr.outlier').length") == 1
