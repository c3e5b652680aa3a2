"""`mkdocs serve` as a contributor runs it: it shares the one cache with a build running at the
same time (a notebook both need is executed once, by whichever gets there first)."""

import re
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

from tests.site.sitetools import build_env, copy_project, mkdocs_build

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
def project(tmp_path):
    project = copy_project(tmp_path / "project")
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
# The settled pages are asked for first: each is held until its language has rebuilt.
STALE_PAGES = ["glossary/", "es/glossary/", "da/glossary/", "glossary/softmax/", "glossary/attention/",
               "es/glossary/softmax/", "da/glossary/attention/", "da/glossary/softmax/"]


def fetch_raw(url: str, referer: str | None = None) -> tuple[str, dict]:
    request = urllib.request.Request(url, headers={"Referer": referer} if referer else {})
    with urllib.request.urlopen(request, timeout=120) as answer:
        return answer.read().decode("utf-8"), dict(answer.headers)


def test_after_an_edit_serve_shows_it_at_once_and_then_no_stale_page(tmp_path):
    """Edit an English entry and a term record while serving. The edited page is served (and an
    open browser told to reload into it) before the rebuild ends, from its preview; once the
    rebuild settles, every page served (the edited one, tooltips and the index elsewhere, the
    other languages) and the preview itself are exactly what a clean build of the edited
    sources writes, and the open page is told to reload into the rebuilt one."""
    project = copy_project(tmp_path / "project")
    port = free_port()
    origin = f"http://127.0.0.1:{port}/"
    softmax = origin + "glossary/softmax/"
    log_path = tmp_path / "serve.log"
    serve = start_serve(project, port, log_path)
    try:
        fetch_built(softmax, serve, log_path)
        opened = int(EPOCH.search(fetch_raw(softmax)[0])[1])  # the epoch an open browser polls with
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
        while "An edited sentence." not in (shown := fetch_raw(softmax))[0]:
            assert time.monotonic() < deadline, f"the edit never showed:\n{read_log(log_path)[-3000:]}"
            time.sleep(0.05)
        preview, headers = shown
        assert headers.get("X-Termbase-Preview") == "1", f"the edit was not shown ahead of the rebuild: {headers}"
        ahead = int(EPOCH.search(preview)[1])
        answered = int(fetch_raw(f"{origin}livereload/{opened}/1", referer=softmax)[0])
        assert answered == ahead > opened, "the open page was not told to reload into the preview"
        served = {url: fetch_built(origin + url, serve, log_path) for url in STALE_PAGES}
        reloaded = int(fetch_raw(f"{origin}livereload/{ahead}/2", referer=softmax)[0])
        rebuilt, headers = fetch_raw(softmax)
    finally:
        serve.terminate()
        serve.wait(timeout=60)
    log = read_log(log_path)
    assert "X-Termbase-Preview" not in headers and reloaded == int(EPOCH.search(rebuilt)[1]) > ahead, \
        "after the rebuild the preview was still served, or the open page was not told to reload"
    assert "termbase: showing glossary/softmax/" in log, log[-3000:]
    clean = tmp_path / "clean"
    built = mkdocs_build(project, clean, SITE_URL=origin)
    assert built.returncode == 0, built.stdout + built.stderr
    for url, html in [*served.items(), ("glossary/softmax/", LIVERELOAD.sub("", preview))]:
        expected = (clean / url / "index.html").read_text(encoding="utf-8")
        assert html == expected, f"{url} is stale after the rebuild\n{log[-3000:]}"
    assert "Redigeret udgave." in served["da/glossary/attention/"], "the Danish tooltip of softmax is the edited one"
