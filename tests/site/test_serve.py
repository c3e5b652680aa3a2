"""`mkdocs serve` as a contributor runs it: it shares the one cache with a build running at the
same time (a notebook both need is executed once, by whichever gets there first)."""

import http.client
import json
import re
import socket
import subprocess
import sys
import threading
import time
import urllib.request

import pytest

from tests.site.sitetools import build_env, mkdocs_build

NOTEBOOK = "cross-attention-encoder-decoder"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_serve(project, port: int, log_path):
    """`mkdocs serve` writing its log to a file: a pipe nobody reads would fill and stop it."""
    with open(log_path, "w", encoding="utf-8") as out:
        return subprocess.Popen([sys.executable, "-m", "mkdocs", "serve", "-a", f"127.0.0.1:{port}"], cwd=project,
                                env=build_env(), stdout=out, stderr=subprocess.STDOUT, text=True)


def read_log(log_path) -> str:
    return log_path.read_text(encoding="utf-8", errors="replace")


def fetch_built(url: str, process: subprocess.Popen, log_path, timeout: float = 600) -> str:
    """The page once the server answers. The server holds a request while it rebuilds, and for
    good after a rebuild that failed ("The server will appear stuck"): that fails at once."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"mkdocs serve stopped:\n{read_log(log_path)[-3000:]}")
        if "An error happened during the rebuild" in read_log(log_path):
            pytest.fail(f"the rebuild failed:\n{read_log(log_path)[-3000:]}")
        try:
            with urllib.request.urlopen(url, timeout=20) as answer:
                return LIVERELOAD.sub("", answer.read().decode("utf-8"))
        except OSError:  # not listening yet, or held by a rebuild (a timeout is an OSError)
            time.sleep(0.5)
    pytest.fail(f"{url} did not answer within {timeout} s:\n{read_log(log_path)[-3000:]}")


@pytest.fixture
def project(mini_project):
    project = mini_project  # the small project (tests/site/mini.py): it has this notebook
    for run in (project / ".termbase-cache" / "notebooks").glob(f"{NOTEBOOK}-*"):
        import shutil

        shutil.rmtree(run)  # both processes need this notebook: one executes it, the other waits
    return project


def test_serve_and_a_build_share_the_cache_at_once(project, tmp_path):
    port = free_port()
    log_path = tmp_path / "serve.log"
    serve = start_serve(project, port, log_path)
    try:
        built = mkdocs_build(project, tmp_path / "site")
        page = fetch_built(f"http://127.0.0.1:{port}/da/notebooks/{NOTEBOOK}/", serve, log_path)
    finally:
        serve.terminate()
        serve.wait(timeout=60)
    served_log = read_log(log_path)
    log = built.stdout + built.stderr
    assert built.returncode == 0, log
    assert '<html lang="da"' in page and "jp-OutputArea-output" in page
    executed = re.findall(rf"executed notebook docs/notebooks/{NOTEBOOK}\.py", log + served_log)
    assert len(executed) == 1, f"executed {len(executed)} times:\n{log}\n--- serve ---\n{served_log}"
    assert "Traceback" not in served_log, served_log


LIVERELOAD = re.compile(r"<script>\s*var livereload = function.*?</script>", re.S)
EPOCH = re.compile(r"livereload\(([0-9]+), [0-9]+\)")
STALE_PAGES = ["glossary/", "es/glossary/", "da/glossary/", "glossary/softmax/", "glossary/attention/",
               "es/glossary/softmax/", "da/glossary/attention/", "da/glossary/softmax/"]


def fetch_raw(url: str, referer: str | None = None) -> tuple[str, dict]:
    request = urllib.request.Request(url, headers={"Referer": referer} if referer else {})
    with urllib.request.urlopen(request, timeout=120) as answer:
        return answer.read().decode("utf-8"), dict(answer.headers)


def settled(origin: str, after: int, serve, log_path, until=lambda: True, timeout: float = 900) -> dict:
    """/.termbase/serve.json (termbase/site/serve.py) once the server has seen more than `after`
    saves, every language has rebuilt from the last of them, and `until()` holds."""
    deadline = time.monotonic() + timeout
    while True:
        if serve.poll() is not None:
            pytest.fail(f"mkdocs serve stopped:\n{read_log(log_path)[-3000:]}")
        try:
            state = json.loads(fetch_raw(origin + ".termbase/serve.json")[0])
        except (ValueError, http.client.IncompleteRead) as exc:
            # MkDocs' server opens a file, then takes its length from the path
            # (mkdocs/livereload/__init__.py, _serve_request): a state file replaced in between
            # comes cut to the new one's length, or short of it. Asked again, it is whole.
            state = {"changes": -1, "languages": {}, "unreadable": repr(exc)}
        if state["changes"] > after and all(lang["built"] == state["changes"] for lang in state["languages"].values()) \
                and until():
            return state
        assert time.monotonic() < deadline, f"serve never settled ({state}):\n{read_log(log_path)[-3000:]}"
        time.sleep(0.2)


def test_after_an_edit_serve_shows_it_at_once_and_then_no_stale_page(mini_project, tmp_path):
    """Edit an English entry and a term record while serving. The edited page is written ahead
    of its language's rebuild (its preview), and an open browser is told to reload into it;
    once every language has rebuilt, every page served (the edited one, tooltips and the index
    elsewhere, the other languages) and the preview itself are exactly what a clean build of the
    edited sources writes, and the open page is told to reload into the rebuilt one."""
    project = mini_project
    port = free_port()
    origin = f"http://127.0.0.1:{port}/"
    softmax = origin + "glossary/softmax/"
    log_path = tmp_path / "serve.log"
    serve = start_serve(project, port, log_path)
    try:
        fetch_built(softmax, serve, log_path)
        before = settled(origin, -1, serve, log_path)["changes"]  # the default language's process has built once
        opened = int(EPOCH.search(fetch_raw(softmax)[0])[1])  # the epoch an open browser polls with
        mark = len(read_log(log_path))
        page = project / "docs" / "glossary" / "softmax.en.md"
        page.write_text(page.read_text(encoding="utf-8").replace("## Origin", "## Origin\n\nAn edited sentence.", 1),
                        encoding="utf-8")
        record = project / "termbase" / "data" / "terms" / "softmax.yml"
        text = record.read_text(encoding="utf-8")
        # After the opening quote, if the string has one: the record stays valid YAML.
        edited = re.sub(r'(\nda:\n(?:  .*\n)*?  short: "?)', r"\1Redigeret udgave. ", text, count=1)
        assert edited != text
        record.write_text(edited, encoding="utf-8")
        deadline = time.monotonic() + 600
        while "An edited sentence." not in (preview := fetch_raw(softmax)[0]):
            assert time.monotonic() < deadline, f"the edit never showed:\n{read_log(log_path)[-3000:]}"
            time.sleep(0.05)
        ahead = int(EPOCH.search(preview)[1])
        answered = int(fetch_raw(f"{origin}livereload/{opened}/1", referer=softmax)[0])
        assert answered >= ahead > opened, "the open page was not told to reload into the preview"
        settled(origin, before, serve, log_path,
                until=lambda: "Redigeret udgave." in fetch_raw(origin + "da/glossary/attention/")[0])
        served = {url: LIVERELOAD.sub("", fetch_raw(origin + url)[0]) for url in STALE_PAGES}
        reloaded = int(fetch_raw(f"{origin}livereload/{ahead}/2", referer=softmax)[0])
    finally:
        serve.terminate()
        serve.wait(timeout=60)
    log = read_log(log_path)
    assert reloaded > ahead, "after the rebuild the open page was not told to reload"
    after_edit = log[mark:]
    shown = after_edit.find("termbase: showing glossary/softmax/ ahead of the rebuild")
    assert 0 <= shown < after_edit.find("termbase: the en site is rebuilt and published"), \
        f"the edit was not shown ahead of the rebuild:\n{after_edit[-3000:]}"
    clean = tmp_path / "clean"
    built = mkdocs_build(project, clean, SITE_URL=origin)
    assert built.returncode == 0, built.stdout + built.stderr
    for url, html in [*served.items(), ("glossary/softmax/", LIVERELOAD.sub("", preview))]:
        expected = (clean / url / "index.html").read_text(encoding="utf-8")
        assert html == expected, f"{url} is stale after the rebuild\n{log[-3000:]}"
    assert "Redigeret udgave." in served["da/glossary/attention/"], "the Danish tooltip of softmax is the edited one"


# --- under serve a problem is shown on the pages, never the end of serving (termbase/site/problems.py)

class RecordingServer:
    """What the plugin may use of MkDocs' server: its public `watch`, `root` and `builder`."""

    def __init__(self, root):
        self.watched = []
        self.root = str(root)
        self.builder = None

    def watch(self, path, func=None, *, recursive=True):
        self.watched.append(path)


class FakeSupervisor:
    """The languages' processes as serve.py asks them (termbase/site/supervisor.py): previews
    are answered from another thread, as a real child's reader thread would."""

    def __init__(self):
        self.site = None
        self.listener = self.on_failed = None
        self.added, self.asked, self.previews = [], [], []
        self.started = threading.Event()
        self.requests = {}

    def add(self, lang):
        self.added.append(lang)

    def ask(self, lang, request):
        self.asked.append((lang, request))

    def preview(self, requests):
        self.previews.append(requests)
        for lang in requests:
            threading.Timer(0.01, self.listener.previewed, args=(lang, ["glossary/softmax/"])).start()
        return set(requests)

    def start(self, requests):
        self.requests = {lang: requests(lang) for lang in ("en", "es", "da")}
        self.started.set()

    def close(self):
        pass


def fake_project(root):
    from types import SimpleNamespace

    for part in ("docs/glossary", "data/terms", "snippets", "tests", "overrides"):
        (root / part).mkdir(parents=True)
    (root / "docs" / "glossary" / "softmax.da.md").write_text("# Softmax\n", encoding="utf-8")
    (root / "data" / "terms" / "softmax.yml").write_text("en: {}\n", encoding="utf-8")
    (root / "mkdocs.yml").write_text("site_name: x\n", encoding="utf-8")
    return SimpleNamespace(root=root, docs=root / "docs", terms_dir=root / "data" / "terms", data_dir=root / "data",
                           snippets=root / "snippets", tests=root / "tests", languages=("en", "es", "da"),
                           default_language="en", other_languages=("es", "da"), language_timeout=900.0)


def serving_plugin(tmp_path, project):
    from types import SimpleNamespace

    from termbase.site.plugin import TermbasePlugin

    plugin = TermbasePlugin()
    plugin.build = SimpleNamespace(project=project, site_dir=str(tmp_path / "site"))
    plugin.language_builds = FakeSupervisor()
    plugin.serve_problems = lambda: ["a problem"]
    server = RecordingServer(tmp_path / "site")
    config = SimpleNamespace(config_file_path=str(project.root / "mkdocs.yml"), site_url="http://127.0.0.1:8000/")
    plugin.on_serve(server, config=config, builder=None)
    return plugin, server


def test_serve_watches_everything_the_site_reads(tmp_path):
    from tests.site.sitetools import PROJECT, ROOT

    plugin, server = serving_plugin(tmp_path, PROJECT)
    try:
        for part in ("tests", "snippets", "termbase/data", "overrides", "requirements.txt", "benchmarks/results.json"):
            assert str(ROOT / part) in server.watched, f"{part} is read by the build but not watched"
        assert str(tmp_path / "site" / ".termbase" / "reload") in server.watched, "a published language reloads"
    finally:
        plugin.on_shutdown()


def test_the_builder_shows_a_saved_page_before_the_rebuild_and_a_publish_reloads_the_pages(tmp_path):
    """serve.py through MkDocs' public server API only: `builder` (wrapped) and `watch`."""
    project = fake_project(tmp_path / "project")
    plugin, server = serving_plugin(tmp_path, project)
    fake = plugin.language_builds
    state = tmp_path / "site" / ".termbase" / "serve.json"
    try:
        assert server.builder == plugin.site.builder, "MkDocs calls the wrapped builder"
        assert fake.added == ["en"] and fake.asked[0][0] == "en", "the default language builds once in its process"
        assert fake.asked[0][1]["publish"] == str(tmp_path / "site")
        server.builder()  # nothing saved (a language published): returns, and MkDocs reloads the pages
        assert fake.previews == [] and not fake.started.is_set()
        assert json.loads(state.read_text(encoding="utf-8"))["changes"] == 0
        page = project.docs / "glossary" / "softmax.da.md"
        page.write_text("# Softmax\n\nRedigeret.\n", encoding="utf-8")
        server.builder()
        assert fake.previews == [{"da": {"preview": [str(page)], "publish": str(tmp_path / "site" / "da")}}]
        assert plugin.site.waiting == set(), "the builder returned once the preview was written"
        assert fake.started.wait(60), "a save rebuilds every language"
        en, da = fake.requests["en"], fake.requests["da"]
        assert en["serve"] == ["a problem"] and en["change"] == da["change"] == 1
        assert en["publish"] == str(tmp_path / "site") and set(en["keep"]) == {"es", "da", ".termbase"}
        assert da["publish"] == str(tmp_path / "site" / "da") and da["site_dir"] != da["publish"]
        reload = tmp_path / "site" / ".termbase" / "reload"
        assert not any(reload.iterdir())
        for lang in ("en", "es", "da"):
            plugin.site.built(lang, ("ok", None), fake.requests[lang])
        assert any(reload.iterdir()), "a published language makes MkDocs reload the open pages"
        shown = json.loads(state.read_text(encoding="utf-8"))
        assert shown["changes"] == 1 and {lang["built"] for lang in shown["languages"].values()} == {1}
    finally:
        plugin.on_shutdown()


def test_publish_makes_the_served_folder_what_the_build_wrote_and_keeps_the_other_languages(tmp_path):
    from termbase.site.publish import publish

    built, served = tmp_path / "built", tmp_path / "served"
    for folder, files in {built: {"index.html": "new", "same.html": "same", "glossary/x/index.html": "x"},
                          served: {"index.html": "old", "same.html": "same", "gone/index.html": "gone",
                                   "da/index.html": "dansk", "glossary/x/index.html": "x"}}.items():
        for name, text in files.items():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            (folder / name).write_text(text, encoding="utf-8")
    same = (served / "same.html").stat().st_ino
    assert publish(built, served, {"da"}) == 2  # index.html replaced, gone/index.html removed
    assert (served / "index.html").read_text(encoding="utf-8") == "new" and not (served / "gone").exists()
    assert (served / "same.html").stat().st_ino == same, "an unchanged file is left alone"
    assert (served / "da" / "index.html").read_text(encoding="utf-8") == "dansk", "another language's folder"
    assert publish(built, served, {"da"}) == 0


def test_each_problem_is_shown_on_the_pages_it_is_about_and_named_on_every_other():
    from termbase.core.check import Problem
    from termbase.core.model import TermBase
    from termbase.site import problems, verify
    from tests.site.sitetools import PROJECT

    base = TermBase(PROJECT)
    found = [Problem("docs/glossary/softmax.da.md", 3, "unknown marker '{{ sumary }}'", "did you mean '{{ summary }}'?"),
             Problem("termbase/data/terms/alibi.yml", 4, "'en.short' is still a placeholder", "write it"),
             Problem("tests/test_masks.py", 12, "EXPECTED_OUTPUT is not a dict", "declare it")]
    shown = problems.Problems(base, "da", found, {}, verify.page_blocks(base))
    page = shown.box("docs/glossary/softmax.da.md")
    assert "Denne side har fejl" in page and "docs/glossary/softmax.da.md:3: unknown marker" in page
    draft = shown.box("docs/glossary/alibi.es.md")
    assert "Kladde" in draft and "still a placeholder" in draft, "a record's placeholder marks its entry a draft"
    masks = [p for p, listed in shown.by_page.items() if any("test_masks" in str(x) for x in listed)]
    assert "docs/glossary/causal-mask.da.md" in masks, masks
    other = shown.box("docs/glossary/rotary-position-embedding.da.md")
    assert "Kilderne har 3 fejl" in other and "softmax.da.md:3" in other
    assert problems.Problems(base, "en", [], {}, {}).box("docs/index.en.md") == ""


BROKEN_MARKER = "{{ sumary }}"


def wait_for(url: str, condition, serve, log_path, what: str, timeout: float = 900) -> str:
    """The page at `url` once `condition(page)` holds (a rebuild may be under way), read as its
    text reads: without the <wbr> that code gets at each path separator (see pages.breakable_code)."""
    deadline = time.monotonic() + timeout
    while True:
        page = fetch_built(url, serve, log_path).replace("<wbr>", "")
        if condition(page):
            return page
        assert time.monotonic() < deadline, f"{what} never showed at {url}:\n{read_log(log_path)[-3000:]}"
        time.sleep(0.5)


def test_under_serve_a_failing_check_and_a_failing_block_leave_every_page_answering(mini_project, tmp_path):
    """Break a page (the check fails), a block's EXPECTED_OUTPUT under tests/ (the block fails,
    and loses its Verified note) and scaffold a new entry (a draft): every page still answers;
    the broken pages say why, in their language; the draft is served in every language with
    its placeholders; every other page names the problems; the fixes bring the pages back."""
    project = mini_project
    port = free_port()
    origin = f"http://127.0.0.1:{port}/"
    log_path = tmp_path / "serve.log"
    serve = start_serve(project, port, log_path)
    page = project / "docs" / "glossary" / "softmax.da.md"
    test = project / "tests" / "test_softmax.py"
    good_page, good_test = page.read_text(encoding="utf-8"), test.read_text(encoding="utf-8")
    try:
        first = fetch_built(origin + "glossary/softmax/", serve, log_path)
        assert "termbase-problems" not in first
        page.write_text(good_page.replace("## ", f"{BROKEN_MARKER}\n\n## ", 1), encoding="utf-8")
        assert '"rows sum to 1: True",' in good_test
        test.write_text(good_test.replace('"rows sum to 1: True",', '"rows sum to 1: False",'), encoding="utf-8")
        scaffolded = subprocess.run([sys.executable, "-m", "termbase", "new", "key-padding"], cwd=project,
                                    capture_output=True, text=True, env=build_env())
        assert scaffolded.returncode == 0, scaffolded.stdout + scaffolded.stderr
        # The preview shows the broken marker in place at once; the problems box, with its
        # path:line, comes with the rebuild that runs the check: wait for that.
        da = wait_for(origin + "da/glossary/softmax/", lambda html: "Denne side har fejl" in html, serve,
                      log_path, "the Danish page's problem")
        assert "Denne side har fejl" in da and "docs/glossary/softmax.da.md:3: unknown marker" in da
        en = wait_for(origin + "glossary/softmax/", lambda html: "expected &#x27;rows sum to 1: False&#x27;" in html,
                      serve, log_path, "the failing block")
        assert "This block does not do what its test declares" in en and "This page has problems" in en
        assert "Verified with PyTorch" not in en, "a block that failed is never marked"
        for lang, draft in (("", "Draft"), ("es/", "Borrador"), ("da/", "Kladde")):
            entry = wait_for(f"{origin}{lang}glossary/key-padding/", lambda html: "termbase-draft" in html, serve,
                             log_path, "the draft")
            assert draft in entry and re.search(rf"key-padding\.{lang[:-1] or 'en'}\.md:\d+: unfilled placeholder", entry)
        es = wait_for(origin + "es/glossary/softmax/", lambda html: True, serve, log_path, "es")  # embeds the block too
        assert "Esta página tiene problemas" in es and "rows sum to 1: False" in es
        notices = {"": "The sources have", "es/": "Las fuentes tienen", "da/": "Kilderne har"}
        for url in ["", "glossary/", "glossary/attention/", "es/", "da/", "da/glossary/attention/"]:
            other = wait_for(origin + url, lambda html: True, serve, log_path, url)
            notice = notices[url[:3] if url[:3] in notices else ""]
            assert re.search(rf"{notice} \d+ ", other) and "termbase-problems" in other, f"{url} names no problem"
        page.write_text(good_page, encoding="utf-8")
        test.write_text(good_test, encoding="utf-8")
        for made in ["termbase/data/terms/key-padding.yml", "snippets/key_padding.py", "tests/test_key_padding.py",
                     *(f"docs/glossary/key-padding.{lang}.md" for lang in ("en", "es", "da"))]:
            (project / made).unlink()
        fixed = {url: wait_for(origin + url, lambda html: "termbase-problems" not in html, serve, log_path,
                               "the fixed page") for url in ["glossary/softmax/", "da/glossary/softmax/", "es/"]}
    finally:
        serve.terminate()
        serve.wait(timeout=60)
    log = read_log(log_path)
    assert "An error happened during the rebuild" not in log and "Traceback" not in log, log[-3000:]
    assert "This block does not do what its test declares" not in fixed["glossary/softmax/"]
    assert "Verified with PyTorch" in fixed["glossary/softmax/"], "verified again: the mark is back"
    assert "Softmax" in fixed["da/glossary/softmax/"] and "unknown marker" not in fixed["da/glossary/softmax/"]


# MkDocs' private names (issue 25.2): termbase reaches MkDocs only through its public plugin
# events and the server's public attributes (`builder`, `root`, `watch`). The private build
# functions, the live-reload server's internals and private `Page` attributes appear nowhere.
PRIVATE = ("_populate_page", "_build_page", "_serve_request", "_epoch_cond", "_visible_epoch", "_wanted_epoch",
           "_inject_js_into_html", "_build_loop", "_want_rebuild", "_rebuild_cond", "_watched_paths",
           "_title_from_render", "_title", "_current_page", "_ExtractTitleTreeprocessor", "_set_canonical_url",
           "_set_edit_url", "_log_poll_request", "_timestamp")


def test_termbase_uses_no_private_mkdocs_name():
    from tests.site.sitetools import ROOT

    found = {}
    for path in sorted((ROOT / "termbase").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        used = sorted(name for name in PRIVATE if re.search(rf"(?<![\w]){name}\b", text))
        if used:
            found[path.relative_to(ROOT).as_posix()] = used
    assert found == {}, f"private MkDocs names used: {found}"
