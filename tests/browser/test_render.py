"""render_report_page through minfer-render-report, without a browser: the embedded document, the
escaped title, the page's own markup and the safety rules its script keeps (static checks)."""

import json
import os
import re
import subprocess

import report_docs
from conftest import render

DATA_OPEN = '<script type="application/json" id="report-data">'
CSP = ('<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; style-src \'unsafe-inline\'; '
       'script-src \'unsafe-inline\'; img-src data:">')


def page_of(tool, tmp_path, doc, title=None):
    text = doc if isinstance(doc, str) else report_docs.dumps(doc)
    with open(render(tool, text, str(tmp_path), 'page', title), encoding='utf-8') as f:
        return text, f.read()


def split_page(page):
    """(markup before the data, the data element's text, markup after it)."""
    start = page.index(DATA_OPEN) + len(DATA_OPEN)
    end = page.index('</script>', start)
    return page[:start], page[start:end], page[end:]


def test_the_data_is_the_document_with_every_lt_escaped(render_tool, tmp_path):
    text, page = page_of(render_tool, tmp_path, report_docs.hostile())
    _, data, _ = split_page(page)
    assert '<' not in data
    assert data.count('\\u003c') == text.count('<') > 0
    assert json.loads(data) == json.loads(text)


def test_no_string_of_the_document_can_end_or_open_an_element(render_tool, tmp_path):
    _, page = page_of(render_tool, tmp_path, report_docs.hostile())
    lower = page.lower()
    assert lower.count('<script') == 2  # the data and the page's script
    assert lower.count('</script') == 2
    assert '<img' not in lower
    assert '<!--' not in lower


def test_placeholders_are_filled_once(render_tool, tmp_path):
    # A document or title holding a placeholder's name keeps it as text: one pass over the skeleton.
    doc = report_docs.small_model()
    doc['chat_template'] = '{{script}}{{style}}{{report_data}}{{title}}'
    text, page = page_of(render_tool, tmp_path, doc, title='{{script}}')
    before, data, after = split_page(page)
    assert json.loads(data) == json.loads(text)
    markup = before + after
    assert '{{title}}' not in markup and '{{style}}' not in markup and '{{report_data}}' not in markup
    assert markup.count('{{script}}') == 2  # the title, in <title> and in the heading
    assert '<title>{{script}}</title>' in before


def test_the_title_is_html_escaped(render_tool, tmp_path):
    title = '<b>"x" & \'y\'</b></title><script>alert(1)</script>'
    _, page = page_of(render_tool, tmp_path, report_docs.small_model(), title=title)
    escaped = '&lt;b&gt;&quot;x&quot; &amp; &#39;y&#39;&lt;/b&gt;&lt;/title&gt;&lt;script&gt;alert(1)&lt;/script&gt;'
    assert page.count(escaped) == 2  # <title> and the heading
    assert title not in page


def test_the_default_title_is_the_input_file_name(render_tool, tmp_path):
    _, page = page_of(render_tool, tmp_path, report_docs.small_model())
    assert '<title>page.json</title>' in page


def test_the_page_can_load_nothing(render_tool, tmp_path):
    _, page = page_of(render_tool, tmp_path, report_docs.small_model())
    before, _, after = split_page(page)
    markup = before + after
    assert CSP in before
    assert before.index(CSP) < before.index('<style>')  # in force before any style or script
    # every reference is in-page or data:
    refs = re.findall(r'\b(?:src|href|action|poster|srcset)\s*=\s*["\']?([^"\'\s>]*)', markup)
    assert refs and all(r.startswith('#') or r.startswith('data:') for r in refs), refs
    assert 'url(' not in markup and '@import' not in markup


def test_the_script_keeps_the_safety_rules(render_tool, tmp_path):
    # The page's script never parses markup and never makes a request (the CSP would also stop a
    # request; these keep the code from trying).
    _, page = page_of(render_tool, tmp_path, report_docs.small_model())
    _, _, after = split_page(page)
    script = after[after.index('<script>'):]
    script = re.sub(r'(^|\s)//.*$', '', script, flags=re.M)  # the code, not its comments
    for banned in ('innerHTML', 'outerHTML', 'insertAdjacentHTML', 'document.write', 'DOMParser', 'createContextualFragment',
                   'eval(', 'Function(', 'fetch(', 'XMLHttpRequest', 'WebSocket', 'EventSource', 'sendBeacon', 'import(',
                   'Worker(', 'window.open', 'location.href', 'srcdoc', 'setAttribute(\'on', 'localStorage'):
        assert banned not in script, banned


def test_the_assets_are_in_the_page_as_written(render_tool, tmp_path):
    _, page = page_of(render_tool, tmp_path, report_docs.small_model())
    src = os.path.join(os.path.dirname(__file__), '..', '..', 'src', 'toolbox', 'report_page')
    for name in ('page.css', 'page.js'):
        with open(os.path.join(src, name), encoding='utf-8') as f:
            assert f.read() in page, name


def test_tool_usage_and_io_errors(render_tool, tmp_path):
    run = lambda *a: subprocess.run([render_tool, *a], capture_output=True, text=True, check=False)  # noqa: E731
    assert run().returncode == 2
    assert run('a', 'b', 'c', 'd').returncode == 2
    missing = run(str(tmp_path / 'missing.json'), str(tmp_path / 'out.html'))
    assert missing.returncode == 3 and 'missing.json' in missing.stderr
    src = tmp_path / 'doc.json'
    src.write_text('{}')
    assert run(str(src), str(tmp_path / 'no-such-dir' / 'out.html')).returncode == 3
    assert run(str(src), str(tmp_path / 'out.html')).returncode == 0


def test_standard_input(render_tool, tmp_path):
    out = tmp_path / 'out.html'
    done = subprocess.run([render_tool, '-', str(out), 'T'], input='{"a": "<x>"}', capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    _, data, _ = split_page(out.read_text())
    assert data == '{"a": "\\u003cx>"}'
